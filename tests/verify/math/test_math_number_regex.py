"""The number literal pattern of the fast path (`fastpath._NUM_RE`): the same language and the
same groups as the original pattern, in linear time on the input that made that one quadratic."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.verify.math.fastpath import _NUM_RE

# The original pattern, kept as the specification: `\d+\.?\d*` splits a digit run between two
# quantifiers in n ways, so a failing match backtracks O(n^2).
_OLD_DEC = r"(?:\d+\.?\d*|\.\d+)"
OLD_NUM_RE = re.compile(
    rf"^(?P<sign>[-+]?)(?P<mant>{_OLD_DEC})"
    rf"(?:[eE](?P<eexp>[-+]?\d+)|(?:\\times10\^|\\cdot10\^|\*10\^|×10\^)(?P<exp>\{{[-+]?\d+\}}|[-+]?\d))?"
    r"(?P<pct>%)?$"
)

_PIECES = [*"0123456789..eE+-%{}x \n", "٣", "\\times10^", "\\cdot10^", "*10^", "×10^", "\\times", "10^"]
_NEAR_MISSES = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
_MATCHES = st.from_regex(OLD_NUM_RE, fullmatch=True)


def _groups(pattern: re.Pattern[str], s: str) -> dict[str, str | None] | None:
    m = pattern.match(s)
    return None if m is None else m.groupdict()


@settings(max_examples=600, deadline=None)
@given(st.one_of(_NEAR_MISSES, _MATCHES, st.tuples(_MATCHES, _NEAR_MISSES).map("".join)))
def test_number_pattern_accepts_what_the_original_did_with_the_same_groups(s: str) -> None:
    assert _groups(_NUM_RE, s) == _groups(OLD_NUM_RE, s)


HOSTILE = {
    "digits then a letter": "7" * 100_000 + "x",
    "decimal then a letter": "7" * 50_000 + "." + "7" * 50_000 + "x",
    "long exponent then a letter": "1e" + "7" * 100_000 + "x",
    "braced exponent never closed": "1\\times10^{" + "7" * 100_000,
    "digits then a doubled percent": "-" + "7" * 100_000 + "%%",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_number_pattern_is_linear_on_hostile_input(text: str) -> None:
    start = time.perf_counter()
    assert _NUM_RE.match(text) is None
    # one linear scan takes ~1 ms; the original pattern takes over an hour on these
    assert time.perf_counter() - start < 0.5


def test_number_pattern_still_reads_a_long_literal_whole() -> None:
    m = _NUM_RE.match("-" + "7" * 100_000 + ".5e-3%")
    assert m is not None and m["mant"] == "7" * 100_000 + ".5" and m["eexp"] == "-3" and m["pct"] == "%"
