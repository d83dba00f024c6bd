"""Hostile data files: a row that cannot be read is listed and left out, every other row is
evaluated, and the numbers equal those of a file holding only the good rows."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rewardlab import reward
from rewardlab.cli.main import main
from rewardlab.core import RewardResult
from rewardlab.errors import InputError
from rewardlab.evaluate.audit.report import UNREADABLE, to_json
from rewardlab.evaluate.audit.run_audit import audit_reward
from rewardlab.evaluate.datasets import read_candidates, read_pairs, read_scored_rollouts
from rewardlab.evaluate.run_eval import run_eval

QWEN = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "qwen25-math-cot-100.jsonl"
AUDIT_SPEC = {"reward": {"name": "weak_contains", "components": [{"name": "contains", "use": "text.contains"}]}}


@reward("test.unreadable.length")
def by_length(sample):
    """Longer responses score higher (so every pair has a winner)."""
    return float(len(sample.response_text))


@reward("test.unreadable.prm")
def step_prm(sample):
    """Each step scores the number it starts with."""
    steps = tuple(float(s.split()[0]) for s in sample.steps)
    return RewardResult.ok(min(steps), steps=steps)


def hostile(tmp_path: Path, name: str, good: list[dict], bad: dict[int, str]) -> tuple[Path, Path]:
    """`name` with the `bad` raw lines at the given 1-based line numbers between the good rows,
    and `good-<name>` with the good rows alone."""
    lines = [json.dumps(row) for row in good]
    for number in sorted(bad):
        lines.insert(number - 1, bad[number])
    mixed = tmp_path / name
    mixed.write_text("\n".join(lines) + "\n")
    clean = tmp_path / f"good-{name}"
    clean.write_text("".join(json.dumps(row) + "\n" for row in good))
    return mixed, clean


def comparable(report) -> dict:
    """The report's numbers as JSON, without what names the file."""
    return json.loads(to_json(report.numbers))


def assert_listed(report, errors: list[InputError], path: Path, expected: dict[int, str]) -> None:
    """Every bad line is in the report and was handed to on_error, with its reason."""
    assert [r["line"] for r in report.unreadable] == sorted(expected)
    for row in report.unreadable:
        assert expected[row["line"]] in row["error"], row
    assert sorted(exc.line for exc in errors) == sorted(expected)
    assert all(exc.source == str(path) for exc in errors)
    key, value = report.summary[0]
    assert key == UNREADABLE and value.startswith(f"{len(expected)} — line {min(expected)}: ")


# -- candidate sets, on the real Qwen2.5-Math file ---------------------------------------------
@pytest.fixture
def qwen_rows():
    if not QWEN.exists():
        pytest.skip(f"shared data file {QWEN} is absent (see ../shared/data/SOURCES.md)")
    with QWEN.open() as f:
        return [json.loads(line) for _, line in zip(range(12), f, strict=False)]


def _broken_candidates(rows: list[dict]) -> dict[int, str]:
    wrong_type = {**rows[0], "pred_score": [["high"]] * len(rows[0]["code"])}
    short_labels = {**rows[1], "score": rows[1]["score"][:-1]}
    infinite = {**rows[2], "pred_score": [[math.inf]] * len(rows[2]["code"])}
    return {2: "{bad", 5: "[1, 2, 3]", 7: json.dumps(wrong_type), 9: json.dumps(short_labels), 13: json.dumps(infinite)}


def test_candidate_set_keeps_the_good_rows_of_a_hostile_qwen_file(tmp_path, qwen_rows):
    mixed, clean = hostile(tmp_path, "cands.jsonl", qwen_rows, _broken_candidates(qwen_rows))
    errors: list[InputError] = []
    report = run_eval(None, mixed, on_error=errors.append)
    expected = run_eval(None, clean)
    assert report.numbers["n_problems"] == len(qwen_rows) == 12
    assert comparable(report) == comparable(expected)
    assert report.summary[1:] == expected.summary  # the same numbers, after the line naming the left-out rows
    assert_listed(report, errors, mixed, {2: "malformed JSON", 5: "expected a JSON object, got list",
                                          7: "'pred_score' holds 'high'", 9: "'score' must be a list of 8 items (one per response), got 7 items",
                                          13: "expected a finite number"})


def test_candidate_reader_is_strict_without_on_error(tmp_path, qwen_rows):
    mixed, _ = hostile(tmp_path, "cands.jsonl", qwen_rows, _broken_candidates(qwen_rows))
    with pytest.raises(InputError, match=r"cands\.jsonl:2: malformed JSON"):
        read_candidates(mixed)
    with pytest.raises(InputError, match=r"cands\.jsonl:2: malformed JSON"):
        run_eval(None, mixed)


def test_candidate_label_that_is_not_true_or_false_is_a_bad_row(tmp_path, qwen_rows):
    row = {**qwen_rows[0], "score": ["yes"] * len(qwen_rows[0]["code"])}  # bool("yes") was True before
    mixed, _ = hostile(tmp_path, "cands.jsonl", qwen_rows[1:3], {2: json.dumps(row)})
    with pytest.raises(InputError, match=r"cands\.jsonl:2: column 'score' holds 'yes'; expected true/false"):
        read_candidates(mixed)


def test_candidate_row_missing_a_column_the_others_have_is_a_bad_row_not_a_lost_column(tmp_path, qwen_rows):
    row = {k: v for k, v in qwen_rows[0].items() if k != "score"}
    mixed, _ = hostile(tmp_path, "cands.jsonl", qwen_rows[1:4], {3: json.dumps(row)})
    errors: list[InputError] = []
    cands = read_candidates(mixed, on_error=errors.append)
    assert cands.labels is not None and len(cands.labels) == 3 * 8  # the labels column stays
    assert [(e.line, e.reason) for e in errors] == [(3, "column 'score' is missing here but present in other rows")]


# -- preference pairs ----------------------------------------------------------------------------
PAIRS = [{"prompt": f"q{i}", "chosen": "a" * n, "rejected": "b" * m, "subset": s}
         for i, (n, m, s) in enumerate([(10, 5, "math-prm"), (3, 8, "math-prm"), (6, 2, "hep-python"),
                                        (9, 1, "hep-python"), (4, 7, "alpacaeval-easy"), (8, 2, "alpacaeval-easy")])]


def test_pairs_keep_the_good_rows_of_a_hostile_file(tmp_path):
    bad = {1: '{"prompt": "q", "chosen": ', 4: '"just a string"', 6: json.dumps({"prompt": "q", "chosen": 5, "rejected": "b"}),
           8: json.dumps({"prompt": "q", "chosen": [1, 2], "rejected": "b"}), 10: json.dumps({"prompt": "q", "chosen": "a"})}
    mixed, clean = hostile(tmp_path, "pairs.jsonl", PAIRS, bad)
    errors: list[InputError] = []
    report = run_eval(by_length, mixed, on_error=errors.append)
    expected = run_eval(by_length, clean)
    assert report.numbers["n_pairs"] == len(PAIRS)
    assert comparable(report) == comparable(expected)
    assert_listed(report, errors, mixed, {1: "malformed JSON", 4: "got str", 6: "'chosen' must be a string or a list of chat messages, got a int",
                                          8: "'chosen' must be a string or a list of chat messages, got a list",
                                          10: "'rejected' must be a string or a list of chat messages, got missing"})
    with pytest.raises(InputError, match=r"pairs\.jsonl:1: malformed JSON"):
        read_pairs(mixed)


# -- scored rollouts -----------------------------------------------------------------------------
def _rollout(i: int, score: object, status: str = "ok") -> dict:
    return {"prompt": f"p{i // 2}", "response": "x" * (5 + 3 * i), "group": f"g{i // 2}", "reward": score, "reward_status": status}


def test_scored_rollouts_keep_the_good_rows_of_a_hostile_file(tmp_path):
    good = [_rollout(i, s) for i, s in enumerate([1.0, 0.0, 0.5, 0.5, 1.0, 0.25])]
    bad = {2: "{nope", 3: "42", 5: json.dumps(_rollout(9, "0.5")), 7: json.dumps(_rollout(9, math.inf)),
           8: json.dumps({k: v for k, v in _rollout(9, 1.0).items() if k != "reward_status"}),
           11: json.dumps({**_rollout(9, 1.0), "steps": "one step"}), 12: json.dumps(_rollout(9, 10**400))}
    mixed, clean = hostile(tmp_path, "scored.jsonl", good, bad)
    errors: list[InputError] = []
    report = run_eval(None, mixed, mode="rollouts", on_error=errors.append)
    expected = run_eval(None, clean, mode="rollouts")
    assert report.numbers["n"] == len(good)
    assert comparable(report) == comparable(expected)
    assert_listed(report, errors, mixed, {2: "malformed JSON", 3: "got int", 5: "finite number, got '0.5'",
                                          7: "finite number, got inf", 8: "no `reward_status`", 11: "steps",
                                          12: "finite number, got 1000"})
    with pytest.raises(InputError, match=r"scored\.jsonl:2: malformed JSON"):
        read_scored_rollouts(mixed)


# -- benchmark modes -----------------------------------------------------------------------------
def test_rmbench_row_with_the_wrong_number_of_styles_is_left_out(tmp_path):
    good = [{"prompt": f"q{i}", "chosen": ["a" * (5 + i)] * 3, "rejected": ["b" * (3 + 2 * i)] * 3, "domain": d}
            for i, d in enumerate(["math", "code", "math", "chat"])]
    bad = {2: json.dumps({"prompt": "q", "chosen": ["a", "aa"], "rejected": ["b"] * 3}), 4: "[]"}
    mixed, clean = hostile(tmp_path, "rmbench.jsonl", good, bad)
    errors: list[InputError] = []
    report = run_eval(by_length, mixed, mode="rmbench", on_error=errors.append)
    assert comparable(report) == comparable(run_eval(by_length, clean, mode="rmbench"))
    assert_listed(report, errors, mixed, {2: "'chosen' must hold 3 responses, got 2", 4: "got list"})


def test_processbench_row_with_a_bad_label_is_left_out(tmp_path):
    good = [{"problem": f"p{i}", "steps": ["0.9 a", "0.2 b", "0.8 c"], "label": label, "subset": "math"}
            for i, label in enumerate([1, -1, 1, -1, 0])]
    bad = {3: json.dumps({"problem": "p", "steps": ["0.9 a"], "label": 5}), 5: json.dumps({"problem": "p", "steps": "0.9 a", "label": -1})}
    mixed, clean = hostile(tmp_path, "pb.jsonl", good, bad)
    errors: list[InputError] = []
    report = run_eval(step_prm, mixed, on_error=errors.append)
    assert report.numbers["mode"] == "process"
    assert comparable(report) == comparable(run_eval(step_prm, clean))
    assert_listed(report, errors, mixed, {3: "label must be -1 or a step index below 1", 5: "'steps' must be a non-empty list"})


def test_judge_rows_of_the_rarer_judgment_count_are_left_out_when_lenient(tmp_path):
    good = [{"source": "livecodebench", "label": "A>B", "judgments": [{"decision": d1}, {"decision": d2}]}
            for d1, d2 in [("A>B", "A>B"), ("B>A", "A>B"), ("A=B", "A>B")]]
    bad = {2: json.dumps({"source": "livecodebench", "label": "A>B", "judgments": [{"decision": "A>B"}]}),
           4: json.dumps({"source": "mmlu-pro", "label": "A>B", "judgments": [{"decision": "A>>B"}, None]})}
    mixed, clean = hostile(tmp_path, "judge.jsonl", good, bad)
    errors: list[InputError] = []
    report = run_eval(None, mixed, on_error=errors.append)
    assert comparable(report) == comparable(run_eval(None, clean))
    assert_listed(report, errors, mixed, {2: "holds 1 judgment(s) where 3 other rows hold 2", 4: "'A>>B'"})
    with pytest.raises(InputError, match=r"judge\.jsonl:4.*A>>B"):
        run_eval(None, mixed)


# -- nothing readable ----------------------------------------------------------------------------
def test_a_file_of_only_bad_json_says_how_many_rows_could_not_be_read(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("{a\n{b\n[1]\n")
    errors: list[InputError] = []
    with pytest.raises(InputError, match=r"bad\.jsonl: no rows.*\(3 could not be read\)"):
        run_eval(by_length, path, mode="pairs", on_error=errors.append)


def test_a_file_of_only_broken_rows_says_how_many_rows_could_not_be_read(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("{a\n" + json.dumps({"chosen": 1, "rejected": "b"}) + "\n" + json.dumps({"chosen": "a"}) + "\n")
    errors: list[InputError] = []
    with pytest.raises(InputError, match=r"pairs\.jsonl: no row could be read \(3 rows could not be read\)"):
        read_pairs(path, on_error=errors.append)
    assert [e.line for e in errors] == [1, 2, 3]


# -- audit and the command line ------------------------------------------------------------------
MATHS = [{"prompt": "2+2?", "response": "2 + 2 = 4, so \\boxed{4}", "reference": "4", "correct": True},
         {"prompt": "3*3?", "response": "3 * 3 = 6, so \\boxed{6}", "reference": "9", "correct": False},
         {"prompt": "10-3?", "response": "10 - 3 = 7, so \\boxed{7}", "reference": "7", "correct": True},
         {"prompt": "5+5?", "response": "5 + 5 = 11, so \\boxed{11}", "reference": "10", "correct": False}]


def test_audit_keeps_the_good_rows_of_a_hostile_file(tmp_path):
    bad = {1: "{oops", 4: "null", 6: json.dumps({"prompt": "q", "response": 12, "reference": "1"})}
    mixed, clean = hostile(tmp_path, "maths.jsonl", MATHS, bad)
    errors: list[InputError] = []
    report = audit_reward(AUDIT_SPEC, mixed, label_field="correct", on_error=errors.append)
    expected = audit_reward(AUDIT_SPEC, clean, label_field="correct")
    assert report.numbers["n_samples"] == len(MATHS)
    assert report.numbers["flagged_probes"] == expected.numbers["flagged_probes"] == ["hedge"]
    assert report.numbers["probes"] == expected.numbers["probes"]
    assert report.numbers["crosschecks"] == expected.numbers["crosschecks"]
    assert_listed(report, errors, mixed, {1: "malformed JSON", 4: "got NoneType", 6: "response"})
    with pytest.raises(InputError, match=r"maths\.jsonl:1: malformed JSON"):
        audit_reward(AUDIT_SPEC, mixed)


def test_audit_leaves_unlabelled_samples_out_of_the_label_check_only(tmp_path):
    unlabelled = [{k: v for k, v in row.items() if k != "correct"} for row in MATHS[:2]]
    rows = [*MATHS, *unlabelled, {**MATHS[0], "correct": None}]
    path = tmp_path / "maths.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = audit_reward(AUDIT_SPEC, path, label_field="correct")
    labelled = audit_reward(AUDIT_SPEC, hostile(tmp_path, "clean.jsonl", MATHS, {})[1], label_field="correct")
    assert report.numbers["n_samples"] == len(rows) and report.numbers["unlabelled"] == 3
    check, want = report.numbers["crosschecks"][0], labelled.numbers["crosschecks"][0]
    assert check["both_scored"] == want["both_scored"] and check["confusion"] == want["confusion"]  # unlabelled: not read as wrong
    assert ("unlabelled samples", f"3 of {len(rows)} (no 'correct'; left out of the label cross-check)") in report.summary
    report.write(tmp_path / "report")  # the label plots draw the unlabelled apart


def test_audit_refuses_labels_no_sample_has_and_labels_that_are_not_booleans(tmp_path):
    path = tmp_path / "maths.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MATHS))
    with pytest.raises(InputError, match="no sample has a label in 'verdict'"):
        audit_reward(AUDIT_SPEC, path, label_field="verdict")
    path.write_text("".join(json.dumps({**r, "correct": "yes"}) + "\n" for r in MATHS))
    with pytest.raises(InputError, match="label field 'correct' is 'yes'; expected true/false or 1/0"):
        audit_reward(AUDIT_SPEC, path, label_field="correct")


def test_cli_eval_prints_and_records_the_rows_it_left_out(tmp_path, qwen_rows, capsys):
    mixed, _ = hostile(tmp_path, "cands.jsonl", qwen_rows, _broken_candidates(qwen_rows))
    out = tmp_path / "eval"
    assert main(["eval", "--data", str(mixed), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "5 rows could not be read and are left out; first errors:" in printed
    assert f"{mixed}:2: malformed JSON" in printed and f"{mixed}:13: column 'pred_score'" in printed
    payload = json.loads((out / "report.json").read_text())
    assert [r["line"] for r in payload["unreadable"]] == [2, 5, 7, 9, 13]
    assert payload["n_problems"] == 12
    assert payload["summary"][UNREADABLE].startswith("5 — line 2: malformed JSON")
    page = (out / "report.html").read_text()
    assert UNREADABLE in page and "line 9: column &#39;score&#39; must be a list of 8 items (one per response), got 7 items" in page


def test_cli_audit_prints_and_records_the_rows_it_left_out(tmp_path, capsys):
    spec = tmp_path / "weak.toml"
    spec.write_text('[reward]\nname = "weak"\n[[reward.components]]\nname = "contains"\nuse = "text.contains"\n')
    mixed, _ = hostile(tmp_path, "maths.jsonl", MATHS, {3: "{oops"})
    out = tmp_path / "audit"
    assert main(["audit", str(spec), "--data", str(mixed), "-o", str(out)]) == 0
    assert f"1 rows could not be read and are left out; first errors:\n  {mixed}:3: malformed JSON" in capsys.readouterr().out
    payload = json.loads((out / "report.json").read_text())
    assert payload["unreadable"] == [{"line": 3, "error": payload["unreadable"][0]["error"]}]
    assert payload["unreadable"][0]["error"].startswith("malformed JSON") and payload["n_samples"] == 4


def test_a_clean_file_reports_no_unreadable_rows(tmp_path):
    _, clean = hostile(tmp_path, "pairs.jsonl", PAIRS, {})
    report = run_eval(by_length, clean, on_error=lambda exc: None)
    assert report.unreadable == [] and report.payload()["unreadable"] == []
    assert all(key != UNREADABLE for key, _ in report.summary)


def test_cli_with_no_readable_row_prints_every_reason_then_the_count(tmp_path, qwen_rows, capsys):
    spec = tmp_path / "weak.toml"
    spec.write_text('[reward]\nname = "weak"\n[[reward.components]]\nname = "contains"\nuse = "text.contains"\n')
    short = {**qwen_rows[0], "pred": qwen_rows[0]["pred"][:3]}
    data = tmp_path / "cands.jsonl"
    data.write_text("{bad\n" + json.dumps(short) + "\n")
    assert main(["audit", str(spec), "--data", str(data), "--candidates", "-o", str(tmp_path / "audit")]) == 1
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "2 rows could not be read and are left out" in printed
    assert f"{data}:1: malformed JSON" in printed and f"{data}:2: column 'pred' must be a list of 8 items" in printed
    assert "no row could be read (2 rows could not be read)" in printed
    assert not (tmp_path / "audit" / "report.json").exists()
