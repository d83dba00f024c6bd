"""Audits that catch hacks on any data: wrong-answer counterfactuals, noise-aware verdicts for
continuous rewards, length-only effects, ranking cross-checks, and the CLI verdict line."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from rewardlab import RewardResult, Sample, reward
from rewardlab.cli.main import main
from rewardlab.evaluate.audit import answers, crosscheck, probes, probing

ALL_CORRECT = [
    {"prompt": "2+2?", "response": "2 + 2 = 4. The answer is 4", "reference": "4"},
    {"prompt": "3*3?", "response": "3 * 3 = 9. The answer is 9", "reference": "9"},
    {"prompt": "10-3?", "response": "10 - 3 = 7. The answer is 7", "reference": "7"},
    {"prompt": "6/2?", "response": "6 / 2 = 3. The answer is 3", "reference": "3"},
]

CONTAINS_TOML = """
[reward]
name = "weak_contains"
[[reward.components]]
name = "contains"
use = "text.contains"
"""

# a deterministic exact match of the stated answer (case-insensitive "answer is X")
EXACT_TOML = r"""
[reward]
name = "exact_answer"
[[reward.components]]
name = "exact"
use = "text.exact"
params = { extract = '(?i)answer is\s*(\S+)' }
"""


def write(path, text):
    path.write_text(text)
    return path


def all_correct_file(tmp_path):
    return write(tmp_path / "all_correct.jsonl", "".join(json.dumps(r) + "\n" for r in ALL_CORRECT))


def test_cli_audit_flags_contains_reward_on_all_correct_data(tmp_path, capsys):
    data = all_correct_file(tmp_path)
    spec = write(tmp_path / "contains.toml", CONTAINS_TOML)
    out = tmp_path / "audit"
    assert main(["audit", str(spec), "--data", str(data), "-o", str(out), "--fail-on-flag"]) == 1
    payload = json.loads((out / "report.json").read_text())
    assert "hedge" in payload["flagged_probes"]
    hedge = next(p for p in payload["probes"] if p["probe"] == "hedge")
    # on the data nothing can go higher (every response already scores 1)...
    assert hedge["flagged"] == 0 and hedge["counterfactual_flagged"] == 4  # ...but hedging a wrong answer pays
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("weak_contains: HACKABLE")  # the verdict opens the output
    assert payload["verdict"].startswith("weak_contains: HACKABLE")


def test_cli_audit_flags_nothing_on_deterministic_exact_match(tmp_path, capsys):
    data = all_correct_file(tmp_path)
    spec = write(tmp_path / "exact.toml", EXACT_TOML)
    out = tmp_path / "audit"
    assert main(["audit", str(spec), "--data", str(data), "-o", str(out), "--fail-on-flag"]) == 0
    payload = json.loads((out / "report.json").read_text())
    assert payload["flagged_probes"] == []
    wrong = next(p for p in payload["probes"] if p["probe"] == "wrong_answer")
    assert wrong["compared"] == 4 and wrong["flagged"] == 0  # every swapped answer lost its point
    assert capsys.readouterr().out.splitlines()[0] == f"exact_answer: no hack found by {len(payload['probes'])} probes"


def test_wrong_answer_counterfactual_replaces_the_answer_as_a_token():
    s = Sample(response="14 - 10 = 4, so the answer is \\boxed{4}", reference="4")
    cf = answers.wrong_answer_counterfactual(s)
    assert cf.response_text == "14 - 10 = 5, so the answer is \\boxed{5}"  # "14" keeps its 4
    assert cf.meta["counterfactual"] == "wrong_answer" and cf.id != s.id


def test_wrong_answer_never_contains_the_reference():
    s = Sample(response="The answer is 1", reference="1")
    cf = answers.wrong_answer_counterfactual(s)
    assert "1" not in cf.response_text.split()[-1]


@reward("test.contains_any", range=(0, 1))
def contains_any(sample):
    return str(sample.reference) in sample.response_text


def test_contains_is_caught_by_the_wrong_answer_check_when_the_reasoning_repeats_the_answer():
    # "14" still contains "4" after the swap: the reward cannot tell the wrong answer from the right one
    samples = [Sample(response="14 - 10 = 4, so \\boxed{4}", reference="4")]
    _, outs = probing.run_probes(contains_any, samples, probes.probe_by_name(["empty"]))
    wrong = next(o for o in outs if o.probe == probing.WRONG_ANSWER)
    assert wrong.hack and wrong.flagged == 1


def _rm_samples(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return [Sample(prompt=f"q{i}", response=f"answer {i} " + "x" * int(rng.integers(20, 200)), reference=str(i),
                   meta={"noise": float(rng.normal())}) for i in range(n)]


@reward("test.noisy_rm")
def noisy_rm(sample):
    """A continuous reward whose score is content noise plus a tiny hash-based jitter of the text:
    every probe moves it a little, none systematically."""
    jitter = (zlib.crc32(sample.response_text.encode()) % 1000) / 1e6  # deterministic
    return sample.meta["noise"] + jitter


@reward("test.flattered_rm")
def flattered_rm(sample):
    """A continuous reward that pays for flattery (not for length)."""
    bonus = 1.0 if "excellent and insightful question" in sample.response_text else 0.0
    return sample.meta["noise"] + bonus


@reward("test.long_rm")
def long_rm(sample):
    """A continuous reward that pays for length only."""
    return sample.meta["noise"] + len(sample.response_text) / 100


def test_continuous_reward_small_moves_are_noise_not_hacks():
    _, outs = probing.run_probes(noisy_rm, _rm_samples(), probes.probe_by_name(["flattery", "format_whitespace"]),
                                 options=probing.ProbeOptions(counterfactuals=False))
    for o in outs:
        assert o.continuous and o.flagged > 0  # some samples moved above tol...
        assert not o.hack, o.probe  # ...but not beyond noise


def test_continuous_reward_flattery_bias_is_a_hack_beyond_length():
    _, outs = probing.run_probes(flattered_rm, _rm_samples(), probes.probe_by_name(["flattery"]),
                                 options=probing.ProbeOptions(counterfactuals=False))
    (flattery,) = outs
    assert flattery.hack and flattery.p_value < 0.05 / 2
    assert flattery.only_adds_length is False


def test_probe_that_only_adds_length_says_so():
    _, outs = probing.run_probes(long_rm, _rm_samples(), probes.probe_by_name(["flattery"]),
                                 options=probing.ProbeOptions(counterfactuals=False))
    (flattery,) = outs
    assert flattery.hack and flattery.only_adds_length is True
    assert flattery.mean_added_chars > 100


def test_crosscheck_of_unbounded_scores_uses_ranking_not_a_threshold():
    # a reward model's logits (all above 0.5) against labels: thresholding would call every
    # sample a pass; ranking shows it orders right above wrong in 3 of 4 pairs
    samples = [Sample(prompt="p1", response=r, group="p1") for r in ("a", "b")] + \
              [Sample(prompt="p2", response=r, group="p2") for r in ("c", "d")]
    logits = [RewardResult.ok(x) for x in (3.0, 1.0, 2.0, 2.5)]
    labels = crosscheck.labels_as_results([True, False, True, False])
    check = crosscheck.crosscheck_results(logits, labels, samples, names=("rm", "labels"))
    assert check.agreement is None and check.kappa is None and check.confusion["pass/pass"] == 0
    assert check.ranking["ranked"] == "rm" and check.ranking["by"] == "labels"
    # AUROC over all pairs (pos 3.0, 2.0 vs neg 1.0, 2.5): 3 of 4 right
    assert check.ranking["auroc"] == pytest.approx(0.75)
    assert check.ranking["pairwise_accuracy_within_groups"] == pytest.approx(0.5)  # p1 right, p2 wrong
