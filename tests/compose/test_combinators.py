import pytest

from rewardlab.compose import Clip, Component, FormulaCombine, Gate, MaxOf, MinOf, Weighted
from rewardlab.core import ErrorKind, Sample, Status, reward
from rewardlab.errors import ScoringError, SpecError


@reward("t.fmt", range=(0, 1))
def fmt(sample):
    return sample.response.startswith("<ok>")


@reward("t.value", range=(0, 1))
def value(sample):
    if sample.response.endswith("!err"):
        raise ScoringError("parse", "cannot parse the answer")
    if sample.response.endswith("!skip"):
        return None
    return 0.5


@reward("t.calls", range=(0, 1))
def counted(sample):
    counted.calls.append(sample.response)  # type: ignore[attr-defined]
    return 1.0


counted.calls = []  # type: ignore[attr-defined]

OK, BAD = Sample(response="<ok> x"), Sample(response="x")


def weighted(on_error="fail"):
    return Weighted([Component("format", fmt, 0.1), Component("value", value, 1.0, requires=("format",), on_error=on_error)], name="t")


def test_weighted_sum_keeps_components():
    r = weighted().score(OK)
    assert r.score == pytest.approx(0.6)
    assert set(r.components) == {"format", "value"}


def test_gate_blocks_and_the_gated_component_is_not_computed():
    counted.calls.clear()
    w = Weighted([Component("format", fmt, 0.1), Component("costly", counted, 1.0, requires=("format",))])
    results = w.score_batch([BAD, OK])
    assert [r.score for r in results] == [0.0, pytest.approx(1.1)]
    assert results[0].components["costly"].status is Status.SKIPPED
    assert "gate" in results[0].components["costly"].info["skip_reason"]
    assert counted.calls == ["<ok> x"]


def test_error_policy_fail_makes_the_total_an_error_naming_the_component():
    r = weighted("fail").score(Sample(response="<ok> !err"))
    assert r.status is Status.ERROR and r.error.kind is ErrorKind.COMPONENT
    assert "'value'" in r.error.message and "parse" in r.error.message
    assert r.components["value"].error.kind is ErrorKind.PARSE


def test_error_policy_zero_counts_zero_and_says_so():
    r = weighted("zero").score(Sample(response="<ok> !err"))
    assert r.score == pytest.approx(0.1) and r.info["errors_as_zero"] == ["value"]


def test_error_policy_skip_leaves_it_out_and_says_so():
    r = weighted("skip").score(Sample(response="<ok> !err"))
    assert r.score == pytest.approx(0.1) and r.info["errors_skipped"] == ["value"]


def test_nothing_counted_is_skipped_not_zero():
    w = Weighted([Component("value", value)])
    assert w.score(Sample(response="!skip")).status is Status.SKIPPED


def test_formula_combination_and_gated_value():
    f = FormulaCombine([Component("format", fmt), Component("value", value, requires=("format",))], "format * 0.2 + 2 * value")
    assert f.score(OK).score == pytest.approx(1.2)
    assert f.score(BAD).score == pytest.approx(0.0)  # value gated off -> 0 in a formula


def test_formula_with_skipped_variable_is_skipped():
    f = FormulaCombine([Component("value", value)], "value + 1")
    assert f.score(Sample(response="!skip")).status is Status.SKIPPED


def test_formula_runtime_error_is_a_formula_error():
    f = FormulaCombine([Component("value", value)], "1 / (value - 0.5)")
    assert f.score(OK).error.kind is ErrorKind.FORMULA


def test_min_max_and_clip():
    parts = [Component("format", fmt), Component("value", value)]
    assert MinOf(parts).score(OK).score == 0.5
    assert MaxOf(parts).score(OK).score == 1.0
    assert Weighted(parts, clip=(0, 1)).score(OK).score == 1.0
    assert Clip(value, 0, 0.25).score(OK).score == 0.25
    assert Clip(value, 0, 0.25).score(Sample(response="!err")).status is Status.ERROR


def test_standalone_gate():
    g = Gate(value, requires=fmt)
    assert g.score(OK).score == 0.5
    assert g.score(BAD).status is Status.SKIPPED


def test_cycles_duplicates_and_unknown_requirements_fail_at_construction():
    with pytest.raises(SpecError, match="cycle"):
        Weighted([Component("a", fmt, requires=("b",)), Component("b", fmt, requires=("a",))])
    with pytest.raises(SpecError, match="duplicate"):
        Weighted([Component("a", fmt), Component("a", value)])
    with pytest.raises(SpecError, match="unknown component 'zz'"):
        Weighted([Component("a", fmt, requires=("zz",))])


def test_repr_shows_the_tree():
    text = repr(weighted("skip"))
    assert text.splitlines()[0] == "Weighted('t')"
    assert "├─ format ×0.1" in text and "└─ value ×1 requires[format] on_error=skip" in text


def test_range_of_a_weighted_sum():
    assert weighted().range == (0.0, pytest.approx(1.1))
