"""`rewardlab eval` on benchmark-shaped files: best-of-k, RM-Bench grid, ProcessBench."""

from __future__ import annotations

import json

import pytest

from rewardlab import RewardResult, reward
from rewardlab.errors import InputError
from rewardlab.evaluate.run_eval import run_eval


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def assert_writes_strict_json(report, tmp_path):
    html, js = report.write(tmp_path / "out")
    payload = json.loads(js.read_text())  # strict JSON: NaN would have failed to serialise
    assert payload["stamps"]["data_hash"] and payload["mode"] == report.numbers["mode"]
    assert report.title in html.read_text()


@reward("test.mentions_correct", range=(0, 1))
def mentions_correct(sample):
    return float("correct" in sample.response_text)


@reward("test.length")
def length(sample):
    return float(len(sample.response_text))


def test_bestofk_ties_and_length_baseline(tmp_path):
    rows = [
        {"prompt": "q", "chosen": ["correct"], "rejected": ["a", "b", "c"], "subset": "Math"},  # 1
        {"prompt": "q", "chosen": ["plain"], "rejected": ["x", "y", "z"], "subset": "Math"},  # 4-way tie: 1/4
        {"prompt": "q", "chosen": "nope", "rejected": ["correct", "y", "z"], "subset": "Focus"},  # 0
    ]
    report = run_eval(mentions_correct, write_jsonl(tmp_path / "rb2.jsonl", rows))
    assert_writes_strict_json(report, tmp_path)
    n = report.numbers
    assert n["mode"] == "bestofk"
    assert n["subsets"]["Math"]["accuracy"].estimate == pytest.approx((1 + 0.25) / 2)
    assert n["subsets"]["Focus"]["accuracy"].estimate == 0.0
    assert n["score"] == pytest.approx((0.625 + 0.0) / 2)  # mean over subsets
    # length baseline: "correct" (7) > "a" (1) -> 1; "plain" (5) > "x" -> 1; "nope" (4) < "correct" -> 0
    assert n["subsets"]["Math"]["length_baseline"].longer == 1.0
    assert n["subsets"]["Math"]["length_baseline"].shorter == 0.0


def test_rmbench_grid_for_a_length_loving_reward(tmp_path):
    # lengths: chosen (2, 9, 18), rejected (4, 12, 23): each rejected is longer than the chosen of
    # its own style but shorter than the chosen of the next style, so a length reward wins every
    # easy cell (decorated chosen vs plainer rejected) and no normal or hard cell
    chosen = ["ok", "okay okay", "**okay okay okay**"]
    rejected = ["bad!", "bad bad bad!", "**bad bad bad bad bad**"]
    rows = [{"prompt": "q", "chosen": chosen, "rejected": rejected, "domain": "chat"}]
    report = run_eval(length, write_jsonl(tmp_path / "rm.jsonl", rows))
    assert_writes_strict_json(report, tmp_path)
    grid = report.numbers["grids"]["chat"]["reward"]
    assert report.numbers["mode"] == "rmbench"
    assert grid.normal == 0.0 and grid.hard == 0.0
    assert grid.easy == 1.0
    assert report.numbers["grids"]["chat"]["length_baseline"].matrix.tolist() == grid.matrix.tolist()


@reward("test.prm")
def toy_prm(sample):
    """A process reward: a step is wrong when it contains 'wrong'."""
    steps = tuple(0.1 if "wrong" in s else 0.9 for s in sample.steps)
    return RewardResult.ok(min(steps), steps=steps)


@reward("test.outcome_only")
def outcome_only(sample):
    return 1.0


def _process_rows():
    return [
        {"problem": "p", "steps": ["a", "wrong b", "c"], "label": 1, "subset": "gsm8k"},  # predicted 1: right
        {"problem": "p", "steps": ["a", "b"], "label": -1, "subset": "gsm8k"},  # predicted -1: right
        {"problem": "p", "steps": ["wrong a", "b"], "label": 1, "subset": "math"},  # predicted 0: wrong
        {"problem": "p", "steps": ["a", "b", "c"], "label": -1, "subset": "math"},  # right
    ]


def test_process_processbench_f1_and_step_f1(tmp_path):
    report = run_eval(toy_prm, write_jsonl(tmp_path / "pb.jsonl", _process_rows()))
    assert_writes_strict_json(report, tmp_path)
    n = report.numbers
    assert n["mode"] == "process"
    pooled = n["pooled"]
    assert (pooled.acc_error, pooled.acc_correct) == (0.5, 1.0)
    assert pooled.f1 == pytest.approx(2 * 0.5 / 1.5)
    assert n["subsets"]["gsm8k"].f1 == 1.0
    assert n["subsets"]["math"].f1 == 0.0  # acc on flawed 0, on correct 1
    assert n["average_f1"] == pytest.approx(0.5)  # the official headline: mean of subset F1s, not 2/3
    # known step labels: row1 [1,0], row2 [1,1], row3 [1,0] (step 0 predicted 0), row4 [1,1,1]
    # predictions:      row1 [1,0], row2 [1,1], row3 [0,1],                       row4 [1,1,1]
    step = n["step_f1_known_steps"]
    assert step.f1_positive == pytest.approx(2 * 6 / (7 + 7))
    assert step.f1_negative == pytest.approx(2 * 1 / (2 + 2))


def test_process_mode_drops_rewards_without_step_scores(tmp_path):
    with pytest.raises(InputError, match="no_step_scores"):
        run_eval(outcome_only, write_jsonl(tmp_path / "pb.jsonl", _process_rows()))


def test_process_rejects_bad_label(tmp_path):
    rows = _process_rows()
    rows[2]["label"] = 5
    with pytest.raises(InputError, match=r"pb.jsonl:3.*label"):
        run_eval(toy_prm, write_jsonl(tmp_path / "pb.jsonl", rows))


def test_judge_mode_from_saved_verdicts(tmp_path):
    rows = [
        {"verdict_ab": "A", "verdict_ba": "B", "label": "A", "subset": "math"},  # consistent, right
        {"verdict_ab": "A", "verdict_ba": "A", "label": "A", "subset": "math"},  # position bias: inconsistent
        {"verdict_ab": "tie", "verdict_ba": "A", "label": "B", "subset": "code"},  # tie + B -> B, right
    ]
    report = run_eval(None, write_jsonl(tmp_path / "judge.jsonl", rows))
    assert_writes_strict_json(report, tmp_path)
    n = report.numbers
    assert n["mode"] == "judge"
    assert n["subsets"]["all"].consistency == pytest.approx(1 / 3)
    assert n["subsets"]["all"].accuracy == pytest.approx(2 / 3)
    assert n["subsets"]["math"].inconsistent == 1
