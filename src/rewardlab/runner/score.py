"""Scoring samples and files: the functions behind `rewardlab.score` and `rewardlab score`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from rewardlab.compose import build
from rewardlab.core import JSON, ErrorKind, Reward, RewardResult, Sample, group_keys
from rewardlab.core import spec_hash as core_spec_hash
from rewardlab.errors import InputError, UsageError
from rewardlab.runner.executors import Executor, batches_in_process, make_executor
from rewardlab.runner.io import (
    score_prepared,
)
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.reward_log import RewardLogger, RowBuffer
from rewardlab.runner.run import score_file_in_memory, score_file_resumable, score_file_streamed
from rewardlab.runner.summary import RunSummary
from rewardlab.store import RunStore
from rewardlab.store.sqlite import default_cache_path

SpecLike = str | Path | dict[str, JSON] | Reward

#: rows per `score_batch` call when a model reward streams a file: the model sorts each call's
#: samples by length into token-budget batches, so a larger call pads less; this many rows of
#: token ids still take little memory, and the output is written chunk by chunk
MODEL_CHUNK_ROWS = 1024
#: rows per `score_batch` call when a file is scored in this process (``workers=0``): one
#: progress step, and the rows written before a `--strict` stop
INLINE_CHUNK_ROWS = 64


def as_sample(value: Sample | Mapping[str, JSON], index: int, fields: Mapping[str, str] | None = None) -> Sample | RewardResult:
    """A Sample from a Sample or dict (its columns mapped by `fields`, as `Sample.from_dict`
    does); an `invalid_input` result naming the index otherwise."""
    if isinstance(value, Sample):
        return value
    try:
        return Sample.from_dict(value, fields=fields, source="samples", line=index)
    except InputError as exc:
        return RewardResult.failure(ErrorKind.INVALID_INPUT, str(exc))


def score(
    spec: SpecLike,
    samples: Iterable[Sample | Mapping[str, JSON]],
    *,
    workers: int = 0,
    timeout: float | None = None,
    fields: Mapping[str, str] | None = None,
) -> list[RewardResult]:
    """Score samples with a reward spec; one stamped result per sample, in order.

    Args:
        spec: a path to a TOML spec, TOML text, a dict, a built Reward, or the registered
            name of one reward (`"math.answer"`, with its default parameters).
        samples: `Sample`s or dicts with the same field names. A malformed dict gets an
            `error/invalid_input` result; the others are still scored.
        workers: worker processes; 0 (default) scores in this process, unless `timeout` is
            set: then one worker process, so the timeout is enforced. A model reward
            (`batches_in_process`) is always scored here, in its own batches
            (`rewardlab.runner.executors.execution_plan` is the rule).
        timeout: seconds a sample may take before it gets `error/timeout`.
        fields: maps Sample field names to the dicts' keys, as `--response-field` and
            `--field` do on the command line: `{"response": "completion", "reference": "answer"}`.

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
        >>> rows = [{"completion": "Paris", "answer": "paris"}]
        >>> [r.score for r in rewardlab.score("text.exact", rows, fields={"response": "completion", "reference": "answer"})]
        [1.0]
    """
    reward = build(spec)
    stamp_hash = core_spec_hash(reward)
    prepared = [as_sample(s, i, fields) for i, s in enumerate(samples, start=1)]
    executor = make_executor(reward, workers=workers, timeout=timeout)
    try:
        out = score_prepared(prepared, executor.map)
    finally:
        executor.close()
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
    logger: RewardLogger | None = None,
) -> RunSummary:
    """Score every row of a data file and write one output row per input row.

    Rows stream to the output, unless the run is recorded (`options.resume`,
    `options.backend == "ray"`, or an `executor` is given): then it runs through
    `rewardlab.runner.run.score_file_resumable`, so an interrupted run resumes. Every run goes
    through the one file engine over an `Executor` (`rewardlab.runner.run.score_chunks`).

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
        logger: where each `options.log_every` rows' statistics go (TensorBoard, W&B:
            `rewardlab.runner.reward_log`); the caller closes it.

    Raises:
        InputError: with `strict`, at the first row that cannot be read.
        UsageError: `executor` without `spec_hash`.
    """
    opts = options or ScoreFileOptions()
    log = RowBuffer(logger, every=opts.log_every) if logger is not None else None
    if executor is None and not opts.resume and opts.backend == "local":
        try:
            return _stream_file(build(spec), Path(input_path), output_path, opts, progress, on_total, log)
        finally:  # a run that stops early still logs the rows it scored
            if log is not None:
                log.flush()
    if executor is not None and spec_hash is None:
        raise UsageError("score_file(executor=...) needs the spec_hash its results are stamped with")
    own: Executor | None = None
    if executor is None:
        reward = build(spec)
        spec_hash = core_spec_hash(reward)
        own = executor = make_executor(reward, backend="ray" if opts.backend == "ray" else "pool", workers=opts.workers,
                                       timeout=opts.timeout, ray_address=opts.ray_address)  # fmt: skip
    store = RunStore(opts.run_store or default_cache_path())
    try:
        summary, _ = score_file_resumable(executor, input_path, output_path, store=store, spec_hash=str(spec_hash),
                                          options=opts, run_id=opts.run_id, resume=opts.resume, progress=progress, log=log)  # fmt: skip
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
    log: RowBuffer | None = None,
) -> RunSummary:
    """`score_file` with nothing recorded: rows in, output rows out, through the file engine
    and the executor `execution_plan` chooses (`runner.run.score_file_streamed`).

    In this process (``workers=0`` without a timeout, or a reward that `batches_in_process`, a
    model: `MODEL_CHUNK_ROWS` rows per `score_batch` call) chunks of rows are scored through
    an `InlineExecutor`; on the worker pool, the raw rows go to the workers, which decode,
    score and encode them (`PoolExecutor.score_rows`): only that lets several workers outrun
    one process. A group reward goes through the engine whole (`runner.run.score_file_in_memory`)."""
    stamp = core_spec_hash(reward)
    executor = make_executor(reward, workers=opts.workers, timeout=opts.timeout, chunk_size=opts.chunk_size)
    try:
        if group_keys(reward):  # the whole file in one batch, so each group is scored whole
            return score_file_in_memory(executor, input_path, output_path, spec_hash=stamp, options=opts,
                                        progress=progress, on_total=on_total, log=log)  # fmt: skip
        size = MODEL_CHUNK_ROWS if batches_in_process(reward) else INLINE_CHUNK_ROWS
        return score_file_streamed(executor, input_path, output_path, spec_hash=stamp, options=opts, chunk_rows=size,
                                   progress=progress, on_total=on_total, log=log)  # fmt: skip
    finally:
        executor.close()


def score_rows(reward: Reward, rows: Sequence[Mapping[str, JSON]]) -> list[RewardResult]:
    """Score dict rows in this process (helper for adapters); bad rows become error results."""
    return score_prepared([as_sample(r, i) for i, r in enumerate(rows, start=1)], reward.score_batch)
