"""Plain number literals past the fast path's length: compared exactly, never refused.

Each test is one attack on the long-literal rule (fastpath.parse_long_number): the rule must
give the exact verdict, in linear time, and must not open the screen to long *expressions*.
"""

from __future__ import annotations

import time

from rewardlab.verify.math import CheckOptions, check, extract_answer
from rewardlab.verify.math.fastpath import MAX_LITERAL_CHARS, parse_long_number

# No sympy: every verdict here must come from the literal rule (or the screen), not a worker.
FAST = CheckOptions(allow_symbolic=False)
SEVENS = "7" * 3000


def _verdict(reference: str, candidate: str) -> tuple[str, str | None]:
    v = check(reference, candidate, FAST)
    return v.outcome.value, v.error_kind


def test_long_integer_against_short_reference_is_wrong_not_unsupported() -> None:
    assert _verdict("42", SEVENS) == ("not_equivalent", None)


def test_equal_3000_digit_integers() -> None:
    assert _verdict(SEVENS, SEVENS) == ("equivalent", None)


def test_3000_digit_integers_differing_in_last_digit() -> None:
    assert _verdict(SEVENS, SEVENS[:-1] + "8") == ("not_equivalent", None)


def test_3000_digit_integers_differing_in_first_digit_only() -> None:
    assert _verdict(SEVENS, "8" + SEVENS[1:]) == ("not_equivalent", None)


def test_leading_zeros_do_not_change_a_long_integer() -> None:
    assert _verdict(SEVENS, "000" + SEVENS) == ("equivalent", None)


def test_opposite_signs_of_a_long_integer_differ() -> None:
    assert _verdict("-" + SEVENS, SEVENS) == ("not_equivalent", None)
    assert _verdict("-" + SEVENS, "-" + SEVENS) == ("equivalent", None)
    assert _verdict("+" + SEVENS, SEVENS) == ("equivalent", None)


def test_comma_grouped_long_integer_equals_plain_digits() -> None:
    grouped = "1" + ",000" * 1000
    assert _verdict("1" + "0" * 3000, grouped) == ("equivalent", None)
    assert _verdict("1" + "0" * 2999, grouped) == ("not_equivalent", None)


def test_thin_space_grouped_long_integer_equals_plain_digits() -> None:
    assert _verdict("1" + "0" * 3000, "1" + "\\,000" * 1000) == ("equivalent", None)


def test_long_decimal_with_trailing_zeros_equals_integer() -> None:
    assert _verdict("100", "100." + "0" * 3000) == ("equivalent", None)
    assert _verdict("100", "100." + "0" * 2999 + "1") == ("not_equivalent", None)


def test_scientific_notation_against_long_integer() -> None:
    assert _verdict("1" + "0" * 3000, "1e3000") == ("equivalent", None)
    assert _verdict("1" + "0" * 3000, "1\\times10^{3000}") == ("equivalent", None)
    assert _verdict("1" + "0" * 3000, "1e2999") == ("not_equivalent", None)


def test_long_decimal_rounding_an_exact_reference() -> None:
    # the significant-figure rule holds at any length: 0.333...3 (3000 threes) rounds 1/3
    assert _verdict("\\frac{1}{3}", "0." + "3" * 3000) == ("equivalent", None)
    assert _verdict("\\frac{1}{3}", "0." + "3" * 2999 + "4") == ("not_equivalent", None)


def test_long_fraction_of_two_integers() -> None:
    assert _verdict("1", f"\\frac{{{SEVENS}}}{{{SEVENS}}}") == ("equivalent", None)
    assert _verdict("1", f"{SEVENS}/{SEVENS[:-1]}8") == ("not_equivalent", None)


def test_megabyte_digit_string_is_fast_and_exact() -> None:
    nines = "9" * 1_000_000
    start = time.perf_counter()
    assert _verdict(nines, nines[:-1] + "8") == ("not_equivalent", None)
    assert _verdict(nines, "0" + nines) == ("equivalent", None)
    assert _verdict("42", nines) == ("not_equivalent", None)
    # ~0.1 s each on one core; a quadratic step would take minutes
    assert time.perf_counter() - start < 10


def test_literal_past_the_hard_limit_stays_unsupported() -> None:
    assert parse_long_number("9" * (MAX_LITERAL_CHARS + 1)) is None
    assert _verdict("42", "9" * (MAX_LITERAL_CHARS + 1)) == ("undecided", "unsupported")


def test_long_literal_with_a_stray_letter_stays_unsupported() -> None:
    # `777...7x` is an expression (a multiple of x): the screen refuses it, as before
    assert _verdict("42", SEVENS + "x") == ("undecided", "unsupported")
    assert _verdict(SEVENS, SEVENS[:1500] + "a" + SEVENS[1500:]) == ("undecided", "unsupported")


def test_megabyte_literal_with_a_stray_letter_is_refused_quickly() -> None:
    text = "9" * 1_000_000 + "x"
    start = time.perf_counter()
    assert _verdict("42", text) == ("undecided", "unsupported")
    assert time.perf_counter() - start < 10


def test_long_literal_against_a_power_stays_unsupported() -> None:
    # deciding it means evaluating and printing 2^10000 in sympy; the screen keeps refusing it
    assert _verdict("2^{10000}", str(2**1000) * 3) == ("undecided", "unsupported")


def test_long_literal_inside_boxed() -> None:
    answer = extract_answer(f"So the number is \\boxed{{{SEVENS}}}.").answer
    assert answer == SEVENS
    assert _verdict(SEVENS, answer) == ("equivalent", None)
    assert _verdict("42", answer) == ("not_equivalent", None)


def test_long_percent_reads_as_fraction() -> None:
    assert _verdict("0.5", "50." + "0" * 500 + "\\%") == ("equivalent", None)


def test_exponent_over_the_limit_is_not_a_literal() -> None:
    assert parse_long_number("1e10001") is None
    assert parse_long_number("1e10000") is not None


def test_long_tuple_entries_compare_exactly() -> None:
    assert _verdict(f"({SEVENS}, 1)", f"({SEVENS}, 1)") == ("equivalent", None)
    assert _verdict(f"({SEVENS}, 1)", f"(000{SEVENS}, 2)") == ("not_equivalent", None)


def test_two_megabytes_of_literal_characters_that_are_no_literal_are_refused_quickly() -> None:
    # `{`, `,`, `\frac` are all characters a literal may contain; past 100 * max_chars only a
    # bare literal is read, so the hostile text is refused before `clean` ever sees it
    for unit in ("{", "1,", "\\frac{1}{2}", "1e"):
        text = (unit * (1_990_000 // len(unit) + 1))[:1_990_000]
        start = time.perf_counter()
        assert _verdict("42", text) == ("undecided", "unsupported")
        assert time.perf_counter() - start < 10


def test_megabyte_literals_are_not_kept_in_the_verdict_cache() -> None:
    from rewardlab.verify.math.equivalence import _VERDICTS

    before = len(_VERDICTS), _VERDICTS.chars
    nines = "9" * 1_000_000
    assert _verdict(nines, nines[:-1] + "1") == ("not_equivalent", None)
    assert (len(_VERDICTS), _VERDICTS.chars) == before
