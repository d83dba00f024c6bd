"""Answer equivalence classes for votes: `answer_classes(answers, equivalence=...)`.

A vote counts answers, so candidates whose answers mean the same must share a class. Three
notions of "the same":

- `"exact"`: equal strings;
- `"normalized"`: equal after `verify.text.normalize_text` (NFKC, case-folded, whitespace
  collapsed);
- `"math"`: equivalent under `verify.math.check` (`\\frac{1}{2}`, `0.5` and `\\dfrac12` are one
  class). Exactly equal strings are grouped first (vectorised); only the distinct answers of a
  problem are then compared, each against the first-seen member of every class so far, which
  is passed as the `reference` (it fixes the precision a decimal must have). An undecided
  verdict never merges two classes.

Answers that are not strings compare by their `str()` (`1`, `1.0` and `True` are three answers,
`1` and `"1"` one). Class ids are `(problems, n)` int64 in order of first appearance within each
problem (so the first-seen answer wins a tie under `ties="first"`); `-1` marks a missing answer
or padding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import chain, islice

import numpy as np
from numpy.typing import NDArray

from rewardlab.core.choices import check_choice
from rewardlab.errors import ArrayError, ConfigTypeError
from rewardlab.select.options import Equivalence

__all__ = ["answer_classes", "answer_votes", "renumber_classes"]

I64 = NDArray[np.int64]


def pad_answers(answers: Sequence[Sequence[str | None]]) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """Ragged answer lists as a `(problems, n_max)` object array (None-padded) and its mask."""
    lengths = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    width = int(lengths.max(initial=0))
    flat = np.fromiter(chain.from_iterable(answers), dtype=object, count=int(lengths.sum()))
    if (lengths == width).all():
        out = flat.reshape(len(answers), width)
    else:
        out = np.full((len(answers), width), None, dtype=object)
        out[np.arange(width)[None, :] < lengths[:, None]] = flat  # row-major, as chained
    return out, np.asarray(out != None, dtype=bool)  # noqa: E711 (elementwise)


# Rows up to this wide get ids from a scan over columns: O(n^2) comparisons per row, but each
# step is a few branch-free passes over all rows, still ~2x faster than the row-wise sort at 126
# columns. Wider rows take the sort (O(n log n)). The limit keeps the scan's id + 1 (and the next
# id + 1) within int8.
_COLUMN_SCAN_MAX_WIDTH = 126


def _first_appearance_ids(keys: I64) -> I64:
    """Per-row class ids numbered by first appearance, from integer keys `(P, n)` (>= -1; -1
    is no answer and gets id -1)."""
    if keys.shape[1] == 0:
        return np.zeros(keys.shape, dtype=np.int64)
    if keys.shape[1] <= _COLUMN_SCAN_MAX_WIDTH:
        return _ids_by_column_scan(keys)
    return _ids_by_row_sort(keys)


def _ids_by_column_scan(keys: I64) -> I64:
    """Column by column: an answer takes the id of an earlier equal answer in its row, else the
    row's next id. Ids are kept as id + 1 (0: no answer), so "the id of an earlier equal answer"
    is the maximum of `equal * (id + 1)` over earlier columns (equal earlier answers all hold the
    same id; 0 when there is none): multiplications, where `np.where` on a dense mask branches."""
    small = keys.max(initial=0) < 2**31
    columns = np.ascontiguousarray(keys.T, dtype=np.int32 if small else np.int64)  # (n, P)
    ids1 = np.empty(columns.shape, dtype=np.int8)  # id + 1 <= n <= _COLUMN_SCAN_MAX_WIDTH
    next_id1 = np.ones(columns.shape[1], dtype=np.int8)
    for j, column in enumerate(columns):
        earlier1 = np.multiply(columns[:j] == column, ids1[:j]).max(axis=0, initial=0)
        new = (earlier1 == 0) & (column >= 0)
        ids1[j] = earlier1 + new * next_id1
        next_id1 += new
    return (ids1 - 1).T.astype(np.int64, order="C")


def _ids_by_row_sort(keys: I64) -> I64:
    """Row-wise stable sort (no global `np.unique`): equal keys become adjacent with their first
    column leading; a group's id is the number of groups whose first column comes earlier."""
    n = keys.shape[1]
    present = keys >= 0
    sentinel = np.iinfo(np.int64).max  # absent entries sort last and never start a class
    k = np.where(present, keys, sentinel)
    order = np.argsort(k, axis=1, kind="stable")
    ordered = np.take_along_axis(k, order, axis=1)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts &= ordered != sentinel
    # the sorted position where each position's group starts, then that start's column
    start_pos = np.maximum.accumulate(np.where(starts, np.arange(n), 0), axis=1)
    first_col = np.take_along_axis(order, start_pos, axis=1)
    is_first = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(is_first, order, starts, axis=1)
    rank = np.cumsum(is_first, axis=1) - 1  # id of a class, at its first column
    ids_sorted = np.take_along_axis(rank, first_col, axis=1)
    out = np.empty(keys.shape, dtype=np.int64)
    np.put_along_axis(out, order, ids_sorted, axis=1)
    return np.where(present, out, -1)


def renumber_classes(classes: NDArray[np.int64]) -> I64:
    """Class ids renumbered `0..k-1` by first appearance in each row (-1 stays -1); used after
    taking a subset of candidates, whose ids may exceed the subset's width."""
    c = np.asarray(classes, dtype=np.int64)
    return _first_appearance_ids(np.where(c >= 0, c, -1))


def _codes_of(values: Callable[[], Iterable[Hashable]]) -> tuple[I64, list[Hashable]]:
    """Integer codes of the values `values()` yields (equal values, equal codes) and the distinct
    values, both in first-seen order: one dict look-up per value, no sort of the strings.

    `values` is called again when there are more distinct values than the fast path can code.
    """
    index: defaultdict[Hashable, str] = defaultdict()
    # A new value's code is a one-character string: joined and encoded as UTF-32 the codes are
    # an int array at memcpy speed, where turning a list of Python ints into an array costs
    # about as much as the look-ups themselves.
    index.default_factory = lambda: chr(len(index))
    try:
        joined = "".join(map(index.__getitem__, values()))
    except ValueError:  # chr(): more distinct values than code points
        by_int: defaultdict[Hashable, int] = defaultdict()
        by_int.default_factory = by_int.__len__
        codes = np.fromiter(map(by_int.__getitem__, values()), dtype=np.int64)
        return codes, list(by_int)
    # surrogatepass: codes 0xD800-0xDFFF are lone surrogates, which strict UTF-32 refuses
    raw = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return raw.astype(np.int64), list(index)


def _as_text(value: object) -> str | None:
    return None if value is None else str(value)


# Arrow's hash table beats a dict once many answers are distinct (a compact table of hashes over
# one UTF-8 buffer, against a dict entry and cache misses per string: 1M answers of which 450k
# distinct take ~0.25 s against ~0.6 s); with few distinct strings the dict wins (~2x), as every
# look-up then hits a small table. The first answers decide; inputs shorter than the sample
# always take the dict.
_ARROW_SAMPLE = 1 << 16
_ARROW_MIN_DISTINCT_IN_SAMPLE = _ARROW_SAMPLE // 256
_ARROW_BLOCK_ROWS = 4096


def _factorize_answers(rows: Sequence[Sequence[object]], with_distinct: bool) -> tuple[I64, list[str | None]]:
    """Codes of the answers in row-major order (-1: None; equal within a row for equal `str()`:
    1, 1.0 and True are one dict key but three strings) and the distinct answers the codes
    index (may be left empty unless `with_distinct`)."""
    if _many_distinct(rows):
        by_arrow = _codes_by_arrow(rows, with_distinct)
        if by_arrow is not None:
            return by_arrow
    try:
        codes, distinct = _codes_of(lambda: chain.from_iterable(rows))
        if not set(map(type, distinct)) <= {str, type(None)}:
            codes, distinct = _codes_of(lambda: map(_as_text, chain.from_iterable(rows)))
    except TypeError:  # an unhashable answer: it still has a str()
        codes, distinct = _codes_of(lambda: map(_as_text, chain.from_iterable(rows)))
    if None in distinct:
        codes[codes == distinct.index(None)] = -1
    return codes, distinct  # type: ignore[return-value]  # str or None, checked or made so above


def _many_distinct(rows: Sequence[Sequence[object]]) -> bool:
    head = list(islice(chain.from_iterable(rows), _ARROW_SAMPLE))
    try:
        return len(head) == _ARROW_SAMPLE and len(set(head)) > _ARROW_MIN_DISTINCT_IN_SAMPLE
    except TypeError:  # unhashable answers go the dict way, by their str()
        return False


def _codes_by_arrow(rows: Sequence[Sequence[object]], with_distinct: bool) -> tuple[I64, list[str | None]] | None:
    """Codes and distinct answers (empty unless `with_distinct`) by Arrow's `dictionary_encode`,
    None when Arrow cannot take the answers as they are.

    Rows are encoded a block at a time: a row's ids only need codes that agree within the row,
    and a block's table stays in cache (1M answers, 450k distinct: 90 ms against 140 ms for one
    table). The codes of a block are offset past the distinct answers of the blocks before it.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not set(map(type, chain.from_iterable(rows))) <= {str, type(None)}:
        return None  # Arrow would take bytes as their UTF-8 text, not as their str()
    try:
        array = pa.array(rows, type=pa.list_(pa.string()))
    except (pa.ArrowException, UnicodeError):  # e.g. a lone surrogate, which has no UTF-8
        return None
    if not isinstance(array, pa.ListArray):  # chunked: more than 2 GiB of text
        return None
    offsets, answers = array.offsets.to_numpy(), array.flatten()
    codes, distinct, seen = [], [], 0
    for start in range(0, len(array), _ARROW_BLOCK_ROWS):
        first, end = offsets[start], offsets[min(start + _ARROW_BLOCK_ROWS, len(array))]
        encoded = pc.dictionary_encode(answers.slice(first, end - first))
        block = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64)
        codes.append(np.where(block >= 0, block + seen, -1))
        seen += len(encoded.dictionary)
        if with_distinct:
            distinct += encoded.dictionary.to_pylist()
    return np.concatenate(codes), distinct


def _answer_keys(rows: Sequence[Sequence[object]], equivalence: Equivalence) -> tuple[I64, list[str | None]]:
    """Integer keys per answer, row-major (equal keys, equal exact or normalised answers; -1: no
    answer), and the distinct answers the exact keys index. Normalisation runs once per
    distinct string, not once per candidate."""
    codes, distinct = _factorize_answers(rows, with_distinct=equivalence != "exact")
    if equivalence == "normalized":
        from rewardlab.verify.text import normalize_text

        # `distinct` may repeat a string (Arrow encodes blocks of rows apart): dedupe first
        normal = {a: normalize_text(a) for a in dict.fromkeys(distinct) if a is not None}
        canonical: dict[str, int] = {}
        lookup = [-1 if a is None else canonical.setdefault(normal[a], len(canonical)) for a in distinct]
        lookup.append(-1)  # read by the code -1 (no answer)
        return np.asarray(lookup, dtype=np.int64)[codes], distinct
    return codes, distinct


def _rows_of(answers: Sequence[Sequence[object]] | NDArray[np.object_]) -> tuple[Sequence[Sequence[object]], I64 | None, tuple[int, int]]:
    """The answers as rows to chain, their lengths (None: all `n_max` long) and `(problems, n_max)`."""
    if isinstance(answers, np.ndarray):
        if answers.ndim != 2:
            raise ArrayError("answers", f"must be per-problem lists of answers, got shape {answers.shape}")
        return [answers.reshape(-1).tolist()], None, (answers.shape[0], answers.shape[1])
    lengths = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    width = int(lengths.max(initial=0))
    return answers, None if (lengths == width).all() else lengths, (len(answers), width)


def _pad(flat: I64, lengths: I64 | None, shape: tuple[int, int]) -> I64:
    """Row-major flat keys as `(problems, n_max)`, padded with -1."""
    if lengths is None:
        return flat.reshape(shape)
    out = np.full(shape, -1, dtype=np.int64)
    out[np.arange(shape[1])[None, :] < lengths[:, None]] = flat  # row-major, as chained
    return out


def _merge_math(classes: I64, keys: I64, distinct: Sequence[str | None], options: object | None) -> I64:
    """Merge exact-string classes whose answers `verify.math.check` finds equivalent; `keys`
    index the exact answers in `distinct`.

    Equivalence of two answer strings does not depend on the problem, and the same few answers
    ("2", "\\frac{1}{2}") recur across problems, so each pair of distinct strings is checked
    once per call.

    Two passes: the first decides every row whose pairs the fast paths decide (most rows);
    a row with a pair that needs sympy while no sympy worker is ready yet launches one in the
    background and is put aside (once a worker is ready, such rows are decided at once). The
    second pass merges the rows put aside. The worker's start (~1-2 s) thus overlaps the first
    pass instead of stalling it. Each row's classes are the same as in one pass: a pair gets
    the same verdict in either.
    """
    from dataclasses import replace

    from rewardlab.verify.math import CheckOptions, check, default_pool, warm_up

    if options is not None and not isinstance(options, CheckOptions):
        raise ConfigTypeError(f"options must be a verify.math.CheckOptions, got {type(options).__name__}")
    opts = options or CheckOptions()
    fast = replace(opts, allow_symbolic=False)
    verdicts: dict[tuple[int, int], bool] = {}

    def equivalent(rep: int, key: int, *, with_sympy: bool) -> bool | None:
        """The pair's verdict; None when it needs sympy, `with_sympy` is False and no worker
        is ready yet (one is then launched in the background)."""
        found = verdicts.get((rep, key))
        if found is None:
            reference, candidate = str(distinct[rep]), str(distinct[key])
            verdict = check(reference, candidate, fast)
            if verdict.needs_symbolic and opts.allow_symbolic:
                if not with_sympy and not default_pool().has_ready_worker():
                    warm_up(wait=False)
                    return None
                verdict = check(reference, candidate, opts)
            found = verdicts[rep, key] = verdict.equivalent
        return found

    out = classes.copy()
    later: list[int] = []
    for row in np.flatnonzero(classes.max(axis=1, initial=-1) >= 1).tolist():  # problems with >1 string
        merged = _merge_row(classes[row], keys[row], lambda rep, key: equivalent(rep, key, with_sympy=False))
        if merged is None:
            later.append(row)
        else:
            out[row] = merged
    for row in later:
        merged = _merge_row(classes[row], keys[row], lambda rep, key: equivalent(rep, key, with_sympy=True))
        assert merged is not None  # with sympy every pair is decided
        out[row] = merged
    return out


def _merge_row(ids: I64, keys: I64, equivalent: Callable[[int, int], bool | None]) -> I64 | None:
    """One problem's class ids after merging: each exact class, in order of first appearance,
    joins the first merged class whose first-seen answer (the reference) it is equivalent to.
    None as soon as `equivalent` cannot decide a pair yet."""
    firsts = [int(np.argmax(ids == k)) for k in range(int(ids.max()) + 1)]
    reps: list[int] = []  # key of the first-seen answer of each merged class
    mapping: list[int] = []
    for col in firsts:
        key = int(keys[col])
        target = None
        for j, rep in enumerate(reps):
            same = equivalent(rep, key)
            if same is None:
                return None
            if same:
                target = j
                break
        if target is None:
            reps.append(key)
            target = len(reps) - 1
        mapping.append(target)
    lookup = np.array(mapping, dtype=np.int64)
    merged: I64 = np.where(ids >= 0, lookup[np.maximum(ids, 0)], -1)
    return merged


def answer_classes(
    answers: Sequence[Sequence[str | None]] | NDArray[np.object_],
    *,
    equivalence: Equivalence = "math",
    options: object | None = None,
) -> I64:
    """`(problems, n_max)` answer-class ids for ragged per-problem answer lists.

    Args:
        answers: per problem, each candidate's extracted final answer (None: no answer).
        equivalence: `"exact"`, `"normalized"` or `"math"` (see the module docstring).
        options: a `verify.math.CheckOptions` for `"math"` (default options otherwise).

    Examples:
        >>> answer_classes([["\\\\frac{1}{2}", "0.5", "3"]], equivalence="math").tolist()
        [[0, 0, 1]]
        >>> answer_classes([["a", None, "a"]], equivalence="exact").tolist()
        [[0, -1, 0]]
    """
    check_choice("equivalence", equivalence, Equivalence, error=ArrayError)
    rows, lengths, shape = _rows_of(answers)
    flat, distinct = _answer_keys(rows, equivalence)
    keys = _pad(flat, lengths, shape)
    classes = _first_appearance_ids(keys)
    if equivalence == "math":
        classes = _merge_math(classes, keys, distinct, options)
    return classes


def answer_votes(
    answers: Sequence[str | None], *, equivalence: Equivalence = "math", options: object | None = None,
) -> list[tuple[str, int]]:
    """One problem's vote: each answer class's first-seen answer and its count, most voted first
    (equal counts in order of first appearance). A missing answer (None) does not vote.

    Examples:
        >>> answer_votes(["3", "0.5", None, "\\\\frac{1}{2}"])
        [('0.5', 2), ('3', 1)]
    """
    ids = answer_classes([list(answers)], equivalence=equivalence, options=options)[0]
    voted = ids[ids >= 0]
    if not voted.size:
        return []
    counts = np.bincount(voted)
    first = [int(np.argmax(ids == k)) for k in range(len(counts))]
    order = sorted(range(len(counts)), key=lambda k: -counts[k])  # stable: first-seen among equal counts
    return [(str(answers[first[k]]), int(counts[k])) for k in order]
