"""The verdict cache is bounded in characters as well as entries: long answers cannot make it
hold gigabytes, and ordinary use is unchanged (a repeated pair is a hit)."""

from __future__ import annotations

import pytest

from rewardlab.errors import ConfigError
from rewardlab.verify.math import check, equivalence
from rewardlab.verify.math.cache import BoundedCache, kept_chars


def test_least_recently_used_entries_leave_first_when_characters_run_out() -> None:
    cache: BoundedCache[str] = BoundedCache(max_entries=100, max_chars=10)
    cache.put("a", "A", 4)
    cache.put("b", "B", 4)
    assert cache.get("a") == "A"  # now "b" is the least recently used
    cache.put("c", "C", 4)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    assert cache.chars == 8 and len(cache) == 2


def test_entry_count_is_bounded_too() -> None:
    cache: BoundedCache[int] = BoundedCache(max_entries=3, max_chars=1_000)
    for i in range(10):
        cache.put(i, i, 1)
    assert len(cache) == 3 and [cache.get(i) for i in (6, 7, 8, 9)] == [None, 7, 8, 9]


def test_an_entry_larger_than_the_budget_is_not_kept_and_evicts_nothing() -> None:
    cache: BoundedCache[str] = BoundedCache(max_entries=10, max_chars=10)
    cache.put("small", "s", 3)
    cache.put("huge", "h", 11)
    assert cache.get("huge") is None and cache.get("small") == "s" and cache.chars == 3


def test_storing_a_key_again_recharges_it() -> None:
    cache: BoundedCache[str] = BoundedCache(max_entries=10, max_chars=10)
    cache.put("k", "old", 6)
    cache.put("k", "new", 2)
    assert cache.get("k") == "new" and cache.chars == 2 and len(cache) == 1


def test_kept_chars_counts_a_string_held_twice_once() -> None:
    text = "7" * 1000
    assert kept_chars(text, text, "ab") == 1002


def test_bad_bounds_fail_at_construction() -> None:
    with pytest.raises(ConfigError, match="max_chars"):
        BoundedCache(max_entries=10, max_chars=0)


def test_check_keeps_at_most_the_character_budget_of_long_answers(monkeypatch) -> None:
    small = BoundedCache(max_entries=1 << 16, max_chars=1_000_000)
    monkeypatch.setattr(equivalence, "_VERDICTS", small)
    literals = ["7" * 100_000 + str(i) for i in range(40)]  # 4M characters of distinct answers
    for literal in literals:
        assert not check("1", literal).equivalent
    assert small.chars <= 1_000_000 and 0 < len(small) < len(literals)
    newest = ("1", literals[-1], equivalence.CheckOptions())
    assert small.get(newest) is not None  # the most recent verdicts stay


def test_default_cache_stays_within_its_character_budget_under_long_answers() -> None:
    cache = equivalence._VERDICTS
    assert cache.max_entries == 1 << 16
    opts = equivalence.CheckOptions()
    longest_cached = 100 * opts.max_chars  # longer answers are never cached
    answers = [str(i).rjust(longest_cached - 10, "7") for i in range(200)]  # ~40M characters
    for answer in answers:
        check("1", answer)
    kept = sum(cache.get(("1", answer, opts)) is not None for answer in answers)
    assert cache.chars <= cache.max_chars
    assert 0 < kept < len(answers)  # cached, but only as many as the budget holds


def test_a_repeated_pair_is_answered_from_the_cache(monkeypatch) -> None:
    small = BoundedCache(max_entries=10, max_chars=10_000)
    monkeypatch.setattr(equivalence, "_VERDICTS", small)
    first = check("\\frac{1}{2}", "0.5")
    assert check("\\frac{1}{2}", "0.5") is first and len(small) == 1
