"""format.tags and length.tokens: tables of cases."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status
from rewardlab.verify.format import TagFormat
from rewardlab.verify.length import LengthTerm


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("<think>a</think><answer>b</answer>", {}, 1.0),
        ("  <think>a</think>\n<answer>b</answer>\n", {}, 1.0),
        ("<answer>b</answer><think>a</think>", {}, 0.0),
        ("<think>a</think><answer>b</answer> extra", {}, 0.0),
        ("<think>a</think><answer>b</answer> extra", {"strict": False}, 1.0),
        ("<think></think><answer>b</answer>", {}, 0.0),
        ("<think></think><answer>b</answer>", {"allow_empty": True}, 1.0),
        ("<think>a</think><think>a</think><answer>b</answer>", {"strict": False}, 0.0),
        ("<reasoning>a</reasoning><final>b</final>", {"tags": ["reasoning", "final"]}, 1.0),
        # partial credit: one <think> ok, one <answer> missing, order fails, non-empty fails
        ("<think>a</think>", {"partial": True}, 0.25),
    ],
)
def test_tag_format_table(text, kwargs, expected):
    assert TagFormat(**kwargs).score(Sample(response=text)).score == pytest.approx(expected)


def test_tag_format_reports_failed_checks():
    result = TagFormat().score(Sample(response="<think>a</think>"))
    assert "one <answer>" in result.info["failed_checks"]


def test_tag_format_rejects_bad_tags_and_bad_response():
    with pytest.raises(ValueError, match="invalid tag name"):
        TagFormat(tags=["a b"])
    with pytest.raises(ValueError, match="at least one"):
        TagFormat(tags=[])
    assert TagFormat().score(Sample(response=3.5)).status is Status.ERROR


@pytest.mark.parametrize(
    ("n_words", "kwargs", "expected"),
    [(10, {"budget": 10}, 1.0), (15, {"budget": 10}, 0.5), (20, {"budget": 10}, 0.0), (40, {"budget": 10}, 0.0), (12, {"budget": 10, "overflow": 4}, 0.5)],
)
def test_length_term_table(n_words, kwargs, expected):
    assert LengthTerm(**kwargs).score(Sample(response=" ".join(["w"] * n_words))).score == pytest.approx(expected)


def test_length_term_chars_and_bad_budget():
    assert LengthTerm(budget=4, unit="chars").score(Sample(response="abcdef")).score == pytest.approx(0.5)
    with pytest.raises(ValueError, match="budget"):
        LengthTerm(budget=0)


@pytest.mark.parametrize("strict", [True, False])
def test_find_fast_path_agrees_with_the_regex_definition(strict):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    reward = TagFormat(strict=strict)
    pieces = st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", " ", "x", "\n"])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(pieces, max_size=9).map("".join))
    def check(text):
        match = reward._whole.fullmatch(text) if strict else reward._loose.search(text)
        once = all(text.count(o) == 1 and text.count(c) == 1 for _, o, c in reward._tag_checks)
        expected = float(once and match is not None and all(g.strip() for g in match.groups()))
        assert reward.score(Sample(response=text)).score == expected

    check()
