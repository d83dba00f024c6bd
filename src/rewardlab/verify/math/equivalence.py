"""`check(reference, candidate)`: is the candidate answer equal to the reference answer?

The arguments are not interchangeable: the reference fixes the precision a decimal must have,
whether a letter is a multiple-choice option, and an unparseable *reference* is `undecided`
(a broken gold answer must not mark every response wrong), while an unparseable *candidate*
is simply not equivalent.

Order of decision, cheapest first (most answers never reach sympy):
1. clean both strings (normalize.py) and compare them as text: equal LaTeX is equal;
   two plain number literals of which one is longer than the fast path takes (a 3,000-digit
   integer, a megabyte of digits) are compared exactly right then (fastpath.parse_long_number),
   a bare one even before cleaning: nothing later rescans them, and the screen never sees them;
   a candidate that reads as a sentence (a whole response) is extracted first, once;
2. clock times (`4:30 p.m.` vs `16:30`, clock.py), hedged candidates (`1 or 2`), named values
   and computations stating their value (`x = 3`, `\\sqrt{4} = 2`; an equation in unknowns is
   no value), multiple-choice letters (either case in the candidate), text answers
   (`\\text{Monday}`);
3. numbers: integers, decimals, fractions, percentages, repeating decimals (fastpath.py);
4. structures at the string level: tuples, intervals (an inequality in one variable is read as
   the interval it describes when the other answer is one, or is an inequality in the same
   variable), sets, unions, matrices; each entry
   recursively through this same list;
5. screening of hostile input (screen.py), then sympy in a killable worker (worker.py).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from fractions import Fraction

from rewardlab.errors import ConfigTypeError, WorkerCrashed
from rewardlab.verify.math.cache import BoundedCache, kept_chars
from rewardlab.verify.math.clock import clock_equal, parse_clock
from rewardlab.verify.math.extract import choice_letter, extract_answer, is_sentence
from rewardlab.verify.math.fastpath import (
    SHORT_LITERAL_CHARS,
    Num,
    numbers_equal,
    parse_literal,
    parse_number,
)
from rewardlab.verify.math.intervals import inequality_interval, inequality_variable
from rewardlab.verify.math.normalize import (
    assignment_tuples,
    clean,
    comparison_key,
    equation_name,
    is_computation,
    is_equation,
    named_value,
    prose_words,
    split_top_level,
    split_unit,
    text_answer,
)
from rewardlab.verify.math.options import CheckOptions
from rewardlab.verify.math.screen import MAX_DEPTH, bracket_depth, screen
from rewardlab.verify.math.units import number_before_symbol, unwrap_text
from rewardlab.verify.math.verdict import Outcome, Verdict
from rewardlab.verify.math.verdict import equivalent as _eq
from rewardlab.verify.math.verdict import not_equivalent as _ne
from rewardlab.verify.math.verdict import undecided as _undecided
from rewardlab.verify.math.worker import SympyPool, default_pool

__all__ = ["answer_parts", "check", "hedge_alternatives"]


class _Uncached(Exception):
    """Carries a verdict that must not be cached (timeouts and crashes may be transient)."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict


def check(
    reference: str,
    candidate: str,
    options: CheckOptions | None = None,
    *,
    pool: SympyPool | None = None,
    **overrides: object,
) -> Verdict:
    """Whether `candidate` is the same answer as `reference`.

    Args:
        reference: the gold answer (LaTeX or plain text, without `\\boxed{}`).
        candidate: the extracted answer to judge (see `extract_answer`).
        options: a `CheckOptions`; keyword `overrides` build one (`timeout=2.0`).
        pool: sympy workers to use (default: the process-wide pool).

    Returns:
        A three-valued `Verdict`. Undecided verdicts carry `error_kind`.

    Examples:
        >>> check("\\\\frac{1}{2}", "0.5").equivalent
        True
        >>> check("0.0000001", "0.0000002").equivalent
        False
    """
    opts = options or CheckOptions()
    if overrides:
        opts = replace(opts, **overrides)  # type: ignore[arg-type]
    if not isinstance(reference, str) or not isinstance(candidate, str):
        raise ConfigTypeError(f"reference and candidate must be str, got {type(reference).__name__}, {type(candidate).__name__}")
    # Answers past `100 * max_chars` (megabyte literals) are decided in linear time anyway;
    # caching one would push thousands of ordinary verdicts out of the cache.
    cached = pool is None and max(len(reference), len(candidate)) <= 100 * opts.max_chars
    key = (reference, candidate, opts)
    found = _VERDICTS.get(key) if cached else None
    if found is not None:
        return found
    try:
        verdict = _decide(reference, candidate, opts, pool)
    except _Uncached as exc:
        return exc.verdict
    if cached:
        _VERDICTS.put(key, verdict, kept_chars(reference, candidate, verdict.reason, verdict.reference, verdict.candidate))
    return verdict


# RL groups repeat the same answer many times; a cached verdict costs a dict look-up. At most
# 65,536 verdicts and 2^24 characters (<= 64 MiB of text; ordinary answers fill the entries
# first, at ~3M characters).
_VERDICTS: BoundedCache[Verdict] = BoundedCache(max_entries=1 << 16, max_chars=1 << 24)


# "or" between answers: spaced, or between brackets (`(11,7)or(7,11)`); never inside a word
_HEDGE_RE = re.compile(
    r"(?:^|[\s}$])(?:or|and/or)(?:[\s{\\$]|$)|(?<=[)\]])or(?=[(\[])|\\(?:text|mbox)\{\s*or\s*\}|\\vee|\\lor"
)


def hedge_alternatives(candidate: str) -> list[str]:
    """The answers a hedged candidate offers: `["1", "2"]` for `1 \\text{ or } 2`."""
    parts = (item for part in _HEDGE_RE.split(candidate) for item in split_top_level(part.strip(" ,")))
    return [item for item in parts if item]


@dataclass(frozen=True)
class _Run:
    """One verdict in progress: its options, its workers, and when its time is up (the deadline
    is shared by every entry of a structure, so a 10-entry tuple gets one timeout, not ten)."""

    opts: CheckOptions
    pool: SympyPool | None
    deadline: float


def _decide(reference: str, candidate: str, opts: CheckOptions, pool: SympyPool | None, *, read_sentence: bool = True) -> Verdict:
    # A long answer that is a bare literal (a megabyte of digits) is decided before `clean`,
    # whose linear passes cost ~1-2 s per megabyte of hostile text. Past `100 * max_chars`
    # nothing else is even cleaned (so grouped `1,000,...` literals count up to that length).
    bare = _long_number_verdict(reference.strip(), candidate.strip(), opts)
    if bare is not None:
        return bare
    if len(reference) > 100 * opts.max_chars or len(candidate) > 100 * opts.max_chars:
        side = "reference" if len(reference) > 100 * opts.max_chars else "candidate"
        return _undecided("unsupported", "screen", f"{side} is over {100 * opts.max_chars} characters and not a plain number", "", "")
    timed = _clock_verdict(reference, candidate)  # before `clean`, which strips `\text{ p.m.}` as a unit
    if timed is not None:
        return timed
    # `16 m` or `-130 km/h` against a bare number: the number with its unit (a bare symbol is
    # read as a unit only there, where it cannot be a variable of the answer)
    if opts.strip_units and (number := number_before_symbol(candidate, reference)) is not None:
        return _decide(reference, number, opts, pool)
    if opts.strip_units and (number := number_before_symbol(reference, candidate)) is not None:
        return _decide(number, candidate, opts, pool)
    run = _Run(opts, pool, time.monotonic() + opts.timeout)
    if opts.convert_units:
        converted = _units_verdict(reference, candidate, run)
        if converted is not None:
            return converted
    r, c = clean(reference, opts), clean(candidate, opts)
    for side, text in (("reference", r), ("candidate", c)):
        if bracket_depth(text) > MAX_DEPTH:  # the structure steps recurse once per level
            return _undecided("unsupported", "screen", f"{side} brackets nested over {MAX_DEPTH} deep", r, c)
    if not r:
        return _undecided("parse", "empty", "reference is empty", r, c)
    if not c:
        return _ne("empty", "candidate is empty", r, c)
    if read_sentence and is_sentence(c) and text_answer(r) is None and choice_letter(unwrap_text(r)) is None:
        return _sentence_verdict(reference, candidate, opts, pool, (r, c))
    return _decide_clean(r, c, run)


def _sentence_verdict(reference: str, candidate: str, opts: CheckOptions, pool: SympyPool | None, cleaned: tuple[str, str]) -> Verdict:
    """A candidate that is a sentence (a whole response passed to `check`) against a reference
    that is not text: its extracted answer is compared, never the sentence read as a product of
    letters. The answer is extracted once: what it holds is not read as a sentence again,
    which bounds the work whatever the response nests."""
    found = extract_answer(candidate).answer
    if found is None or len(found.strip()) >= len(candidate.strip()):
        return _ne("extract", "the candidate is a sentence and holds no answer (pass the extracted answer: extract_answer)", *cleaned)
    return _decide(reference, found, opts, pool, read_sentence=False)


def _decide_clean(r: str, c: str, run: _Run) -> Verdict:
    opts = run.opts
    rk, ck = comparison_key(r), comparison_key(c)
    if rk == ck:
        return _eq("string", "same answer after normalisation", r, c)
    long_verdict = _long_number_verdict(r, c, opts, (rk, ck))  # before the steps that rescan a long text
    if long_verdict is not None:
        return long_verdict
    as_intervals = _interval_reading(r, c)
    if as_intervals is not None:  # `x \ge 3` against `[3, \infty)`: compare the intervals
        return _decide_clean(*as_intervals, run)
    if _HEDGE_RE.search(r):  # a reference never hedges: `(11,7) or (7,11)` lists the parts of one answer
        r_parts = ", ".join(hedge_alternatives(r))
        c_parts = ", ".join(hedge_alternatives(c)) if _HEDGE_RE.search(c) else c
        if (r_parts, c_parts) != (r, c):
            return _decide_clean(r_parts, c_parts, run)
    elif _HEDGE_RE.search(c):
        offered = "; ".join(hedge_alternatives(c))
        return _ne("hedge", f"hedged: the candidate offers several answers ({offered})", r, c)
    if opts.equations:  # `x = 3` for `3`, `(p,q)=(3,2)` for `(3,2)` (and the reverse) without sympy
        if "=" not in c and (r_tuples := assignment_tuples(r)) is not None:
            return _decide_clean(r_tuples, c, run)  # `p=5,q=2` against `(5,2)`: the values in order
        if "=" not in r and (c_tuples := assignment_tuples(c)) is not None:
            return _decide_clean(r, c_tuples, run)
        r_rhs, c_rhs = named_value(r), named_value(c)
        if c_rhs is not None and "=" not in r:
            return _decide_clean(r, c_rhs, run)
        if r_rhs is not None and "=" not in c:
            return _decide_clean(r_rhs, c, run)
        if r_rhs is not None and c_rhs is not None and comparison_key(equation_name(r)) == comparison_key(equation_name(c)):
            return _decide_clean(r_rhs, c_rhs, run)  # the same name on both sides: its values
        if c_rhs is None and "=" not in r and _is_equation_in_unknowns(c) and parse_number(rk) is not None:
            # `2x = 6` for `6`: an equation is no value (sympy says the same after ~40 ms of parsing)
            return _ne("equation", "the candidate is an equation in its unknowns, the reference a number", r, c)
    # An option letter is the same option in either case when the candidate writes it (`a` for
    # `A`); a lower-case reference is an option only in brackets (`(a)`; a bare `a` may be a name).
    r_text = unwrap_text(r)
    letter = choice_letter(r_text, lowercase=r_text.startswith("("))
    if letter is not None:
        got = choice_letter(unwrap_text(c), lowercase=True)
        if got == letter:
            return _eq("choice", f"both choose option {letter}", r, c)
        return _ne("choice", f"reference is option {letter}, candidate is {got or c!r}", r, c)
    words = text_answer(r)
    if words is not None:
        got_words = text_answer(c)
        if got_words == words:
            return _eq("text", "same words", r, c)
        if got_words is not None or parse_number(ck) is not None:
            return _ne("text", "different text answers", r, c)
    rn, cn = parse_number(rk), parse_number(ck)
    if (rn is None) != (cn is None):  # `1,22` against `1.22`: the comma can only be a decimal mark
        rn = rn or _decimal_comma(rk)
        cn = cn or _decimal_comma(ck)
    if rn is not None and cn is not None:
        if numbers_equal(rn, cn, opts):
            return _eq("number", "equal numbers", r, c)
        return _ne("number", "different numbers", r, c)
    structured = _structure_verdict(r, c, run)
    if structured is not None:
        return structured
    return _symbolic(r, c, rn, cn, run)


def _is_equation_in_unknowns(s: str) -> bool:
    """One top-level `=` between two sides, at least one naming an unknown (`2x = 6`, `x+y=5`);
    not a list, a relation, a matrix or a computation stating its value."""
    if "\\begin" in s or not is_equation(s):
        return False
    lhs, rhs = split_top_level(s, "=")
    return not (is_computation(lhs) and is_computation(rhs))


def _long_number_verdict(r: str, c: str, opts: CheckOptions, keys: tuple[str, str] | None = None) -> Verdict | None:
    """Both answers plain literals, at least one too long for `parse_number` (a 3,000-digit
    integer): compared exactly, never refused by the screen. None when that does not apply:
    both short, or either not a literal (a long literal against `2^{10000}` stays with the
    screen, which refuses it: deciding it means sympy printing a 3,011-digit power). `keys`:
    the answers' comparison keys when the caller has them (one linear pass fewer)."""
    if len(r) <= SHORT_LITERAL_CHARS and len(c) <= SHORT_LITERAL_CHARS:
        return None  # keys are never longer than their answers
    rl, cl = (parse_literal(r), parse_literal(c)) if keys is None else (parse_literal(keys[0]), parse_literal(keys[1]))
    if rl is None or cl is None:
        return None
    if numbers_equal(rl, cl, opts):
        return _eq("number", "equal numbers (long literal, compared exactly)", r, c)
    return _ne("number", "different numbers (long literal, compared exactly)", r, c)


_DECIMAL_COMMA_RE = re.compile(r"-?\d+,\d+")


def _decimal_comma(key: str) -> Num | None:
    """`1,22` read as 1.22, for comparison with a single number only (`clean` has already
    turned a valid thousands grouping such as `1,000` into `1000`, so this comma is not one)."""
    return parse_number(key.replace(",", ".")) if _DECIMAL_COMMA_RE.fullmatch(key) else None


def _clock_verdict(reference: str, candidate: str) -> Verdict | None:
    """Clock times (clock.py), decided when both answers are times or the reference names
    a.m./p.m.; None otherwise (a bare `4:30` reference may be a ratio: the usual path decides)."""
    ref_time = parse_clock(reference)
    if ref_time is None:
        return None
    r, c = reference.strip(), candidate.strip()
    cand_time = parse_clock(candidate)
    if cand_time is None:
        if ref_time.half_named:
            return _ne("time", "the reference is a time of day, the candidate is not", r, c)
        return None
    if clock_equal(ref_time, cand_time):
        return _eq("time", "same time of day", r, c)
    if cand_time.readings & ref_time.readings:
        return _ne("time", "the candidate may be a.m. or p.m.; the reference is one time of day", r, c)
    return _ne("time", "different times of day", r, c)


def _units_verdict(reference: str, candidate: str, run: _Run) -> Verdict | None:
    """Both answers `number unit` with units sympy knows: compare the values in SI units.
    None when that does not apply (the usual path then strips the units)."""
    rs, cs = split_unit(reference), split_unit(candidate)
    if rs is None or cs is None:
        return None
    plain = replace(run.opts, strip_units=True)
    rn = parse_number(comparison_key(clean(rs[0], plain)))
    cn = parse_number(comparison_key(clean(cs[0], plain)))
    if rn is None or cn is None:
        return None
    if not run.opts.allow_symbolic:  # the units' SI factors come from sympy
        return _undecided("unsupported", "fastpath", "unit conversion needs sympy and allow_symbolic is False", reference, candidate)
    try:
        workers = run.pool or default_pool()
        rf = workers.call("unit_in_si", (rs[1],), timeout=_remaining(run))
        cf = workers.call("unit_in_si", (cs[1],), timeout=_remaining(run))
    except (TimeoutError, RuntimeError):
        return None  # conversion unavailable: compare with units stripped instead
    if rf is None or cf is None:
        return None
    r_text, c_text = f"{rs[0]} {rs[1]}", f"{cs[0]} {cs[1]}"
    if rf[1] != cf[1]:
        return _ne("units", f"different dimensions ({rf[1]} vs {cf[1]})", r_text, c_text)
    # Exact after conversion (sympy's unit factors are exact rationals): 1.5 hours is 90 minutes.
    same = rn.value * Fraction(rf[0]) == cn.value * Fraction(cf[0])
    return (_eq if same else _ne)("units", f"{'equal' if same else 'different'} in SI units ({rf[1]})", r_text, c_text)


# -- structures: tuples, intervals, sets, unions, matrices ---------------------------------------
_MATRIX_RE = re.compile(r"^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^}]*\})?(.*)\\end\{\1\}$", re.DOTALL)
# `pmatrix`, `bmatrix`, `Bmatrix`, `matrix` and `array` differ only in their delimiters: one matrix.
# `vmatrix`/`Vmatrix` are a determinant (a number) and a norm: not the same object.
_MATRIX_KINDS = {"vmatrix": "determinant", "Vmatrix": "norm"}


def _shape(s: str) -> tuple[str, list[str]] | None:
    """(kind, items) for a structured answer, or None for a single value.

    Kinds: `set` (`\\{...\\}` or a bare comma list: order does not matter), `union`, `matrix`
    (items are rows joined by `&`), and bracket pairs like `()`, `[)`, `(]` (ordered).
    """
    m = _MATRIX_RE.match(s)
    if m and "\\begin{" not in m.group(2) and "\\end{" not in m.group(2):  # one matrix, not `A + B`
        rows = [row.strip() for row in m.group(2).split("\\\\") if row.strip()]
        return _MATRIX_KINDS.get(m.group(1), "matrix"), rows
    if "\\cup" in s:
        parts = [p.strip() for p in s.split("\\cup")]
        if len(parts) > 1 and all(parts):
            return "union", parts
    if s.startswith("\\{") and s.endswith("\\}"):
        return "set", _entries(s[2:-2])
    if len(s) >= 2 and s[0] in "([" and s[-1] in ")]":
        body = s[1:-1].strip()
        if _MATRIX_RE.match(body):  # `(\begin{pmatrix}..\end{pmatrix})`, `\left[\begin{array}..\right]`
            return _shape(body)
        inner = _entries(body)
        if len(inner) > 1 and split_top_level(s) == [s] and _balanced(body):
            # `[1, 2, 3]` is a list: an interval has two ends, so three entries are a sequence
            return ("()" if s[0] + s[-1] == "[]" and len(inner) > 2 else s[0] + s[-1]), inner
    items = _entries(s)
    if len(items) > 1:
        return "set", items
    return _plus_minus(s)


def _entries(s: str) -> list[str]:
    """Entries separated by top-level commas, or by semicolons when there is no comma
    (`(0;-2;6)`, `-12;-11;-10`: the separator where the comma is a decimal mark)."""
    items = split_top_level(s)
    return items if len(items) > 1 else split_top_level(s, ";")


_PM_RE = re.compile(r"\\pm(?![a-zA-Z])")
_SIMPLE_TERM_RE = re.compile(r"[\w.\\{}]+")


def _plus_minus(s: str) -> tuple[str, list[str]] | None:
    """`a \\pm b` is the set of its two values (`\\pm 2021` is {-2021, 2021}); one `\\pm` only."""
    parts = _PM_RE.split(s)
    if len(parts) != 2 or not parts[1].strip():
        return None
    a, b = parts[0].strip(), parts[1].strip()
    term = b if _SIMPLE_TERM_RE.fullmatch(b) else f"({b})"
    return "set", [f"{a}-{term}" if a else f"-{term}", f"{a}+{term}" if a else term]


def answer_parts(answer: str, options: CheckOptions | None = None) -> tuple[str, list[str]] | None:
    """(kind, entries) of a structured answer (`_shape` after cleaning), None for one value."""
    return _shape(clean(answer, options or CheckOptions()))


# -- inequalities read as intervals ---------------------------------------------------------------
_INTERVAL_KINDS = {"()", "[]", "(]", "[)"}


def _as_intervals(s: str) -> str | None:
    """`inequality_interval`, also for alternatives: `x < -1 \\text{ or } x > 3` is the union
    `(-\\infty,-1)\\cup(3,\\infty)` (an "or" of inequalities describes a set, not a hedge)."""
    parts = [inequality_interval(part.strip()) for part in _HEDGE_RE.split(s)]
    if not parts or any(part is None for part in parts):
        return None
    return "\\cup".join(part for part in parts if part is not None)


def _is_interval_set(shape: tuple[str, list[str]] | None) -> bool:
    return shape is not None and (shape[0] == "union" or (shape[0] in _INTERVAL_KINDS and len(shape[1]) == 2))


def _interval_reading(r: str, c: str) -> tuple[str, str] | None:
    """(reference, candidate) with inequalities rewritten as intervals, when the other answer is
    an interval or a union of them; None when that does not apply."""
    r_shape, c_shape = _shape(r), _shape(c)
    if _is_interval_set(c_shape) and r_shape is None:
        intervals = _as_intervals(r)
        return (intervals, c) if intervals is not None else None
    if _is_interval_set(r_shape) and c_shape is None:
        intervals = _as_intervals(c)
        return (r, intervals) if intervals is not None else None
    if r_shape is None and c_shape is None:  # `x \ge 5` against `x \le 5`: both one variable's intervals
        rv, cv = inequality_variable(r), inequality_variable(c)
        if rv is not None and cv is not None and comparison_key(rv) == comparison_key(cv):
            ri, ci = inequality_interval(r), inequality_interval(c)
            if ri is not None and ci is not None:
                return ri, ci
    return None


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return False
    return depth == 0


def _structure_verdict(r: str, c: str, run: _Run) -> Verdict | None:
    rs, cs = _shape(r), _shape(c)
    if rs is None and cs is None:
        return None
    if rs is None or cs is None:
        if "\\begin{" in (c if cs is None else r):
            return None  # arithmetic on matrices (`A + B`, `AB`): sympy evaluates it
        return _ne("structure", "one answer is a single value, the other a collection", r, c)
    (rkind, ritems), (ckind, citems) = rs, cs
    if rkind in ("set", "union"):  # a set has no repeated members: `{1, 1, 2}` is `{1, 2}`
        ritems = _distinct(ritems)
    if ckind in ("set", "union"):
        citems = _distinct(citems)
    if rkind != ckind:
        bare = (rkind == "set" and not r.startswith("\\{")) or (ckind == "set" and not c.startswith("\\{"))
        if {rkind, ckind} == {"set", "()"} and bare:
            rkind = ckind = "()"  # a bare list `1, 2` and a tuple `(1, 2)`: one answer, entries in order
        else:
            return _ne("structure", f"different kinds of collection ({rkind} vs {ckind})", r, c)
    if len(ritems) != len(citems):
        return _ne("structure", f"{len(ritems)} entries vs {len(citems)}", r, c)
    if rkind in ("matrix", "determinant", "norm"):
        rrows = [split_top_level(row, "&") for row in ritems]
        crows = [split_top_level(row, "&") for row in citems]
        if [len(row) for row in rrows] != [len(row) for row in crows]:
            return _ne("structure", "matrix shapes differ", r, c)
        ritems = [cell for row in rrows for cell in row]
        citems = [cell for row in crows for cell in row]
    if rkind in ("set", "union"):
        return _match_unordered(ritems, citems, run, r, c)
    return _match_items(ritems, citems, run, r, c)


def _distinct(items: list[str]) -> list[str]:
    return list({comparison_key(item): item for item in items}.values())


def _item_verdict(ref_item: str, cand_item: str, run: _Run) -> Verdict:
    if not ref_item or not cand_item:
        return _ne("empty", "an entry is empty", ref_item, cand_item)
    return _decide_clean(ref_item, cand_item, run)


def _match_items(ritems: list[str], citems: list[str], run: _Run, r: str, c: str) -> Verdict:
    """Ordered entries (tuples, intervals, matrices): entry i against entry i."""
    for i, (ref_item, cand_item) in enumerate(zip(ritems, citems, strict=True)):
        v = _item_verdict(ref_item, cand_item, run)
        if not v.decided:
            return _undecided(v.error_kind or "unsupported", "structure", f"entry {i + 1}: {v.reason}", r, c)
        if not v.equivalent:
            return _ne("structure", f"entry {i + 1} ({ref_item}) differs from {cand_item}", r, c)
    return _eq("structure", "every entry equal", r, c)


# Past this many entries not paired by their text, pairing them by value (each reference entry
# against each candidate entry) is quadratic: the verdict is left undecided instead.
_PAIRWISE_MAX = 64


def _match_unordered(ritems: list[str], citems: list[str], run: _Run, r: str, c: str) -> Verdict:
    """Sets and unions: every reference entry has its own equal candidate entry, in any order.
    Entries written alike are paired first by a dictionary (linear); the rest pairwise."""
    by_key: dict[str, list[str]] = {}
    for item in citems:
        by_key.setdefault(comparison_key(item), []).append(item)
    rest: list[str] = []
    for item in ritems:
        same = by_key.get(comparison_key(item))
        if same:
            same.pop()
        else:
            rest.append(item)
    left = [item for items in by_key.values() for item in items]
    if len(rest) > _PAIRWISE_MAX:
        return _undecided("unsupported", "structure", f"{len(rest)} entries are written differently: too many to pair by value", r, c)
    undecided: Verdict | None = None
    for ref_item in rest:
        for j, cand_item in enumerate(left):
            v = _item_verdict(ref_item, cand_item, run)
            if v.equivalent:
                left.pop(j)
                break
            if not v.decided:
                undecided = v
        else:
            if undecided is not None:
                return _undecided(undecided.error_kind or "unsupported", "structure", f"entry {ref_item}: {undecided.reason}", r, c)
            return _ne("structure", f"entry {ref_item} has no equal counterpart", r, c)
    return _eq("structure", "every entry equal", r, c)


# -- sympy --------------------------------------------------------------------------------------
def _remaining(run: _Run) -> float:
    left = run.deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _symbolic(r: str, c: str, rn: Num | None, cn: Num | None, run: _Run) -> Verdict:
    opts = run.opts
    if rn is not None and cn is None and (words := prose_words(c)):
        # a number against words (`week 3`, `c(t)` spelt out, a model's name): decided without
        # sympy, whose answer (a product of unknowns is no number) took a parse of 10-100 ms
        return _ne("words", f"the reference is a number, the candidate has words ({', '.join(words[:3])})", r, c)
    problem = screen(r, max_chars=opts.max_chars)
    if problem:
        return _undecided("unsupported", "screen", f"reference refused before sympy: {problem}", r, c)
    problem = screen(c, max_chars=opts.max_chars)
    if problem:
        return _undecided("unsupported", "screen", f"candidate refused before sympy: {problem}", r, c)
    if not opts.allow_symbolic:
        return _undecided("unsupported", "fastpath", "needs sympy and allow_symbolic is False", r, c)
    radians = opts.degrees == "radians"
    workers = run.pool or default_pool()
    try:
        # A decimal on one side is a rounding (or not) of the other's exact value: compare
        # with the significant-figure rule rather than sympy's exact equality.
        if (rn is not None and rn.place is not None) or (cn is not None and cn.place is not None):
            other = c if rn is not None else r
            value = workers.call("numeric", (other, radians), timeout=_remaining(run))
            if value is not None:
                exact = Num(Fraction(value))
                same = numbers_equal(rn, exact, opts) if rn is not None else numbers_equal(exact, cn, opts)  # type: ignore[arg-type]
                return (_eq if same else _ne)("number", f"decimal vs value {value[:20]}", r, c)
        args = (r, c, opts.rel_tol, opts.equations, radians)
        outcome, reason, _ref_sympy, _cand_sympy = workers.call("compare", args, timeout=_remaining(run))
    except TimeoutError:
        raise _Uncached(_undecided("timeout", "timeout", f"sympy took longer than {opts.timeout}s (worker killed)", r, c)) from None
    except WorkerCrashed as exc:
        raise _Uncached(_undecided("crash", "crash", f"sympy worker died: {exc}", r, c)) from None
    except RuntimeError as exc:
        return _undecided("unsupported", "sympy", f"sympy failed: {exc}", r, c)
    unparsed = reason.startswith("reference could not be parsed")
    if unparsed and opts.unparsed_reference == "text":  # keys differ: the string step ran first
        return _ne("text", f"{reason}; compared as text, the answers differ", r, c)
    kind = "parse" if unparsed else "unsupported"
    return Verdict(Outcome(outcome), reason, "sympy", r, c, kind if outcome == "undecided" else None)
