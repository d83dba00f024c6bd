"""One pick per problem from a candidate file, written as stamped rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.select.answers import answer_classes
from rewardlab.select.candidates import Candidates
from rewardlab.select.options import PICK, Equivalence, PickMethod, WeightMap
from rewardlab.select.scores import to_weights
from rewardlab.select.selectors import (
    Selection,
    best_of_n,
    filtered_vote,
    hybrid_vote,
    majority_vote,
    weighted_vote,
)

__all__ = ["pick", "pick_config", "write_picks"]


def pick(
    candidates: Candidates,
    method: PickMethod,
    *,
    equivalence: Equivalence = PICK.equivalence,
    weights: WeightMap = PICK.weights,
    keep: float = PICK.keep,
    top_k: int = PICK.top_k,
) -> Selection:
    """Run one selector (`best_of_n`, `majority`, `weighted`, `hybrid`, `filtered`) on a file;
    the options are described, with their defaults, by `options.PickOptions`."""
    votes = method != "best_of_n"
    if votes and candidates.answers is None:
        raise InputError(f"{method} votes over answers: the file has no answers column", source=candidates.source)
    if method != "majority" and candidates.scores is None:
        raise InputError(f"{method} needs scores: the file has no scores column", source=candidates.source)
    classes = answer_classes(candidates.answers, equivalence=equivalence) if votes and candidates.answers is not None else None
    s, m = candidates.scores, candidates.mask
    if method == "best_of_n":
        return best_of_n(s, m)
    if method == "majority":
        return majority_vote(classes, m)
    if method == "weighted":
        return weighted_vote(classes, to_weights(s, weights), m)
    if method == "hybrid":
        return hybrid_vote(classes, s, m, top_k=top_k)
    if method == "filtered":
        return filtered_vote(classes, s, m, keep=keep)
    raise InputError(f"unknown method {method!r}; use best_of_n, majority, weighted, hybrid or filtered", source=candidates.source)


def pick_config(method: str, **options: object) -> dict[str, object]:
    """The description of a pick that is hashed into its rows' `spec_hash`."""
    return {"select": method, **options}


def write_picks(
    candidates: Candidates,
    selection: Selection,
    method: str,
    output: str | Path,
    *,
    unreadable: Sequence[InputError] = (),
    **options: object,
) -> Path:
    """One row per problem (every problem, abstentions included): the picked candidate, its
    answer, score and label, stamped with `rewardlab_version` and `spec_hash`; rows are in file
    order and carry their `line`.

    `unreadable` (what `load_candidates(..., on_error=...)` reported) each get an error row
    (`status: "error"`, `error_kind: "invalid_input"`) in their place, so no row of the file
    goes missing from the output.
    """
    from rewardlab.core import stamp
    from rewardlab.core.sample import content_hash
    from rewardlab.runner.io import RowWriter

    stamps = stamp(content_hash(pick_config(method, **options))).to_dict()
    rows = list(zip(_lines(candidates), _pick_rows(candidates, selection, method, stamps), strict=True))
    rows += [(exc.line or 0, {**_error_row(exc, method), **stamps}) for exc in unreadable]
    out = Path(output)
    with RowWriter(out) as writer:
        for _, row in sorted(rows, key=itemgetter(0)):
            writer.write(row)
    return out


def _lines(candidates: Candidates) -> list[int]:
    return candidates.lines if candidates.lines is not None else list(range(1, candidates.n_problems + 1))


def _pick_rows(candidates: Candidates, selection: Selection, method: str, stamps: dict[str, str]) -> list[dict[str, object]]:
    """Each problem's row: the picked candidate (None: abstained), its answer, its score (None
    when it has none), the credit, then the stamps. Built a column at a time: each column is
    gathered from the arrays at once and made Python values by one `tolist`."""
    chosen = np.asarray(selection.chosen)
    picked = chosen >= 0
    columns: dict[str, Iterable[object]] = {
        "problem": range(len(chosen)), "line": _lines(candidates), "method": repeat(method), "status": repeat("ok"),
        "chosen": _where(picked, chosen.tolist()),
    }  # fmt: skip
    if candidates.answers is not None:
        columns["answer"] = _where(picked, _gather(candidates.answers, chosen).tolist())
    if candidates.scores is not None:
        scores = _gather(np.asarray(candidates.scores, dtype=np.float64), chosen)
        columns["score"] = _where(picked & ~np.isnan(scores), scores.tolist())
    if candidates.correct is not None:  # expected correctness under random tie-breaking
        columns["credit"] = np.asarray(selection.credit(candidates.correct), dtype=np.float64).tolist()
    columns.update((name, repeat(value)) for name, value in stamps.items())
    names = list(columns)
    return [dict(zip(names, values, strict=False)) for values in zip(*columns.values(), strict=False)]  # repeat() ends with the rest


def _gather(values: NDArray[Any], chosen: NDArray[np.int64]) -> NDArray[Any]:
    """Each problem's value at its chosen candidate (any value where it abstains)."""
    if values.shape[1] == 0:  # no candidates: every problem abstains
        return np.full(len(chosen), None if values.dtype == object else np.nan, dtype=values.dtype)
    return values[np.arange(len(chosen)), np.maximum(chosen, 0)]


def _where(keep: NDArray[np.bool_], values: list[object]) -> list[object]:
    """`values`, None where `keep` is False."""
    return values if keep.all() else [v if k else None for k, v in zip(keep.tolist(), values, strict=True)]


def _error_row(exc: InputError, method: str) -> dict[str, object]:
    return {"problem": None, "line": exc.line, "method": method, "status": "error", "chosen": None,
            "error_kind": "invalid_input", "error": exc.reason}  # fmt: skip
