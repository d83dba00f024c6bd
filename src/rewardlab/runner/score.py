"""Scoring samples and files: the functions behind `rewardlab.score` and `rewardlab score`."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardlab._version import __version__
from rewardlab.compose import build
from rewardlab.core import JSON, ErrorKind, Reward, RewardResult, Sample, group_keys
from rewardlab.core import spec_hash as core_spec_hash
from rewardlab.errors import InputError, UsageError
from rewardlab.runner.executors import Executor, make_executor
from rewardlab.runner.groups import whole_groups_within
from rewardlab.runner.io import (
    RowScorer,
    RowWriter,
    ScoredRow,
    count_rows,
    detect_format,
    explode_rows,
    flatten,
    iter_raw_rows,
    prepare_row,
    score_prepared,
)
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.pool import ProcessPool, WorkerPool, default_workers
from rewardlab.runner.run import score_file_resumable
from rewardlab.runner.summary import RunSummary
from rewardlab.store import RunStore, default_cache_path

SpecLike = str | Path | dict[str, JSON] | Reward


def as_sample(value: Sample | Mapping[str, JSON], index: int) -> Sample | RewardResult:
    """A Sample from a Sample or dict; an `invalid_input` result naming the index otherwise."""
    if isinstance(value, Sample):
        return value
    try:
        return Sample.from_dict(value, source="samples", line=index)
    except InputError as exc:
        return RewardResult.failure(ErrorKind.INVALID_INPUT, str(exc))


def score(
    spec: SpecLike,
    samples: Iterable[Sample | Mapping[str, JSON]],
    *,
    workers: int = 0,
    timeout: float | None = None,
) -> list[RewardResult]:
    """Score samples with a reward spec; one stamped result per sample, in order.

    Args:
        spec: a path to a TOML spec, TOML text, a dict, or a built Reward.
        samples: `Sample`s or dicts with the same field names. A malformed dict gets an
            `error/invalid_input` result; the others are still scored.
        workers: worker processes; 0 (default) scores in this process. With `timeout` set,
            at least one worker is used so a hung sample can be killed.
        timeout: seconds a sample may take before it gets `error/timeout`.

    Examples:
        >>> import rewardlab
        >>> spec = '''
        ... [reward]
        ... name = "exact"
        ... [[reward.components]]
        ... name = "exact"
        ... use = "text.exact"
        ... '''
        >>> [r.score for r in rewardlab.score(spec, [{"response": "Paris", "reference": "paris"}])]
        [1.0]
    """
    reward = build(spec)
    stamp_hash = core_spec_hash(reward)
    prepared = [as_sample(s, i) for i, s in enumerate(samples, start=1)]
    if timeout is not None and workers == 0:
        workers = 1
    if workers == 0:
        out = score_prepared(prepared, reward.score_batch)
    else:
        with WorkerPool(reward, workers=workers, timeout=timeout) as pool:
            out = score_prepared(prepared, pool.map)
    return [r.stamped(stamp_hash) for r in out]


def score_file(
    spec: SpecLike,
    input_path: str | Path,
    output_path: str | Path,
    options: ScoreFileOptions | None = None,
    *,
    executor: Executor | None = None,
    spec_hash: str | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int | None], None] | None = None,
) -> RunSummary:
    """Score every row of a data file and write one output row per input row.

    Rows stream through the local worker pool to the output, unless the run is recorded
    (`options.resume`, `options.backend == "ray"`, or an `executor` is given): then it runs
    through `rewardlab.runner.run.score_file_resumable`, so an interrupted run resumes.

    Args:
        spec: the reward spec (path, TOML text, dict or built Reward); with `executor`, only
            what the executor was made for (e.g. a reward server's served name).
        input_path: JSONL, Parquet, or a `datasets` dataset saved to disk.
        output_path: `.jsonl` or `.parquet`.
        options: workers, timeout, field mapping, strictness, resuming, backend.
        executor: computes the batches of a recorded run (e.g. `serve.remote.RemoteExecutor`);
            the caller closes it. Needs `spec_hash`, what its results are stamped with.
        spec_hash: see `executor`.
        progress: called with the number of rows just written (for progress bars).
        on_total: called once with the number of input rows, when it is known.

    Raises:
        InputError: with `strict`, at the first row that cannot be read.
        UsageError: `explode` with a recorded run; `executor` without `spec_hash`.
    """
    opts = options or ScoreFileOptions()
    if executor is None and not opts.resume and opts.backend == "local":
        return _stream_file(build(spec), Path(input_path), output_path, opts, progress, on_total)
    if opts.explode:
        raise UsageError("--explode works with the local backend only (not with --resume, --remote or --backend ray)")
    if executor is not None and spec_hash is None:
        raise UsageError("score_file(executor=...) needs the spec_hash its results are stamped with")
    own: Executor | None = None
    if executor is None:
        reward = build(spec)
        spec_hash = core_spec_hash(reward)
        workers = default_workers() if opts.workers is None else opts.workers
        own = executor = make_executor(reward, backend="ray" if opts.backend == "ray" else "pool", workers=workers,
                                       timeout=opts.timeout, ray_address=opts.ray_address)  # fmt: skip
    store = RunStore(opts.run_store or default_cache_path())
    try:
        summary, _ = score_file_resumable(executor, input_path, output_path, store=store, spec_hash=str(spec_hash),
                                          options=opts, run_id=opts.run_id, resume=opts.resume, progress=progress)  # fmt: skip
    finally:
        store.close()
        if own is not None:
            own.close()
    return summary


def _stream_file(
    reward: Reward,
    input_path: Path,
    output_path: str | Path,
    opts: ScoreFileOptions,
    progress: Callable[[int], None] | None,
    on_total: Callable[[int | None], None] | None,
) -> RunSummary:
    """`score_file` through the worker pool, rows in, output rows out, nothing recorded."""
    if group_keys(reward):
        return _score_file_by_groups(reward, input_path, output_path, opts, progress, on_total)
    fmt = detect_format(input_path)
    if on_total is not None:
        total = None if opts.explode else count_rows(input_path, fmt)
        on_total(min(total, opts.limit) if total is not None and opts.limit else total)
    writer = RowWriter(output_path)
    job = RowScorer(reward, str(input_path), core_spec_hash(reward), __version__, opts.fields, opts.keep_input, serialize=not writer.parquet)
    rows: Iterable[Any] = iter_raw_rows(input_path, fmt)
    if opts.limit is not None:
        rows = itertools.islice(rows, opts.limit)
    if opts.explode:
        rows = explode_rows(rows, opts.explode, str(input_path))
    summary = RunSummary()
    started = time.perf_counter()
    pool: ProcessPool[Any, ScoredRow] = ProcessPool(
        job, job.on_error, workers=opts.workers, timeout=opts.timeout, chunk_size=opts.chunk_size
    )
    with pool, writer:
        for scored in pool.imap(rows):
            _, _, stats = scored
            _, _, _, error_kind, error, *_ = stats
            if opts.strict and error_kind == ErrorKind.INVALID_INPUT:
                raise InputError(f"{error} (--strict stops at the first bad row)")
            writer.write(scored)
            summary.add(stats)
            if progress is not None and summary.rows % 64 == 0:
                progress(64)
    if progress is not None and summary.rows % 64:
        progress(summary.rows % 64)
    summary.seconds = time.perf_counter() - started
    return summary


def _score_file_by_groups(
    reward: Reward,
    input_path: Path,
    output_path: str | Path,
    opts: ScoreFileOptions,
    progress: Callable[[int], None] | None,
    on_total: Callable[[int | None], None] | None,
) -> RunSummary:
    """`_stream_file` for a group reward: every row is read and decoded first, so each group is
    scored whole in the worker pool wherever its rows are in the file (`runner.groups`); the
    output is written in input order. Memory grows with the file, unlike the streamed path.
    `limit` keeps the whole groups of the first N rows (`runner.groups.whole_groups_within`)."""
    started = time.perf_counter()
    source = str(input_path)
    ordinals, prepared = [], []
    for ordinal, raw_row in enumerate(iter_raw_rows(input_path)):
        for one in explode_rows([raw_row], opts.explode, source) if opts.explode else (raw_row,):
            ordinals.append(ordinal)
            prepared.append(prepare_row(one, source, opts.fields, opts.keep_input))
    if opts.limit is not None:  # whole groups of the first N input rows (`whole_groups_within`)
        keep = whole_groups_within([item for _, _, item in prepared], group_keys(reward), opts.limit, ordinals)
        prepared = [prepared[i] for i in keep]
    if on_total is not None:
        on_total(len(prepared))
    with WorkerPool(reward, workers=opts.workers, timeout=opts.timeout, chunk_size=opts.chunk_size) as pool:
        results = score_prepared([item for _, _, item in prepared], pool.map)
    stamp, summary = core_spec_hash(reward), RunSummary()
    with RowWriter(output_path) as writer:
        for (number, row, _), result in zip(prepared, results, strict=True):
            if opts.strict and result.error is not None and result.error.kind is ErrorKind.INVALID_INPUT:
                raise InputError(f"{result.error.message} (--strict stops at the first bad row)")
            flat, stats = flatten(row, number, result, __version__, stamp)
            writer.write(flat)
            summary.add(stats)
    if progress is not None:
        progress(summary.rows)
    summary.seconds = time.perf_counter() - started
    return summary


def score_rows(reward: Reward, rows: Sequence[Mapping[str, JSON]]) -> list[RewardResult]:
    """Score dict rows in this process (helper for adapters); bad rows become error results."""
    return score_prepared([as_sample(r, i) for i, r in enumerate(rows, start=1)], reward.score_batch)
