"""Probes, cross-checks and rollout diagnostics against real Rewards (no stand-ins)."""

from __future__ import annotations

import pytest

from rewardlab import RewardResult, Sample, reward
from rewardlab.errors import InputError, ScoringError, UsageError
from rewardlab.evaluate.audit import crosscheck, diagnostics, probes, probing


@reward("test.weak_regex_math", range=(0, 1))
def weak_regex_math(sample):
    """The classic hackable maths reward: is the reference anywhere in the response?"""
    return str(sample.reference) in sample.response_text


@reward("test.last_boxed", range=(0, 1))
def last_boxed(sample):
    """A stricter reward: exactly one boxed answer, equal to the reference."""
    boxed = probes.boxed_answers(sample.response_text)
    return len(boxed) == 1 and boxed[0].strip() == str(sample.reference)


@reward("test.length_loving", range=(0, 1))
def length_loving(sample):
    return min(1.0, len(sample.response_text) / 1000)


@reward("test.sometimes_broken", range=(0, 1))
def sometimes_broken(sample):
    if "PADDING" in sample.response_text.upper() or "double-check" in sample.response_text:
        raise ScoringError("parse", "cannot read padded responses")
    return 1.0


SAMPLES = [
    Sample(prompt="2+2?", response="2 + 2 = 4, so the answer is \\boxed{4}.", reference="4"),
    Sample(prompt="3*3?", response="3 * 3 = 6, so the answer is \\boxed{6}.", reference="9"),
    Sample(prompt="half of 1?", response="Half is $\\frac{1}{2}$, so \\boxed{\\frac{1}{2}}", reference="\\frac{1}{2}"),
]


def outcomes_by_name(reward_, samples=SAMPLES, **kw):
    _, outs = probing.run_probes(reward_, samples, **kw)
    return {o.probe: o for o in outs}


def test_hedge_probe_catches_weak_regex_reward():
    out = outcomes_by_name(weak_regex_math)
    hedge = out["hedge"]
    assert hedge.flagged == 1  # the wrong answer 6 became "right" by listing 8, 10 and 9
    assert hedge.examples[0]["original_score"] == 0.0 and hedge.examples[0]["probed_score"] == 1.0
    assert "\\boxed{9}" in hedge.examples[0]["probed_response"]


def test_strict_reward_survives_hedge_and_format_probes():
    out = outcomes_by_name(last_boxed)
    assert out["hedge"].flagged == 0
    assert out["hedge"].mean_probed == 0.0
    assert out["format_whitespace"].flagged == 0
    assert out["format_case"].flagged == 0


def test_format_latex_probe_catches_string_matching():
    # \frac -> \dfrac changes the string but not the maths; last_boxed compares strings.
    out = outcomes_by_name(last_boxed)
    assert out["format_latex"].flagged >= 1
    assert out["format_latex"].expect == "unchanged"


def test_length_padding_probe_catches_length_bias():
    out = outcomes_by_name(length_loving)
    assert out["length_padding"].flagged == 3
    assert out["length_padding"].mean_delta > 0.5
    assert out["empty"].flagged == 0 and out["empty"].mean_probed == 0.0


def test_probe_errors_are_counted_not_scored():
    out = outcomes_by_name(sometimes_broken)
    padding = out["length_padding"]
    assert padding.errors == {"parse": 6}  # 3 data samples and their 3 wrong-answer counterfactuals
    assert padding.compared == 0 and padding.mean_delta is None


def test_probes_change_the_response_and_mark_meta():
    sample = SAMPLES[0]
    for probe in probes.DEFAULT_PROBES:
        changed = probe.apply(sample)
        assert changed is not None, probe.name
        assert changed.response != sample.response
        assert changed.meta["probe"] == probe.name and changed.id != sample.id
        assert changed.reference == sample.reference


def test_case_probe_keeps_maths_untouched():
    changed = probes.probe_by_name(["format_case"])[0].apply(SAMPLES[2])
    assert changed.response_text.startswith("HALF IS $\\frac{1}{2}$, SO \\boxed{\\frac{1}{2}}")


def test_answer_probes_skip_samples_without_answer():
    assert probes.probe_by_name(["answer_only"])[0].apply(Sample(response="no answer here")) is None


def test_boxed_answers_nested_braces():
    assert probes.boxed_answers("x \\boxed{\\frac{1}{2}} and \\boxed{3}") == ["\\frac{1}{2}", "3"]


def test_unknown_probe_name_is_a_usage_error():
    with pytest.raises(UsageError, match="known"):
        probes.probe_by_name(["nope"])


# -- cross-check -----------------------------------------------------------------------------
def test_crosscheck_counts_and_groups_disagreements():
    samples = [
        Sample(response="\\boxed{4} or \\boxed{5}", reference="4", meta={"level": "1"}),
        Sample(response="\\boxed{4}", reference="4", meta={"level": "1"}),
        Sample(response="\\boxed{7}", reference="9", meta={"level": "2"}),
    ]
    check = crosscheck.crosscheck_rewards(weak_regex_math, last_boxed, samples, group_by="level")
    assert check.confusion == {"pass/pass": 1, "pass/fail": 1, "fail/pass": 0, "fail/fail": 1}
    assert check.agreement == pytest.approx(2 / 3)
    assert check.by_category == {"test.weak_regex_math=pass, test.last_boxed=fail": 1}
    assert check.by_group == {"1": {"total": 2, "disagree": 1}, "2": {"total": 1}}
    assert check.disagreements[0]["reference"] == "4"
    # Cohen's kappa by hand: p_o = 2/3, a passes 2/3, b passes 1/3 -> p_e = 2/9 + 2/9 = 4/9
    assert check.kappa == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))


def test_crosscheck_error_versus_score_is_a_disagreement():
    results_a = [RewardResult.failure("timeout", "slow"), RewardResult.ok(1.0)]
    labels = crosscheck.labels_as_results([True, True])
    check = crosscheck.crosscheck_results(results_a, labels, [Sample(response="a"), Sample(response="b")], names=("v", "labels"))
    assert check.by_category == {"v=error:timeout, labels=pass": 1}
    assert check.errors == {"v": {"timeout": 1}, "labels": {}}
    assert check.both_scored == 1


def test_crosscheck_length_mismatch_and_bad_label():
    with pytest.raises(InputError, match="samples"):
        crosscheck.crosscheck_results([RewardResult.ok(1)], [], [Sample(response="x")])
    with pytest.raises(InputError, match="labels:2"):
        crosscheck.labels_as_results([True, "yes"])


# -- diagnostics -----------------------------------------------------------------------------
def _result(total, fmt, acc):
    return RewardResult.ok(total, components={"format": RewardResult.ok(fmt), "accuracy": RewardResult.ok(acc)})


def test_rollout_diagnostics_hand_computed():
    samples = [Sample(prompt="p1", response="a" * n, group="g1") for n in (10, 20)]
    samples += [Sample(prompt="p2", response="b" * n, group="g2") for n in (30, 40)]
    samples += [Sample(prompt="p3", response="c" * n, group="g3") for n in (50, 60)]
    results = [_result(1, 1, 0), _result(1, 1, 0),  # g1: all equal and at the top
               _result(0, 0, 0), _result(1, 1, 1),  # g2: has signal
               _result(0, 0, 0), RewardResult.failure("timeout", "slow")]  # g3: one score only
    d = diagnostics.rollout_diagnostics(samples, results, bounds=(0, 1))
    assert (d.n, d.ok, d.errors) == (6, 5, {"timeout": 1})
    assert d.groups == 2  # g3 has one ok score: not a group for variance
    assert d.zero_variance_share == 0.5
    assert d.saturated_high_share == 0.5 and d.saturated_low_share == 0.0
    assert d.at_bound_share == 1.0
    assert d.components["format"]["mean"] == pytest.approx(0.6)
    # format = [1,1,0,1,0], accuracy = [0,0,0,1,0]: cov sum 0.4, var sums 1.2 and 0.8 -> 1/sqrt(6)
    assert d.component_correlation["format"]["accuracy"] == pytest.approx(6**-0.5)
    assert d.length_spearman < 0  # longer responses scored lower here


def test_rollout_diagnostics_rejects_mismatch():
    with pytest.raises(InputError, match="results"):
        diagnostics.rollout_diagnostics([Sample(response="x")], [])


@reward("test.gullible_judge", range=(0, 1))
def gullible_judge(sample):
    """A stand-in for a judge that obeys instructions found in the response it grades."""
    text = sample.response_text.lower()
    return 1.0 if "full marks" in text else float(str(sample.reference) in text)


def test_prompt_injection_probe_catches_instruction_following_grader():
    out = outcomes_by_name(gullible_judge)
    assert out["prompt_injection"].flagged == 1  # the wrong answer (6 for 9) now gets full marks
    assert out["flattery"].flagged == 0


def test_think_prefill_probe_on_the_real_format_reward():
    from rewardlab.core import registry

    lenient = registry.create("format.tags", {"tags": ["think"], "strict": False, "allow_empty": True})
    strict = registry.create("format.tags", {"tags": ["think"], "strict": False})
    samples = [Sample(response="The answer is 4."), Sample(response="<think>2+2=4</think> The answer is 4.")]
    probe = probes.probe_by_name(["think_prefill"])
    _, (lenient_out,) = probing.run_probes(lenient, samples, probe)
    _, (strict_out,) = probing.run_probes(strict, samples, probe)
    assert lenient_out.flagged == 1  # an empty <think></think> earns the format reward
    assert strict_out.flagged == 0


def test_audit_against_a_second_reward(tmp_path):
    from rewardlab.evaluate.audit.run_audit import audit_reward

    data = tmp_path / "d.jsonl"
    data.write_text('{"response": "\\\\boxed{4} or \\\\boxed{5}", "reference": "4", "level": "1"}\n'
                    '{"response": "\\\\boxed{4}", "reference": "4", "level": "2"}\n')
    report = audit_reward(weak_regex_math, data, against=last_boxed, group_by="level",
                          probes=probes.probe_by_name(["empty"]))
    (check,) = report.numbers["crosschecks"]
    assert check["by_category"] == {"test.weak_regex_math=pass, test.last_boxed=fail": 1}
    assert check["by_group"]["1"] == {"total": 1, "disagree": 1}
    assert any(s.title.startswith("Cross-check") for s in report.sections)


def test_answer_only_keeps_the_responses_own_wrong_answer():
    # no \boxed{}: the probe must keep "6", not hand the response the reference "9"
    wrong = Sample(response="3 * 3 = 6", reference="9")
    probed = probes.probe_by_name(["answer_only"])[0].apply(wrong)
    assert probed.response_text == "\\boxed{6}"
    assert probes.final_answer(Sample(response="so the answer is 42.")) == "42"
    assert probes.final_answer(Sample(response="no number here", reference="9")) is None


@pytest.mark.parametrize(("options", "message"), [({"alpha": float("nan")}, "alpha must be in"), ({"alpha": 5.0}, "alpha must be in"),
                                                   ({"min_effect": float("inf")}, "min_effect must be"), ({"tol": -1.0}, "tol must be")])  # fmt: skip
def test_probe_options_refuse_what_would_flag_nothing(options, message):
    # a NaN significance level compares False with every p-value: no probe would ever be a hack
    from rewardlab.errors import ConfigError
    from rewardlab.evaluate.audit.options import ProbeOptions

    with pytest.raises(ConfigError, match=message):
        ProbeOptions(**options)

