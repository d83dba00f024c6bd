"""`rewardlab select` in-process through `main(argv)`."""

from __future__ import annotations

import json

import pytest

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
    for points in payload["curves"].values():  # each point names its budget and its problems
        assert [p["n"] for p in points] == [1, 2, 3]
        assert {p["problems"] for p in points} == {2}
    assert (out / "curves.html").exists()
    assert "wrote" in capsys.readouterr().out


def test_curves_progress_bar_reports_problems_at_every_budget(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["select", "curves", str(_file(tmp_path)), "-o", str(out), "--equivalence", "exact", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "curves of 2 problems" in err and "problems/s" in err


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


@pytest.mark.parametrize(("option", "value"), [("--max-n", "-2"), ("--max-subsets", "0")])
def test_curves_checks_its_options_as_curve_options_does(tmp_path, capsys, option, value):
    # the command builds CurveOptions from its values, so it refuses what the class refuses
    assert main(["select", "curves", str(_file(tmp_path)), "-o", str(tmp_path / "c"), option, value]) == 2
    assert f"invalid option: {option[2:].replace('-', '_')}" in capsys.readouterr().err


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


def _hostile_file(tmp_path):
    good = {"pred": ["1", "2", "2"], "pred_score": [3.0, -1.0, -2.0], "score": [True, False, False]}
    lines = [
        json.dumps(good),
        "{not json",
        "[1, 2, 3]",
        json.dumps({**good, "pred_score": ["x", 1.0, 2.0]}),  # a string where a number belongs
        json.dumps({**good, "pred_score": [1.0, 2.0]}),  # one score short
        json.dumps({**good, "pred": None}),
        json.dumps({"pred": ["4", "4"], "score": [False, True]}),  # no scores although other rows have them
        json.dumps({**good, "pred_score": [1e308, float("inf"), -1.0]}),  # JSON's Infinity: a broken row
        json.dumps({"pred": ["7", "8", "7"], "pred_score": [0.5, 0.5, 0.1], "score": [1, 0, 1]}),
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_pick_writes_an_error_row_for_every_unreadable_line_and_picks_the_rest(tmp_path, capsys):
    path, out = _hostile_file(tmp_path), tmp_path / "picks.jsonl"
    assert main(["select", "pick", str(path), "-m", "best_of_n", "-o", str(out), "--equivalence", "exact"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 10))  # every line of the file, in order
    errors = {r["line"]: r["error"] for r in rows if r["status"] == "error"}
    assert sorted(errors) == [2, 3, 4, 5, 6, 7, 8]
    assert "malformed JSON" in errors[2] and "JSON object" in errors[3]
    assert "'pred_score' holds 'x'" in errors[4] and "2 items for 3 candidates" in errors[5]
    assert "'pred' must be a list" in errors[6] and "missing here" in errors[7]
    assert "holds inf; expected a finite number" in errors[8]
    assert all(r["error_kind"] == "invalid_input" and r["chosen"] is None for r in rows if r["status"] == "error")
    ok = [r for r in rows if r["status"] == "ok"]
    assert [(r["problem"], r["chosen"], r["credit"]) for r in ok] == [(0, 0, 1.0), (1, 0, 0.5)]  # the last row's tie: 1 and 0
    assert len({r["spec_hash"] for r in rows}) == 1
    printed = capsys.readouterr().out
    assert "7 rows could not be read" in printed and "7 error rows" in printed


def test_curves_record_the_rows_they_left_out(tmp_path):
    out = tmp_path / "out"
    assert main(["select", "curves", str(_hostile_file(tmp_path)), "-o", str(out), "--equivalence", "exact", "--methods", "majority"]) == 0
    payload = json.loads((out / "curves.json").read_text())
    assert [u["line"] for u in payload["unreadable"]] == [2, 3, 4, 5, 6, 7, 8]
    assert "rows left out" in (out / "curves.html").read_text()


def test_a_file_with_no_readable_row_is_an_error_naming_it(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text("{bad\n[1]\n")
    assert main(["select", "pick", str(path), "-o", str(tmp_path / "p.jsonl")]) != 0
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "2 could not be read" in err


@pytest.fixture
def fresh_default_pool(monkeypatch):
    """A new process-wide sympy pool for this test (other tests may have started the shared one),
    and the pool's launch count each time the CLI reads a candidate file."""
    from rewardlab.select import candidates as candidates_module
    from rewardlab.verify.math import worker

    monkeypatch.setattr(worker, "_DEFAULT", None)
    launched_at_read: list[int] = []
    read = candidates_module.load_candidates

    def recording_read(*args, **kwargs):
        launched_at_read.append(worker.default_pool().launched)
        return read(*args, **kwargs)

    monkeypatch.setattr(candidates_module, "load_candidates", recording_read)
    yield launched_at_read
    worker.default_pool().close()


@pytest.mark.parametrize("command", ["pick", "curves"])
def test_math_votes_launch_the_sympy_worker_before_the_file_is_read(tmp_path, fresh_default_pool, command):
    from rewardlab.verify.math import worker

    out = ["-o", str(tmp_path / ("picks.jsonl" if command == "pick" else "curves"))]
    method = ["-m", "majority"] if command == "pick" else ["--methods", "majority"]
    assert main(["select", command, str(_file(tmp_path)), *method, *out, "--equivalence", "math"]) == 0
    assert fresh_default_pool == [1]  # launched before the read, so sympy imports meanwhile
    assert worker.default_pool().launched == 1  # and that one worker served the votes


@pytest.mark.parametrize(
    "argv",
    [
        ["pick", "-m", "majority", "--equivalence", "exact"],
        ["pick", "-m", "best_of_n"],
        ["curves", "--methods", "best_of_n,oracle"],
    ],
    ids=["exact-votes", "best-of-n-pick", "curves-without-votes"],
)
def test_no_sympy_worker_is_launched_when_nothing_votes_by_maths(tmp_path, fresh_default_pool, argv):
    from rewardlab.verify.math import worker

    command, *options = argv
    out = ["-o", str(tmp_path / ("picks.jsonl" if command == "pick" else "curves"))]
    assert main(["select", command, str(_file(tmp_path)), *options, *out]) == 0
    assert fresh_default_pool == [0] and worker.default_pool().launched == 0


def test_pick_counts_a_pick_without_a_label_as_not_right_and_says_so(tmp_path, capsys):
    # problem 1's majority class holds a candidate without a label: its credit is unknown (null
    # in its row); the accuracy counts it as not right, as the curves and `rewardlab eval` do
    path = tmp_path / "c.jsonl"
    rows = [{"pred": ["1", "2", "1"], "pred_score": [0.9, 0.1, 0.5], "score": [True, False, None]},
            {"pred": ["5", "6", "5"], "pred_score": [0.3, 0.8, 0.2], "score": [True, False, True]}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["select", "pick", str(path), "-m", "majority", "--equivalence", "exact", "-o", str(tmp_path / "o.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "accuracy 0.5000 (1 pick without a label counted as not right: a lower bound)" in out
    picked = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [p["credit"] for p in picked] == [None, 1.0]
