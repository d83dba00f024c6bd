"""Recorded, resumable runs: the logic behind ``rewardlab score --resume / --remote / --backend ray``.

A run reads the input file, scores the rows that the run store does not have yet in chunks
through an `Executor` (worker pool, Ray, or a reward server), and records each chunk's output
rows in one SQLite transaction. If the process (or the reward server it talks to) is killed,
the rows of committed chunks are kept; the next call with the same run id skips them. The
output file is written only at the end, from the store, in input order — so every input row
appears exactly once, however many times the run was interrupted.

Output rows have the same columns as a streamed `rewardlab.runner.score_file` (`runner.io.flatten`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rewardlab._version import __version__
from rewardlab.core import ErrorKind, GroupKey, Reward, RewardResult, Sample
from rewardlab.core.sample import content_hash
from rewardlab.errors import InputError
from rewardlab.runner.executors import Executor, RowJob, executor_group_keys, rows_executor
from rewardlab.runner.groups import pack_units, units_of, whole_groups_within
from rewardlab.runner.io import (
    PreparedRow,
    RawRow,
    RowFormat,
    RowScorer,
    RowWriter,
    ScoredRow,
    count_rows,
    detect_format,
    explode_rows,
    flatten,
    iter_raw_rows,
    prepare_row,
    stop_if_strict,
)
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.reward_log import RowBuffer
from rewardlab.runner.summary import RunSummary
from rewardlab.store import RunStore

__all__ = ["FileRows", "KeptRows", "input_fingerprint", "record_key", "run_id_for", "score_chunks", "score_file_in_memory",
           "score_file_resumable", "score_file_streamed"]

Progress = Callable[[int], None]
Out = TypeVar("Out")
#: a scored row as a recorded or in-memory run keeps it: (line, input fields, result)
Kept = tuple[int, Mapping[str, Any], RewardResult]


def input_fingerprint(path: Path) -> str:
    """Path, size and modification time: a resumed run must read the same file."""
    resolved = path.resolve()
    if resolved.is_dir():
        stats = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(resolved.iterdir()) if p.is_file()]
        return f"{resolved}#{content_hash(stats, size=8)}"
    stat = resolved.stat()
    return f"{resolved}#{stat.st_size}:{stat.st_mtime_ns}"


def run_id_for(
    spec_hash: str, input_path: Path, output_path: Path, limit: int | None = None, explode: Sequence[str] = ()
) -> str:
    """The default run id: the same spec, input, output, limit and `explode` fields resume the
    same run (a run without `explode` keeps the id it had before exploded runs were recorded)."""
    parts = [spec_hash, input_fingerprint(input_path), str(output_path.resolve()), limit]
    return content_hash([*parts, list(explode)] if explode else parts, size=8)


#: An exploded run records a row under its input line and its index within the line, as one
#: key (`record_key`): SQLite keys are 64-bit signed, room for 2**31 lines of 2**32 elements.
_PER_LINE = 1 << 32
_MAX_LINE = 1 << 31


def record_key(raw_row: RawRow, exploded: bool, source: str = "") -> int:
    """The run store's key of a row: its input line; in an exploded run, ``line * 2**32 +
    index`` with the row's `explode_index` (0 for a line that became one `invalid_input` row),
    so the rows exploded from one line are recorded, resumed and written in order.

    Raises:
        InputError: (exploded) a line or an index beyond what one key holds.
    """
    number, raw = raw_row
    if not exploded:
        return number
    index = raw.get("explode_index", 0) if isinstance(raw, dict) else 0
    if not (0 <= number < _MAX_LINE and isinstance(index, int) and 0 <= index < _PER_LINE):
        raise InputError(f"an exploded run records at most {_MAX_LINE - 1} lines of {_PER_LINE} elements", source=source, line=number)
    return number * _PER_LINE + index


def _line_of(key: int, exploded: bool) -> int:
    """The input line of a recorded row's key (`record_key`)."""
    return key // _PER_LINE if exploded else key


def _run_source(input_path: Path, explode: Sequence[str]) -> str:
    """What a run records it reads: the input (`input_fingerprint`) and, for an exploded run,
    the fields it explodes, so a run is never resumed with rows keyed another way."""
    return input_fingerprint(input_path) + (f" --explode {','.join(explode)}" if explode else "")


def _chunks(rows: Iterable[RawRow], size: int) -> Iterator[list[RawRow]]:
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


def _exploded(rows: Iterable[tuple[int, RawRow]], explode: Sequence[str], source: str) -> Iterator[tuple[int, RawRow]]:
    """`(input ordinal, raw row)` pairs, one per element of the `explode` list fields (`runner.io.explode_rows`)."""
    if not explode:
        return iter(rows)
    return ((ordinal, one) for ordinal, raw_row in rows for one in explode_rows([raw_row], explode, source))


def _whole_groups(
    rows: Iterable[tuple[int, RawRow]], opts: ScoreFileOptions, source: str, keys: frozenset[GroupKey]
) -> tuple[list[RawRow], list[Sample | RewardResult]]:
    """Every row (`(input ordinal, raw row)`, exploded already) of a group reward's file, in
    input order, and its Sample (or why it has none); `limit` keeps the whole groups of the
    first N input rows (`runner.groups.whole_groups_within`), wherever a group's rows are.

    A row is decoded once: a readable one comes back as its decoded dict (the engine's
    `prepare` reads it as it is), an unreadable one as it was, so its output keeps the raw line.
    """
    ordinals, raws, items = [], [], []
    for ordinal, raw_row in rows:
        number, row, item = prepare_row(raw_row, source, opts.fields, True)
        ordinals.append(ordinal)
        raws.append((number, row) if isinstance(item, Sample) else raw_row)
        items.append(item)
    if opts.limit is None:
        return raws, items
    keep = whole_groups_within(items, keys, opts.limit, ordinals)
    return [raws[i] for i in keep], [items[i] for i in keep]


def _row_chunks(
    rows: Iterator[tuple[int, RawRow]], opts: ScoreFileOptions, source: str, keys: frozenset[GroupKey]
) -> Iterator[list[RawRow]]:
    """The rows to score (`(input ordinal, raw row)`) in chunks of about `record_every` rows
    (one transaction each).

    For a group reward (`keys`) every pending row is read first and the chunks hold whole
    groups, wherever a group's rows are in the file: a group is scored on all its members and
    recorded in one transaction, so a resumed run never holds half a group. There `limit`
    keeps the whole groups of the first N rows (`_whole_groups`); without `keys` the caller
    has cut the rows already.
    """
    if not keys:
        yield from _chunks((raw_row for _, raw_row in rows), opts.record_every)
        return
    raws, items = _whole_groups(rows, opts, source, keys)
    for piece in pack_units(units_of([item for item in items], keys), opts.record_every):
        yield [raws[i] for i in piece]


@dataclass(frozen=True)
class KeptRows:
    """The job (`runner.executors.RowJob`) of recorded and in-memory runs: a scored row as
    `(line, input fields, result)`, recorded in the run store or written once every row is in.

    It stays in this process (`for_workers` is None): the rows are scored as Samples through
    the executor's `map`, which is all a reward server or Ray offers, and on the worker pool
    keeps the pool's own answer for a Sample it cannot send.
    """

    source: str
    fields: Mapping[str, str] | None = None
    keep_input: bool = True

    def prepare(self, raw_row: RawRow) -> PreparedRow:
        return prepare_row(raw_row, self.source, self.fields, self.keep_input)

    @staticmethod
    def output(row: Mapping[str, Any], number: int, result: RewardResult) -> Kept:
        return number, row, result

    @staticmethod
    def error_of(out: Kept) -> tuple[str | None, str | None]:
        error = out[2].error
        return (error.kind.value, error.message) if error is not None else (None, None)

    @staticmethod
    def for_workers(reward: Reward) -> None:
        return None


@dataclass(frozen=True)
class FileRows(RowFormat):
    """How the rows of a streamed file become output rows (`runner.run.score_file_streamed`):
    decoded and checked (`prepare`), and, once scored, flattened to a `ScoredRow` (`output`).

    This is the file engine's job for every executor: one that scores in this process runs
    `prepare` and `output` here around its `map`; the worker pool runs the whole row in a
    worker instead (`for_workers`: a `RowScorer`), so decoding and encoding run in parallel too.
    """

    @staticmethod
    def error_of(out: ScoredRow) -> tuple[str | None, str | None]:
        """The row's error kind and message (None, None when it is not an error)."""
        _, _, (_, _, _, kind, message, *_) = out
        return kind, message

    def for_workers(self, reward: Reward) -> RowScorer:
        return RowScorer(reward, self)


def score_chunks(
    chunks: Iterable[Sequence[RawRow]],
    executor: Executor,
    job: RowJob[Out],
    keep: Callable[[Sequence[RawRow], list[Out]], None],
    *,
    strict: bool = False,
    progress: Progress | None = None,
) -> None:
    """The file engine: each chunk of raw rows scored through `executor` and made into `job`'s
    outputs (`BaseExecutor.score_rows`), which are handed to `keep` with their raw rows a chunk
    at a time (written, recorded in a run store, or gathered to be written in order).

    Where the rows are decoded and scored is the executor's choice: by default here, each
    chunk's Samples in one `executor.map` call (`runner.executors.execution_plan` decides where
    that runs); the worker pool sends the raw rows to its workers, which decode, score and
    encode them. Rows that could not be read are `invalid_input` outputs naming file and line.
    With `strict`, the first of them stops the run (`runner.io.stop_if_strict`): the rows
    before it are kept, it and those after it are not.
    """
    sent: deque[Sequence[RawRow]] = deque()  # the chunks whose outputs are still to come

    def sending() -> Iterator[Sequence[RawRow]]:
        for chunk in chunks:
            sent.append(chunk)
            yield chunk

    with contextlib.closing(rows_executor(executor).score_rows(sending(), job)) as scored:
        for outs in scored:
            chunk = sent.popleft()
            stop = _first_unreadable(outs, job) if strict else None
            kept = outs if stop is None else outs[:stop]
            keep(chunk[: len(kept)], kept)
            if progress is not None:
                progress(len(kept))
            if stop is not None:
                stop_if_strict(*job.error_of(outs[stop]))


def _first_unreadable(outs: Sequence[Out], job: RowJob[Out]) -> int | None:
    """Position of the first `invalid_input` output (a row that could not be read), if any."""
    return next((i for i, out in enumerate(outs) if job.error_of(out)[0] == ErrorKind.INVALID_INPUT), None)


def score_file_streamed(
    executor: Executor,
    input_path: str | Path,
    output_path: str | Path,
    *,
    spec_hash: str,
    options: ScoreFileOptions | None = None,
    chunk_rows: int = 64,
    progress: Progress | None = None,
    on_total: Callable[[int | None], None] | None = None,
    log: RowBuffer | None = None,
) -> RunSummary:
    """Score a file of independent samples through `executor`, `chunk_rows` rows per batch,
    each chunk written as it is scored (nothing recorded, memory stays flat); `limit` cuts
    input rows, then `explode` expands them.

    Raises:
        InputError: with `strict`, at the first row that cannot be read (the rows before it
            are written).
    """
    opts = options or ScoreFileOptions()
    input_path = Path(input_path)
    started = time.perf_counter()
    if on_total is not None:
        total = None if opts.explode else count_rows(input_path, detect_format(input_path))
        on_total(min(total, opts.limit) if total is not None and opts.limit else total)
    rows: Iterable[RawRow] = iter_raw_rows(input_path, encoding=opts.encoding)
    if opts.limit is not None:
        rows = itertools.islice(rows, opts.limit)
    source = str(input_path)
    numbered = _exploded(enumerate(rows), opts.explode, source)
    summary = RunSummary()
    with RowWriter(output_path) as writer:
        job = FileRows(source, spec_hash, __version__, opts.fields, opts.keep_input, serialize=not writer.parquet)

        def write(chunk: Sequence[RawRow], outs: list[ScoredRow]) -> None:
            for out in outs:
                _, _, stats = out
                writer.write(out)
                summary.add(stats)
                if log is not None:
                    log.add_row(stats)

        chunks = _chunks((raw_row for _, raw_row in numbered), chunk_rows)
        score_chunks(chunks, executor, job, write, strict=opts.strict, progress=progress)
    summary.seconds = time.perf_counter() - started
    return summary


def score_file_in_memory(
    executor: Executor,
    input_path: str | Path,
    output_path: str | Path,
    *,
    spec_hash: str,
    options: ScoreFileOptions | None = None,
    progress: Progress | None = None,
    on_total: Callable[[int | None], None] | None = None,
    log: RowBuffer | None = None,
) -> RunSummary:
    """`score_file_resumable` without a run store, for a group reward: every row is read and
    decoded first (`explode` and `limit` applied), scored through `executor` in one batch, so
    each group is scored whole wherever its rows are in the file, and written in input order.
    Memory grows with the file, unlike a streamed run.

    Raises:
        InputError: with `strict`, at the first row that cannot be read (nothing is written).
    """
    opts = options or ScoreFileOptions()
    input_path = Path(input_path)
    started = time.perf_counter()
    rows = _exploded(enumerate(iter_raw_rows(input_path, encoding=opts.encoding)), opts.explode, str(input_path))
    raws, _ = _whole_groups(rows, opts, str(input_path), executor_group_keys(executor))
    if on_total is not None:
        on_total(len(raws))
    scored: list[Kept] = []  # one chunk, every row: its outputs are in input order
    job = KeptRows(str(input_path), opts.fields, opts.keep_input)
    score_chunks([raws], executor, job, lambda _, outs: scored.extend(outs), strict=opts.strict, progress=progress)
    summary = _write_rows(scored, output_path, spec_hash, log)
    summary.seconds = time.perf_counter() - started
    return summary


def score_file_resumable(
    executor: Executor,
    input_path: str | Path,
    output_path: str | Path,
    *,
    store: RunStore,
    spec_hash: str,
    options: ScoreFileOptions | None = None,
    run_id: str | None = None,
    resume: bool = True,
    progress: Progress | None = None,
    log: RowBuffer | None = None,
) -> tuple[RunSummary, str]:
    """Score a data file through `executor`, recording rows in `store` so the run can resume.

    Args:
        executor: computes batches (local pool, Ray, or `rewardlab.serve.remote.RemoteExecutor`).
        input_path: JSONL, Parquet or a saved `datasets` folder.
        output_path: ``.jsonl`` or ``.parquet``; written when every row is recorded.
        store: the run store.
        spec_hash: stamped on every row, and part of the default run id.
        options: fields, keep_input, strict, limit, `record_every` (rows per transaction).
        run_id: the run to start or resume (default: `run_id_for` spec, input, output).
        resume: keep the rows a previous attempt of `run_id` recorded; ``False`` starts over.
        progress: called with the number of rows just recorded.
        log: gathers the statistics of the rows scored now (not of resumed ones) and logs
            them a step per `log.every` rows; flushed at the end.

    Returns:
        The run summary (over every row, resumed ones included) and the run id.

    Raises:
        InputError: the run id belongs to another spec, input or `explode`; with `strict`, a
            bad row.
        ServerError: (remote) the server could not be reached after every retry; rows done so
            far stay recorded, call again to resume.
    """
    opts = options or ScoreFileOptions()
    input_path, output_path = Path(input_path), Path(output_path)
    source, exploded = str(input_path), bool(opts.explode)
    run_id = run_id or run_id_for(spec_hash, input_path, output_path, opts.limit, opts.explode)
    if not resume:
        store.drop_run(run_id)
    store.start_run(run_id, spec_hash=spec_hash, source=_run_source(input_path, opts.explode))
    done = store.done_rows(run_id)
    if progress is not None and done:
        progress(len(done))
    keys = executor_group_keys(executor)
    started = time.perf_counter()
    pending = ((o, r) for o, r in _numbered_rows(input_path, opts, keys) if record_key(r, exploded, source) not in done)

    def record(chunk: Sequence[RawRow], outs: list[Kept]) -> None:
        if log is not None:
            log.add([result for _, _, result in outs])
        store.record_rows(run_id, [(record_key(raw_row, exploded, source), {"row": row, "result": result.to_dict()})
                                   for raw_row, (_, row, result) in zip(chunk, outs, strict=True)])  # fmt: skip

    job = KeptRows(source, opts.fields, opts.keep_input)
    try:
        score_chunks(_row_chunks(pending, opts, source, keys), executor, job, record, strict=opts.strict, progress=progress)
    finally:  # an interrupted run still logs the rows it scored
        if log is not None:
            log.flush()
    summary = _write_output(store, run_id, output_path, spec_hash, exploded)
    summary.seconds = time.perf_counter() - started
    store.finish_run(run_id)
    return summary, run_id


def _numbered_rows(input_path: Path, opts: ScoreFileOptions, keys: frozenset[GroupKey]) -> Iterator[tuple[int, RawRow]]:
    """`(input ordinal, raw row)` of every row a recorded run scores: `limit` cuts the input
    rows (a group reward's whole groups are kept later, `_whole_groups`), `explode` expands them."""
    rows: Iterable[RawRow] = iter_raw_rows(input_path, encoding=opts.encoding)
    if opts.limit is not None and not keys:
        rows = itertools.islice(rows, opts.limit)
    return _exploded(enumerate(rows), opts.explode, str(input_path))


def _write_output(store: RunStore, run_id: str, output_path: Path, spec_hash: str, exploded: bool) -> RunSummary:
    """Write the run's rows in order to a temporary file, then rename it into place."""
    tmp = output_path.with_name(f".{output_path.stem}.{os.getpid()}.partial{output_path.suffix}")
    rows = ((_line_of(key, exploded), payload["row"], RewardResult.from_dict(payload["result"]))
            for key, payload in store.iter_run(run_id))  # fmt: skip
    summary = _write_rows(rows, tmp, spec_hash)
    os.replace(tmp, output_path)  # atomic: readers see the old file or the whole new one
    return summary


def _write_rows(
    rows: Iterable[tuple[int, Mapping[str, Any], RewardResult]], path: str | Path, spec_hash: str, log: RowBuffer | None = None
) -> RunSummary:
    """Output rows (`runner.io.flatten`) of `(line, input fields, result)` written to `path`, in
    the order given; with `log`, each row is counted for the logged statistics."""
    summary = RunSummary()
    with RowWriter(path) as writer:
        for number, row, result in rows:
            flat, stats = flatten(row, number, result, __version__, spec_hash)
            writer.write(flat)
            summary.add(stats)
            if log is not None:
                log.add_row(stats)
    return summary
