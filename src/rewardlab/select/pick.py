"""One pick per problem from a candidate file, written as stamped rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.select.answers import Equivalence, answer_classes
from rewardlab.select.candidates import Candidates
from rewardlab.select.scores import WeightMap, to_weights
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
    method: str,
    *,
    equivalence: Equivalence = "math",
    weights: WeightMap = "sigmoid",
    keep: float = 0.5,
    top_k: int = 1,
) -> Selection:
    """Run one selector (`best_of_n`, `majority`, `weighted`, `hybrid`, `filtered`) on a file."""
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
    from rewardlab._version import __version__
    from rewardlab.core import content_hash
    from rewardlab.runner.io import RowWriter

    stamps = {"rewardlab_version": __version__, "spec_hash": content_hash(pick_config(method, **options))}
    credit = selection.credit(candidates.correct) if candidates.correct is not None else None
    rows = [(line, _pick_row(candidates, selection, credit, method, p, line)) for p, line in enumerate(_lines(candidates))]
    rows += [(exc.line or 0, _error_row(exc, method)) for exc in unreadable]
    out = Path(output)
    with RowWriter(out) as writer:
        for _, row in sorted(rows, key=lambda pair: pair[0]):
            writer.write({**row, **stamps})
    return out


def _lines(candidates: Candidates) -> list[int]:
    return candidates.lines if candidates.lines is not None else list(range(1, candidates.n_problems + 1))


def _pick_row(
    candidates: Candidates, selection: Selection, credit: NDArray[np.float64] | None, method: str, p: int, line: int
) -> dict[str, object]:
    j = int(selection.chosen[p])
    row: dict[str, object] = {"problem": p, "line": line, "method": method, "status": "ok", "chosen": None if j < 0 else j}
    if candidates.answers is not None:
        row["answer"] = None if j < 0 else candidates.answers[p, j]
    if candidates.scores is not None:
        row["score"] = None if j < 0 or np.isnan(candidates.scores[p, j]) else float(candidates.scores[p, j])
    if credit is not None:
        row["credit"] = float(credit[p])  # expected correctness under random tie-breaking
    return row


def _error_row(exc: InputError, method: str) -> dict[str, object]:
    return {"problem": None, "line": exc.line, "method": method, "status": "error", "chosen": None,
            "error_kind": "invalid_input", "error": exc.reason}  # fmt: skip
