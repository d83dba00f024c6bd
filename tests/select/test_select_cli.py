"""`rewardlab select` in-process through `main(argv)`."""

from __future__ import annotations

import json

from rewardlab.cli.main import main


def _file(tmp_path):
    rows = [
        {"pred": ["1", "2", "2"], "pred_score": [3.0, -1.0, -2.0], "score": [True, False, False], "code": ["x"] * 3},
        {"pred": ["5", "5", "4"], "pred_score": [0.0, 1.0, 2.0], "score": [True, True, False], "code": ["x y"] * 3},
    ]
    path = tmp_path / "cands.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_curves_writes_json_and_html(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["select", "curves", str(_file(tmp_path)), "-o", str(out), "--equivalence", "exact"]) == 0
    payload = json.loads((out / "curves.json").read_text())
    assert payload["curves"]["majority"][-1]["estimate"] == 0.5  # problem 1 votes "2" (wrong), problem 2 "5"
    assert payload["curves"]["best_of_n"][-1]["estimate"] == 0.5
    assert (out / "curves.html").exists()
    assert "wrote" in capsys.readouterr().out


def test_pick_writes_one_stamped_row_per_problem(tmp_path):
    out = tmp_path / "picks.jsonl"
    assert main(["select", "pick", str(_file(tmp_path)), "-m", "weighted", "-o", str(out), "--equivalence", "exact"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["answer"] for r in rows] == ["1", "5"]
    assert all(r["spec_hash"] and r["rewardlab_version"] for r in rows)


def test_bad_method_is_a_usage_error(tmp_path):
    assert main(["select", "pick", str(_file(tmp_path)), "-m", "psychic", "-o", str(tmp_path / "p.jsonl")]) == 2


def test_missing_file_is_an_error_naming_it(tmp_path, capsys):
    assert main(["select", "curves", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl" in capsys.readouterr().err


def test_simulate_prints_every_search_method(capsys):
    assert main(["select", "simulate", "--problems", "8", "--budget", "4", "--width", "2", "--expand", "2"]) == 0
    out = capsys.readouterr().out
    for method in ("best-of-4", "majority@4", "beam 2x2", "dvts 2x2", "mcts 4x3", "best-first", "early rejection@4", "adaptive vote<=4"):
        assert method in out


def test_simulate_refuses_an_empty_budget():
    assert main(["select", "simulate", "--budget", "0"]) == 2


MATH_SPEC = '[reward]\nname = "maths"\n[[reward.components]]\nname = "answer"\nuse = "math.answer"\n'


def test_curves_with_a_reward_spec_score_the_responses(tmp_path, capsys):
    rows = [
        {"question": "1+1?", "gt": "2", "code": ["so \\boxed{3}", "so \\boxed{2}"], "pred": ["3", "2"], "score": [False, True]},
        {"question": "bad gold", "gt": "\\frac{", "code": ["\\boxed{1}", "\\boxed{1}"], "pred": ["1", "1"], "score": [False, False]},
    ]
    data = tmp_path / "c.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "maths.toml"
    spec.write_text(MATH_SPEC)
    out = tmp_path / "out"
    argv = ["select", "curves", str(data), "-o", str(out), "--reward", str(spec), "--scores", "", "--methods", "best_of_n"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "2 candidates got an error result" in printed  # the broken gold answer: no score, not 0
    payload = json.loads((out / "curves.json").read_text())
    assert payload["curves"]["best_of_n"][-1]["estimate"] == 0.5  # problem 1 right, problem 2 abstains
    assert payload["config"]["scores"]["reward"] == "maths"
