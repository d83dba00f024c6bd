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

import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rewardlab._version import __version__
from rewardlab.core import GroupKey, RewardResult, content_hash
from rewardlab.runner.executors import Executor, executor_group_keys
from rewardlab.runner.groups import pack_units, units_of, whole_groups_within
from rewardlab.runner.io import (
    PreparedRow,
    RawRow,
    RowWriter,
    flatten,
    iter_raw_rows,
    prepare_row,
    score_prepared,
    stop_if_strict,
)
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.reward_log import RowBuffer
from rewardlab.runner.summary import RunSummary
from rewardlab.store import RunStore

__all__ = ["input_fingerprint", "run_id_for", "score_file_resumable"]

Progress = Callable[[int], None]


def input_fingerprint(path: Path) -> str:
    """Path, size and modification time: a resumed run must read the same file."""
    resolved = path.resolve()
    if resolved.is_dir():
        stats = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(resolved.iterdir()) if p.is_file()]
        return f"{resolved}#{content_hash(stats, size=8)}"
    stat = resolved.stat()
    return f"{resolved}#{stat.st_size}:{stat.st_mtime_ns}"


def run_id_for(spec_hash: str, input_path: Path, output_path: Path, limit: int | None = None) -> str:
    """The default run id: the same spec, input, output and limit resume the same run."""
    return content_hash([spec_hash, input_fingerprint(input_path), str(output_path.resolve()), limit], size=8)


def _chunks(rows: Iterator[RawRow], size: int) -> Iterator[list[RawRow]]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


def _prepared_chunks(
    rows: Iterator[tuple[int, RawRow]], opts: ScoreFileOptions, source: str, keys: frozenset[GroupKey]
) -> Iterator[list[PreparedRow]]:
    """The rows to score (`(input ordinal, raw row)`), decoded, in chunks of about
    `record_every` rows (one transaction each).

    For a group reward (`keys`) every pending row is read first and the chunks hold whole
    groups, wherever a group's rows are in the file: a group is scored on all its members and
    recorded in one transaction, so a resumed run never holds half a group. There `limit`
    keeps the whole groups of the first N rows (`runner.groups.whole_groups_within`); without
    `keys` the caller has cut the rows already.
    """
    if not keys:
        for chunk in _chunks((raw_row for _, raw_row in rows), opts.record_every):
            yield [prepare_row(raw_row, source, opts.fields, opts.keep_input) for raw_row in chunk]
        return
    numbered = list(rows)
    prepared = [prepare_row(raw_row, source, opts.fields, opts.keep_input) for _, raw_row in numbered]
    keep = whole_groups_within([item for _, _, item in prepared], keys, opts.limit, [o for o, _ in numbered])
    prepared = [prepared[i] for i in keep]
    for piece in pack_units(units_of([item for _, _, item in prepared], keys), opts.record_every):
        yield [prepared[i] for i in piece]


def _score_chunk(prepared: Sequence[PreparedRow], executor: Executor, log: RowBuffer | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Recorded payloads for a chunk: ``{"row": input fields, "result": RewardResult dict}``.

    Bad rows are already `invalid_input` results naming file and line; the rest go out as one
    batch. With `log`, the chunk's results are counted for the logged statistics.
    """
    results = score_prepared([item for _, _, item in prepared], executor.map)
    if log is not None:
        log.add(results)
    return [(number, {"row": row, "result": result.to_dict()}) for (number, row, _), result in zip(prepared, results, strict=True)]


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
        InputError: the run id belongs to another spec or input; with `strict`, a bad row.
        ServerError: (remote) the server could not be reached after every retry; rows done so
            far stay recorded, call again to resume.
    """
    opts = options or ScoreFileOptions()
    input_path, output_path = Path(input_path), Path(output_path)
    source = str(input_path)
    run_id = run_id or run_id_for(spec_hash, input_path, output_path, opts.limit)
    if not resume:
        store.drop_run(run_id)
    store.start_run(run_id, spec_hash=spec_hash, source=input_fingerprint(input_path))
    done = store.done_rows(run_id)
    if progress is not None and done:
        progress(len(done))
    keys = executor_group_keys(executor)
    rows: Iterable[RawRow] = iter_raw_rows(input_path, encoding=opts.encoding)
    if opts.limit is not None and not keys:
        rows = itertools.islice(rows, opts.limit)
    started = time.perf_counter()
    pending = ((ordinal, r) for ordinal, r in enumerate(rows) if r[0] not in done)
    try:
        for chunk in _prepared_chunks(pending, opts, source, keys):
            out = _score_chunk(chunk, executor, log)
            if opts.strict:
                for _, payload in out:
                    error = payload["result"].get("error") or {}
                    stop_if_strict(error.get("kind"), error.get("message"))
            store.record_rows(run_id, out)
            if progress is not None:
                progress(len(out))
    finally:  # an interrupted run still logs the rows it scored
        if log is not None:
            log.flush()
    summary = _write_output(store, run_id, output_path, spec_hash)
    summary.seconds = time.perf_counter() - started
    store.finish_run(run_id)
    return summary, run_id


def _write_output(store: RunStore, run_id: str, output_path: Path, spec_hash: str) -> RunSummary:
    """Write the run's rows in order to a temporary file, then rename it into place."""
    summary = RunSummary()
    tmp = output_path.with_name(f".{output_path.stem}.{os.getpid()}.partial{output_path.suffix}")
    with RowWriter(tmp) as writer:
        for number, payload in store.iter_run(run_id):
            result = RewardResult.from_dict(payload["result"])
            row, stats = flatten(payload["row"], number, result, __version__, spec_hash)
            writer.write(row)
            summary.add(stats)
    os.replace(tmp, output_path)  # atomic: readers see the old file or the whole new one
    return summary
