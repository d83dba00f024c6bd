"""`rewardlab eval` / `rewardlab audit` end to end: library runs, CLI, reports, stamps."""

from __future__ import annotations

import json

import pytest

from rewardlab import reward
from rewardlab.cli.main import main
from rewardlab.errors import InputError
from rewardlab.evaluate.audit.run_audit import audit_reward
from rewardlab.evaluate.datasets import read_candidates
from rewardlab.evaluate.run_eval import run_eval

WEAK_SPEC = {"reward": {"name": "weak_regex_math", "components": [{"name": "contains", "use": "text.contains"}]}}
WEAK_TOML = """
[reward]
name = "weak_regex_math"
[[reward.components]]
name = "contains"
use = "text.contains"
"""


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def maths_file(tmp_path):
    rows = [
        {"prompt": "2+2?", "response": "2 + 2 = 4, so \\boxed{4}", "reference": "4", "correct": True},
        {"prompt": "3*3?", "response": "3 * 3 = 6, so \\boxed{6}", "reference": "9", "correct": False},
        {"prompt": "10-3?", "response": "10 - 3 = 7, so \\boxed{7}", "reference": "7", "correct": True},
        {"prompt": "5+5?", "response": "5 + 5 = 11, so \\boxed{11}", "reference": "10", "correct": False},
    ]
    return write_jsonl(tmp_path / "maths.jsonl", rows)


@reward("test.longer_is_better")
def longer_is_better(sample):
    return float(len(sample.response_text))


@reward("test.keyword", range=(0, 1))
def keyword(sample):
    return float("correct" in sample.response_text)


def test_audit_catches_weak_regex_reward_and_stamps_report(maths_file, tmp_path):
    report = audit_reward(WEAK_SPEC, maths_file, label_field="correct")
    assert report.numbers["flagged_probes"] == ["hedge"]
    hedge = next(p for p in report.numbers["probes"] if p["probe"] == "hedge")
    assert hedge["flagged"] == 2 and hedge["compared"] == 4  # both wrong answers became "right"
    html, js = report.write(tmp_path / "out")
    payload = json.loads(js.read_text())
    for key in ("rewardlab_version", "spec_hash", "data_hash", "seed"):
        assert payload["stamps"][key] not in (None, "")
    assert payload["crosschecks"][0]["agreement"] == 1.0  # the reward agrees with the labels...
    text = html.read_text()
    assert "data:image/png;base64," in text and "hedge" in text  # ...but the probes catch it
    assert "http://" not in text and "https://" not in text  # self-contained


def test_audit_same_seed_same_numbers(maths_file):
    a = audit_reward(WEAK_SPEC, maths_file, limit=3, seed=7)
    b = audit_reward(WEAK_SPEC, maths_file, limit=3, seed=7)
    assert a.numbers["probes"] == b.numbers["probes"]
    assert a.stamps["data_hash"] == b.stamps["data_hash"]


def test_eval_pairs_prints_length_baseline_and_sections(tmp_path):
    rows = [{"prompt": "q", "chosen": "a" * n, "rejected": "b" * m, "subset": s}
            for n, m, s in [(10, 5, "math-prm"), (3, 8, "math-prm"), (6, 2, "hep-python"), (4, 4, "alpacaeval-easy")]]
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    report = run_eval(longer_is_better, data)
    numbers = report.numbers
    assert numbers["mode"] == "pairs"
    assert numbers["accuracy"].estimate == 0.5  # the tie (4 vs 4) is wrong
    # a length reward equals "prefer the longer"; "prefer the shorter" gets 1/4 (the tie is wrong both ways)
    assert numbers["length_baseline"].longer == 0.5 and numbers["length_baseline"].shorter == 0.25
    assert numbers["subsets"]["math-prm"]["accuracy"].estimate == 0.5
    sections = numbers["rewardbench_sections"]
    assert sections["Reasoning"] == pytest.approx((0.5 * 984 + 1.0 * 164) / (984 + 164))
    assert sections["Chat"] == 0.0


def test_eval_pairs_error_rows_are_counted_not_scored(tmp_path):
    @reward("test.picky", range=(0, 1))
    def picky(sample):
        if "x" in sample.response_text:
            raise ValueError("cannot score an x")
        return 0.5 + 0.1 * len(sample.response_text) / 100

    rows = [{"chosen": "long answer", "rejected": "no"}, {"chosen": "x", "rejected": "y"}]
    report = run_eval(picky, write_jsonl(tmp_path / "p.jsonl", rows))
    assert report.numbers["scored_pairs"] == 1
    assert report.numbers["pair_errors"] == {"crash": 1}


def _candidate_rows():
    # two problems x 4 candidates; hand-computed below
    return [
        {"question": "p1", "gt": "1", "code": ["\\boxed{1}", "\\boxed{2}", "\\boxed{2}", "\\boxed{1} correct"],
         "pred": ["1", "2", "2", "1"], "score": [True, False, False, True], "pred_score": [[0.9], [0.2], [0.3], [0.1]]},
        {"question": "p2", "gt": "5", "code": ["\\boxed{4}", "\\boxed{4}", "\\boxed{4}", "\\boxed{5}"],
         "pred": ["4", "4", "4", "5"], "score": [False, False, False, True], "pred_score": [[0.8], [0.1], [0.1], [0.7]]},
    ]


@pytest.mark.slow
def test_eval_candidates_hand_computed(tmp_path):
    data = write_jsonl(tmp_path / "cands.jsonl", _candidate_rows())
    report = run_eval(keyword, data)
    n = report.numbers
    assert n["mode"] == "candidates" and n["gold"] == "file labels"
    file_scores = n["selectors"]["file scores"]
    assert file_scores["best_of_n"].estimate == 0.5  # p1 picks 0.9 (right), p2 picks 0.8 (wrong)
    # weighted vote with scores in [0,1]: p1 "1": 1.0 vs "2": 0.5 -> right; p2 "4": 1.0 vs "5": 0.7 -> wrong
    assert file_scores["weighted_vote"].estimate == 0.5
    assert n["majority_vote"].estimate == pytest.approx(0.25)  # p1 tie 2-2 -> 1/2; p2 "4" wins -> 0
    # keyword reward: p1 only candidate 4 has "correct" -> right; p2 all tie at 0 -> mean label 1/4
    assert n["selectors"]["test.keyword"]["best_of_n"].estimate == pytest.approx((1 + 0.25) / 2)
    assert n["pass_at_k"][1] == pytest.approx((2 / 4 + 1 / 4) / 2)
    assert n["pass_at_k"][4] == 1.0


def test_read_candidates_names_bad_row(tmp_path):
    rows = _candidate_rows()
    rows[1]["score"] = [True]
    with pytest.raises(InputError, match=r"cands.jsonl:2.*'score'"):
        read_candidates(write_jsonl(tmp_path / "cands.jsonl", rows))


@pytest.mark.slow
def test_cli_audit_and_eval(maths_file, tmp_path, capsys):
    spec = tmp_path / "weak.toml"
    spec.write_text(WEAK_TOML)
    out = tmp_path / "audit"
    assert main(["audit", str(spec), "--data", str(maths_file), "-o", str(out)]) == 0
    assert main(["audit", str(spec), "--data", str(maths_file), "-o", str(out), "--fail-on-flag"]) == 1
    assert main(["audit", str(spec), "--data", str(maths_file), "--probe", "nope"]) == 2
    printed = capsys.readouterr().out
    assert "hedge" in printed and "report.html" in printed
    cands = write_jsonl(tmp_path / "cands.jsonl", _candidate_rows())
    assert main(["eval", "--data", str(cands), "-o", str(tmp_path / "eval")]) == 0
    payload = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert payload["selectors"]["file scores"]["best_of_n"]["estimate"] == 0.5
    assert main(["eval", str(spec), "--data", str(cands), "--mode", "sideways"]) == 2



def test_eval_rollouts_reads_rewardlab_score_output(tmp_path):
    from rewardlab.runner import ScoreFileOptions, score_file

    spec = {"reward": {"name": "two_terms", "components": [
        {"name": "exact", "use": "text.exact", "weight": 1.0},
        {"name": "contains", "use": "text.contains", "weight": 0.0},
    ]}}
    rows = [{"prompt": "p1", "response": r, "reference": "4", "group": "g1"} for r in ("4", "4")]
    rows += [{"prompt": "p2", "response": r, "reference": "5", "group": "g2"} for r in ("5", "the answer is 5")]
    rows += [{"prompt": "p3", "response": "x", "reference": ["a", 1, None], "group": "g3"}]  # invalid reference
    data = write_jsonl(tmp_path / "rollouts.jsonl", rows)
    scored = tmp_path / "rollouts.scored.jsonl"
    score_file(spec, data, scored, ScoreFileOptions(workers=0, timeout=None))
    report = run_eval(None, scored)
    n = report.numbers
    assert n["mode"] == "rollouts"
    assert (n["n"], n["ok"]) == (5, 4) and sum(n["errors"].values()) == 1
    assert n["groups"] == 2 and n["zero_variance_share"] == 0.5  # g1 all 1.0; g2 has 1.0 and 0.0
    assert n["saturated_high_share"] == 0.5
    assert n["components"]["contains"]["mean"] == 1.0
    assert n["component_correlation"]["exact"]["contains"] is None  # constant column: undefined, not 0


def test_eval_pairs_compare_two_rewards_with_mcnemar(tmp_path):
    @reward("test.says_good", range=(0, 1))
    def says_good(sample):
        return float("good" in sample.response_text)

    # says_good right on 8 pairs where longer_is_better is wrong (chosen shorter), both right on 2
    rows = [{"chosen": "good", "rejected": "bad but longer"}] * 8 + [{"chosen": "good and long", "rejected": "bad"}] * 2
    report = run_eval(says_good, write_jsonl(tmp_path / "p.jsonl", rows), compare=[longer_is_better])
    n = report.numbers
    assert n["accuracy"].estimate == 1.0
    assert n["other_accuracy"]["test.longer_is_better"].estimate == pytest.approx(0.2)
    versus = n["comparisons"]["test.says_good vs test.longer_is_better"]
    assert versus.test == "mcnemar-exact" and versus.p_value == pytest.approx(2 / 2**8)  # 8 discordant, all one way
    # the two-sided length baseline here is "prefer the shorter" (right on the 8 pairs): 1.0 - 0.8
    assert n["length_baseline"].direction == "shorter"
    assert n["comparisons"]["test.says_good vs length baseline"].difference.estimate == pytest.approx(0.2)


def test_eval_candidates_compare_adds_selectors(tmp_path):
    data = write_jsonl(tmp_path / "cands.jsonl", _candidate_rows())
    report = run_eval(keyword, data, compare=[longer_is_better])
    assert {"test.keyword", "test.longer_is_better", "file scores", "length baseline"} <= set(report.numbers["selectors"])
    assert "test.keyword vs test.longer_is_better" in report.numbers["comparisons"]
    assert report.numbers["reward_errors"] == {"test.keyword": {}, "test.longer_is_better": {}}


def test_cli_audit_field_mapping(tmp_path):
    spec = tmp_path / "weak.toml"
    spec.write_text(WEAK_TOML)
    data = write_jsonl(tmp_path / "d.jsonl", [{"completion": "it is 6 \\boxed{6}", "answer": "9"}])
    out = tmp_path / "o"
    args = ["audit", str(spec), "--data", str(data), "-o", str(out), "--probe", "hedge"]
    assert main([*args, "--field", "response=completion", "--field", "reference=answer"]) == 0
    assert json.loads((out / "report.json").read_text())["flagged_probes"] == ["hedge"]
    assert main([*args, "--field", "answer"]) == 2


@reward("test.hangs_on_padding", range=(0, 1))
def hangs_on_padding(sample):
    if "double-check" in sample.response_text:  # the length_padding probe's filler
        import time

        time.sleep(60)
    return 1.0


@pytest.mark.slow
def test_audit_in_worker_pool_turns_a_hang_into_counted_timeouts(maths_file):
    from rewardlab.evaluate.audit.probes import probe_by_name
    from rewardlab.evaluate.audit.probing import ProbeOptions

    report = audit_reward(hangs_on_padding, maths_file, probes=probe_by_name(["length_padding", "empty"]),
                          workers=2, timeout=2.0, probe_options=ProbeOptions(counterfactuals=False))
    padding, empty = report.numbers["probes"]
    assert padding["errors"] == {"timeout": 4} and padding["compared"] == 0
    assert empty["compared"] == 4 and empty["errors"] == {}


def test_eval_candidates_selector_errors_never_enter_calibration(tmp_path):
    @reward("test.fails_on_4", range=(0, 1))
    def fails_on_4(sample):
        if "4" in sample.response_text:
            raise ValueError("cannot read a 4")
        return 0.9 if "correct" in sample.response_text else 0.2

    data = write_jsonl(tmp_path / "cands.jsonl", _candidate_rows())
    n = run_eval(fails_on_4, data).numbers
    sel = n["selectors"]["test.fails_on_4"]
    assert n["reward_errors"]["test.fails_on_4"] == {"crash": 3}  # the three \boxed{4} of problem 2
    assert sel["calibrated_on_n"] == 5  # the crashed candidates are left out
    assert sum(sel["reliability"].count) == 5
    # p1: "\\boxed{1} correct" (0.9) is right; p2: the crashed candidates rank below the only
    # scored one, \\boxed{5} (0.2), which is right
    assert sel["best_of_n"].estimate == 1.0


def test_eval_pairs_intervals_resample_prompts(tmp_path):
    rows = [{"prompt": f"q{i // 5}", "chosen": "good", "rejected": "bad"} for i in range(40)]
    report = run_eval(longer_is_better, write_jsonl(tmp_path / "p.jsonl", rows))
    assert report.numbers["accuracy"].clusters == 8 and report.numbers["accuracy"].n == 40
    assert report.numbers["prompts"] == 8
