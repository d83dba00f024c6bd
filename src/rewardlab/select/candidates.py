"""Candidate files: one row per problem with a list of candidates, loaded as padded arrays.

The format, its columns (`CandidateColumns`: defaults are the Qwen2.5-Math
`eval_rm_maj_example` files', `pred` = each response's extracted answer, `pred_score` =
reward-model scores as one-element lists, `score` = grader labels, `code` = the responses) and
the rules of a valid row are `rewardlab.runner.candidate_rows`', shared with `rewardlab eval`.
Ragged rows are padded; `mask` marks the candidates that exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.runner.candidate_batch import CandidateBatch
from rewardlab.runner.candidate_rows import CandidateColumns

__all__ = ["Candidates", "load_candidates"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Candidates:
    """`(problems, n_max)` arrays of one candidate file.

    Attributes:
        answers: object array of answers (None: missing or padding), or None without the column.
        mask: which candidates exist.
        scores: float scores, NaN where missing; None without the column.
        correct: float 0/1 from the labels column, NaN where unknown; None without the column.
        file_tokens: the file's token column (NaN where unknown); None without one.
        token_unit: "tokens" from a token column, "words" when counted from the responses,
            "none" when neither is there.
        references: per problem gold answer (None where absent).
        source: where it was read from.
        responses: object array of response texts (None: padding), or None without the column.
        prompts: per problem prompt ("" where absent).
        lines: per problem, the line (row number) of the file it was read from.
    """

    answers: NDArray[np.object_] | None
    mask: NDArray[np.bool_]
    scores: F64 | None
    correct: F64 | None
    file_tokens: F64 | None
    token_unit: str
    references: list[Any]
    source: str
    responses: NDArray[np.object_] | None = None
    prompts: list[str] | None = None
    lines: list[int] | None = None

    @cached_property
    def tokens(self) -> F64 | None:
        """Generated tokens per candidate (NaN where unknown), None when not known: the file's
        token column, else the words of the responses, counted on first use (selection and
        picking never need them; the compute curves do)."""
        if self.token_unit != "words" or self.responses is None:
            return self.file_tokens
        words = np.full(self.mask.shape, np.nan)
        words[self.mask] = np.fromiter(map(len, map(str.split, self.responses[self.mask])), dtype=np.float64, count=int(self.mask.sum()))
        return words

    @property
    def n_problems(self) -> int:
        return int(self.mask.shape[0])

    def samples(self) -> list[list[Any]]:
        """Per problem, each candidate as a `Sample` (prompt, response, reference), for
        re-scoring with any reward: `score_candidates(reward, candidates.samples())`."""
        from rewardlab.core import Sample

        if self.responses is None:
            raise InputError("re-scoring needs the responses column", source=self.source)
        prompts = self.prompts or [""] * self.n_problems
        return [[Sample(prompt=prompts[p], response=str(self.responses[p, j]), reference=self.references[p], group=str(p))
                 for j in range(int(self.mask[p].sum()))] for p in range(self.n_problems)]  # fmt: skip

    def with_scores(self, scores: Any) -> Candidates:
        """The same candidates with other scores (e.g. from `score_candidates(reward, ...)`)."""
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != self.mask.shape:
            raise InputError(f"scores of shape {s.shape} for candidates of shape {self.mask.shape}", source=self.source)
        return replace(self, scores=np.where(self.mask, s, np.nan))


def _padded(flat: NDArray[Any] | None, mask: NDArray[np.bool_], fill: Any) -> NDArray[Any] | None:
    """A flat column (every row's items chained) as a `(problems, width)` array, `fill` where
    `mask` is False (padding): one masked assignment, row-major as the rows were chained."""
    if flat is None:
        return None
    out = np.full(mask.shape, fill, dtype=flat.dtype)
    out[mask] = flat
    return out


def load_candidates(
    path: str | Path, columns: CandidateColumns | None = None, *, on_error: Callable[[InputError], None] | None = None
) -> Candidates:
    """Read a candidate file (JSONL, Parquet or a saved `datasets` directory) into arrays.

    The rows are read and checked by `evaluate.datasets.read_candidate_batch`: the rules of
    `runner.candidate_rows`, the reader of `rewardlab eval`'s, checked a column at a time; this
    pads them.

    Args:
        path: the file.
        columns: its column names (default: the Qwen2.5-Math evaluation files').
        on_error: called with the `InputError` of each row that cannot be read; that row is
            then left out and the others are loaded (`Candidates.lines` keeps each problem's
            line). Without it the first bad row raises.

    Raises:
        InputError: naming the file, line and column of a row whose lists disagree in length,
            hold non-numbers or infinities where numbers belong, or lack a column most rows have.
    """
    from rewardlab.evaluate.datasets import read_candidate_batch
    from rewardlab.runner.io import gc_paused

    # One pause for the whole load: the parsed rows are freed before the collector runs again,
    # so it never walks them (`gc_paused`); what is kept is arrays and strings.
    with gc_paused():
        return _assemble(read_candidate_batch(path, columns, on_error=on_error), str(path))


def _assemble(batch: CandidateBatch, source: str) -> Candidates:
    counts = batch.counts
    mask = np.arange(int(counts.max()))[None, :] < counts[:, None]
    responses = _padded(batch.responses, mask, None)
    tokens = _padded(batch.tokens, mask, np.nan)
    unit = "tokens" if tokens is not None else "words" if responses is not None else "none"
    return Candidates(
        answers=_padded(batch.answers, mask, None),
        mask=mask,
        scores=_padded(batch.scores, mask, np.nan),
        correct=_padded(batch.labels, mask, np.nan),  # float 0/1, NaN where unknown or padding
        file_tokens=tokens,
        token_unit=unit,
        references=batch.references,
        source=source,
        responses=responses,
        prompts=batch.prompts,
        lines=batch.lines,
    )
