"""Preference pairs: the rows a reward model trains on, and reading them from JSONL.

A row is `{"prompt": ..., "chosen": ..., "rejected": ...}` with optional `margin` (number, how
much better `chosen` is) and `tie` (bool). Texts may be strings or chat message lists (the last
message's content is used). Bad rows fail with the file and line; nothing is skipped silently.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewardlab.core import Sample
from rewardlab.core.jsontext import escape_lone_surrogates
from rewardlab.core.numbers import json_float
from rewardlab.core.sample import is_text, text_of
from rewardlab.errors import ConfigError, InputError
from rewardlab.runner.candidate_rows import CandidateColumns
from rewardlab.runner.io import read_objects

if TYPE_CHECKING:  # numpy is imported by the readers that use it, not by `rewardlab --help`
    from rewardlab.runner.candidate_batch import CandidateBatch

__all__ = ["MIN_VAL_PROMPTS", "PreferencePair", "graded_pairs", "held_out", "pairs_from_rows", "read_pairs",
           "read_step_rows", "split_pairs", "split_warning", "write_pairs"]


@dataclass(frozen=True)
class PreferencePair:
    """`chosen` is preferred to `rejected` for `prompt` (or they tie)."""

    prompt: str
    chosen: str
    rejected: str
    margin: float = 0.0
    tie: bool = False
    group: str = ""  # the prompt group, for splitting by question


def _text(row: Mapping[str, Any], key: str, source: str | None, line: int | None, *, required: bool) -> str:
    if key not in row:
        if required:
            raise InputError(f"missing field {key!r}; every row needs 'chosen' and 'rejected'",
                             source=source, line=line)
        return ""
    value = row[key]
    if not isinstance(value, str | list):
        raise InputError(f"field {key!r} must be a string or chat messages, got {type(value).__name__}",
                         source=source, line=line)
    text = text_of(value)
    if required and not text.strip():
        raise InputError(f"field {key!r} is empty; drop the row or fill it", source=source, line=line)
    return text


def pairs_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str | None = None) -> list[PreferencePair]:
    """Validate rows into pairs. Raises `InputError` naming the first bad row."""
    return _pairs(enumerate(rows, start=1), source)


def _pairs(numbered: Iterable[tuple[int, Mapping[str, Any]]], source: str | None) -> list[PreferencePair]:
    """Pairs of (line number, row); errors name `source` and the row's line."""
    pairs = []
    for line, row in numbered:
        if not isinstance(row, Mapping):
            raise InputError(f"expected a JSON object, got {type(row).__name__}", source=source, line=line)
        margin = json_float(row.get("margin", 0.0))
        if margin is None or not math.isfinite(margin):
            raise InputError(f"field 'margin' must be a finite number, got {row.get('margin')!r:.60}", source=source, line=line)
        tie = row.get("tie", False)
        if not isinstance(tie, bool):
            raise InputError(f"field 'tie' must be true or false, got {tie!r}", source=source, line=line)
        prompt = _text(row, "prompt", source, line, required=False)
        pairs.append(PreferencePair(
            prompt=prompt,
            chosen=_text(row, "chosen", source, line, required=True),
            rejected=_text(row, "rejected", source, line, required=True),
            margin=float(margin), tie=tie, group=str(row.get("group", prompt)),
        ))
    return pairs


def read_pairs(path: str | Path) -> list[PreferencePair]:
    """Read a JSONL file of preference rows (see the module docstring); errors name the file's
    line (blank lines are skipped but counted)."""
    return _pairs(read_objects(path), str(path))


def write_pairs(pairs: Iterable[PreferencePair], path: str | Path) -> Path:
    """Write pairs as JSONL for `read_pairs`: one `{"prompt", "chosen", "rejected", "group"}`
    object a line (margin and tie are not written), each line as `json.dumps(..., ensure_ascii=False)`
    writes it, but for a lone surrogate, written as its escape (UTF-8 has no code for one). Returns
    the path (its folder is made if missing)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    # `encode_basestring` is json's own quoting of a string where `ensure_ascii=False` (its C
    # version where there is one): a line of strings then needs no encoder object, which
    # `json.dumps` with options builds on every call (most of the time of writing a million
    # pairs). A prompt's pairs repeat its text, group and responses: each is quoted once.
    quoted = functools.lru_cache(maxsize=4096)(_quoted)
    with out.open("w", encoding="utf-8") as handle:
        handle.writelines(_pair_line(pair, quoted) for pair in pairs)
    return out


def _quoted(text: str) -> str:
    return escape_lone_surrogates(encode_basestring(text))


def _pair_line(pair: PreferencePair, quoted: Callable[[str], str]) -> str:
    try:
        return (f'{{"prompt": {quoted(pair.prompt)}, "chosen": {quoted(pair.chosen)}, '
                f'"rejected": {quoted(pair.rejected)}, "group": {quoted(pair.group)}}}\n')  # fmt: skip
    except TypeError:  # a field that is not a string: json's own way
        row = {"prompt": pair.prompt, "chosen": pair.chosen, "rejected": pair.rejected, "group": pair.group}
        return escape_lone_surrogates(json.dumps(row, ensure_ascii=False)) + "\n"


def split_pairs(pairs: Sequence[PreferencePair], *, val_fraction: float = 0.1,
                seed: int = 0) -> tuple[list[PreferencePair], list[PreferencePair]]:
    """Split by prompt group (never the same prompt on both sides), deterministically."""
    held = held_out([p.group for p in pairs], val_fraction=val_fraction, seed=seed)
    return [p for i, p in enumerate(pairs) if i not in held], [p for i, p in enumerate(pairs) if i in held]


def held_out(groups: Sequence[str], *, val_fraction: float = 0.1, seed: int = 0) -> set[int]:
    """Indices of the items to hold out for validation: whole groups (prompts) at a time, about
    `val_fraction` of them, chosen by `seed`. With a single group the items themselves are split.
    """
    import random

    if not 0.0 < val_fraction < 1.0:
        raise ConfigError(f"val_fraction must be in (0, 1), got {val_fraction}")
    distinct = sorted(set(groups))
    random.Random(seed).shuffle(distinct)
    if len(distinct) < 2:  # one prompt only: split the items themselves
        idx = list(range(len(groups)))
        random.Random(seed).shuffle(idx)
        return set(idx[: max(1, round(len(idx) * val_fraction))])
    held_groups = set(distinct[: max(1, round(len(distinct) * val_fraction))])
    return {i for i, g in enumerate(groups) if g in held_groups}


#: fewer held-out prompts than this give a validation accuracy too noisy to stop training on
MIN_VAL_PROMPTS = 10


def split_warning(groups: Sequence[str], held: set[int], *, val_fraction: float) -> str | None:
    """What is wrong with a `held_out` split, to print before training; None when it is sound.

    Splits are by prompt, so with few prompts the held-out share of items can be far from
    `val_fraction`, and with one prompt the same prompt ends up on both sides.
    """
    distinct = set(groups)
    held_groups = {groups[i] for i in held}
    share = len(held) / len(groups) if groups else 0.0
    if len(distinct) < 2:
        return (f"only one prompt: the validation set is {len(held)} of its {len(groups)} items, so the same "
                "prompt is trained and validated on (optimistic accuracy); pass --val with other prompts")
    if len(held_groups) < MIN_VAL_PROMPTS:
        return (f"validation holds out {len(held_groups)} of {len(distinct)} prompts ({share:.0%} of the items, "
                f"asked {val_fraction:.0%}): under {MIN_VAL_PROMPTS} prompts the validation accuracy is noisy; "
                "pass --val or use more prompts")
    return None


def graded_pairs(rows: Iterable[Mapping[str, Any]], *, prompt_key: str = "question", responses_key: str = "code",
                 labels_key: str = "score", group_key: str = "idx", source: str | None = None,
                 on_error: Callable[[InputError], None] | None = None) -> list[PreferencePair]:
    """Every (correct, incorrect) response pair of each prompt, from rows holding several graded
    responses (e.g. `qwen25-math-cot-100.jsonl`: `question`, `code` = 8 responses, `score` = 8
    booleans). Prompts whose responses are all right or all wrong give no pair, and a response
    without a label (null) is in none. Rows are checked by the candidate-file rules
    (`runner.candidate_rows`): labels are true/false or 1/0, one per response.

    Args:
        rows: the graded candidate sets, one per prompt (numbered from 1 in errors).
        prompt_key: column of the prompt.
        responses_key: column of the list of responses.
        labels_key: column of the per-response correctness labels.
        group_key: column of the prompt id (pairs are split by it); default the prompt text.
        source: the rows' file, named in errors.
        on_error: called with the `InputError` of each bad row, which then gives no pair;
            without it the first bad row raises.

    Raises:
        InputError: naming the line of a row without the columns, with lists of different
            lengths, or with a label that is not true/false or 1/0.
    """
    from rewardlab.runner.candidate_batch import parse_candidate_batch
    from rewardlab.runner.io import gc_paused

    where = source or "rows"
    columns = CandidateColumns(prompt=prompt_key, responses=responses_key, labels=labels_key, reference=None, scores=None, answers=None)
    # The GC stays paused until the pairs are built: they hold only strings (`runner.io.gc_paused`).
    with gc_paused():
        numbered = [(line, row if type(row) is dict else dict(row)) for line, row in enumerate(rows, start=1)]
        found: list[InputError] = []
        batch, _ = parse_candidate_batch(numbered, columns, where, on_error=found.append, required=("responses", "labels"))
        no_prompt = [line for line, row in numbered if prompt_key not in row]
        bad_prompt = [line for line, row in numbered if prompt_key in row and not is_text(row[prompt_key])]
        errors = _in_file_order(found, no_prompt, bad_prompt, numbered, prompt_key, where)
        if errors and on_error is None:
            raise errors[0]
        for exc in errors:
            if on_error is not None:
                on_error(exc)
        return _right_wrong_pairs(batch, numbered, {*no_prompt, *bad_prompt}, prompt_key, group_key)


def _in_file_order(found: list[InputError], no_prompt: list[int], bad_prompt: list[int],
                   numbered: list[tuple[int, dict[str, Any]]], prompt_key: str, where: str) -> list[InputError]:
    """The errors of the rows, one per bad row in line order, as the row-at-a-time reading gives
    them: a row without the prompt, or whose prompt is not text, gets that error, whatever else
    is wrong with it."""
    skip = {*no_prompt, *bad_prompt}
    missing = [InputError(f"missing field(s) [{prompt_key!r}]", source=where, line=line) for line in no_prompt]
    not_text = [InputError(f"field {prompt_key!r} must be a string or a list of chat messages ({{'role': ..., "
                           f"'content': ...}}), got {type(numbered[line - 1][1][prompt_key]).__name__}", source=where, line=line)
                for line in bad_prompt]  # fmt: skip
    return sorted([*missing, *not_text, *(e for e in found if e.line not in skip)], key=lambda e: e.line or 0)


def _right_wrong_pairs(
    batch: CandidateBatch, numbered: list[tuple[int, dict[str, Any]]], skip: set[int], prompt_key: str, group_key: str
) -> list[PreferencePair]:
    """Every (right, wrong) pair of responses of each checked row not in `skip`, rows in order."""
    responses = [] if batch.responses is None else batch.responses.tolist()
    labels = [] if batch.labels is None else batch.labels.tolist()  # 1.0 right, 0.0 wrong, NaN unknown
    pairs: list[PreferencePair] = []
    end = 0
    for line, count in zip(batch.lines, batch.counts.tolist(), strict=True):
        start, end = end, end + count
        if line in skip:
            continue
        row = numbered[line - 1][1]
        prompt = text_of(row[prompt_key])  # a chat prompt as its text
        group = str(row.get(group_key, prompt))
        row_labels = labels[start:end]
        if 1.0 not in row_labels or 0.0 not in row_labels:
            continue
        right = [r for r, y in zip(responses[start:end], row_labels, strict=True) if y == 1.0]
        wrong = [r for r, y in zip(responses[start:end], row_labels, strict=True) if y == 0.0]
        pairs += [PreferencePair(prompt, c, w, group=group) for c in right for w in wrong]
    return pairs


def read_step_rows(path: str | Path) -> tuple[list[Sample], list[list[float]]]:
    """Read process-supervision rows: `{"prompt": ..., "steps": [...], "labels": [...]}`.

    One label per step: `true`/`false`, 0/1 (hard) or a number in [0, 1] (soft, e.g. a
    Monte-Carlo estimate); `null` leaves a step unlabelled (`step_labels.BUFFER`, masked out of
    the loss). `response` is optional (default: the steps joined by newlines).

    Raises:
        InputError: naming the file and line of the first bad row.
    """
    from rewardlab.models.step_labels import BUFFER

    samples, labels = [], []
    for line, row in read_objects(path):
        source = str(path)
        steps, marks = row.get("steps"), row.get("labels")
        if not isinstance(steps, list) or not steps or not all(isinstance(t, str) and t.strip() for t in steps):
            raise InputError("field 'steps' must be a non-empty list of non-empty strings", source=source, line=line)
        if not isinstance(marks, list) or len(marks) != len(steps):
            raise InputError(f"field 'labels' must be a list with one label per step ({len(steps)})",
                             source=source, line=line)
        row_labels = []
        for mark in marks:
            if mark is None:
                row_labels.append(BUFFER)
            elif isinstance(mark, bool) or (isinstance(mark, int | float) and 0.0 <= mark <= 1.0):
                row_labels.append(float(mark))
            else:
                raise InputError(f"step label {mark!r} is not true/false, a number in [0, 1] or null",
                                 source=source, line=line)
        prompt = _text(row, "prompt", source, line, required=False)
        response = _text(row, "response", source, line, required=False) or "\n".join(steps)
        samples.append(Sample(prompt=prompt, response=response, steps=tuple(steps)))
        labels.append(row_labels)
    return samples, labels
