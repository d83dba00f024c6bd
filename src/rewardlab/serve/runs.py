"""Resumable batch runs: the logic behind ``rewardlab score --resume / --remote / --backend ray``.

A run reads the input file, scores the rows that the run store does not have yet in chunks,
and records each chunk's output rows in one SQLite transaction. If the process (or the reward
server it talks to) is killed, the rows of committed chunks are kept; the next call with the
same run id skips them. The output file is written only at the end, from the store, in input
order — so every input row appears exactly once, however many times the run was interrupted.

Output rows have the same columns as `rewardlab.runner.score_file` (`runner.io.flatten`).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardlab._version import __version__
from rewardlab.core import ErrorKind, RewardResult, Sample, content_hash, spec_hash
from rewardlab.errors import InputError
from rewardlab.runner.io import RawRow, RowWriter, decode_row, flatten, iter_raw_rows
from rewardlab.runner.summary import RunSummary
from rewardlab.serve.cache import ResultStore
from rewardlab.serve.executors import Executor

__all__ = [
    "RemoteExecutor",
    "RunOptions",
    "input_fingerprint",
    "run_id_for",
    "score_file_resumable",
    "score_file_with",
]

Progress = Callable[[int], None]


@dataclass(frozen=True)
class RunOptions:
    """Options of `score_file_resumable` (a subset of `ScoreFileOptions`, plus the chunk)."""

    fields: Mapping[str, str] | None = None
    keep_input: bool = True
    strict: bool = False
    limit: int | None = None
    # One chunk is one transaction and, remotely, one request: 256 rows keep a request well
    # under the server's body limit and lose at most 256 rows of work to a crash.
    chunk_size: int = 256


class RemoteExecutor:
    """An `Executor` that sends batches to a reward server (`Client.score`)."""

    def __init__(self, url: str, reward: str, *, token: str | None = None, **client_options: Any):
        from rewardlab.serve.client import Client

        self.reward = reward
        self.client = Client(url, token=token, **client_options)

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return self.client.score(self.reward, list(samples))

    def spec_hash(self) -> str:
        """The served reward's spec hash (what its results are stamped with)."""
        from rewardlab.serve.client import ServerError

        for info in self.client.rewards():
            if info["name"] == self.reward:
                return str(info["spec_hash"])
        raise ServerError(404, "unknown_reward", f"the server does not serve {self.reward!r}")

    def close(self) -> None:
        self.client.close()


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


def _score_chunk(
    chunk: Sequence[RawRow], executor: Executor, opts: RunOptions, source: str
) -> list[tuple[int, dict[str, Any]]]:
    """Recorded payloads for a chunk: ``{"row": input fields, "result": RewardResult dict}``.

    Bad rows become `invalid_input` results naming file and line; the rest go out as one batch.
    """
    decoded: list[tuple[int, dict[str, Any], Sample | RewardResult]] = []
    for number, raw in chunk:
        try:
            row = decode_row(raw, source, number)
            decoded.append((number, row, Sample.from_dict(row, fields=opts.fields, source=source, line=number)))
        except InputError as exc:
            base = {"raw_line": raw[:1000]} if isinstance(raw, str) else {}
            decoded.append((number, base, RewardResult.failure(ErrorKind.INVALID_INPUT, str(exc))))
    valid = [s for _, _, s in decoded if isinstance(s, Sample)]
    scored = iter(executor.map(valid) if valid else [])
    out = []
    for number, row, item in decoded:
        result = next(scored) if isinstance(item, Sample) else item
        kept = row if opts.keep_input or isinstance(item, RewardResult) else {}
        out.append((number, {"row": kept, "result": result.to_dict()}))
    return out


def score_file_resumable(
    executor: Executor,
    input_path: str | Path,
    output_path: str | Path,
    *,
    store: ResultStore,
    spec_hash: str,
    options: RunOptions | None = None,
    run_id: str | None = None,
    resume: bool = True,
    progress: Progress | None = None,
) -> tuple[RunSummary, str]:
    """Score a data file through `executor`, recording rows in `store` so the run can resume.

    Args:
        executor: computes batches (local pool, Ray, or `RemoteExecutor`).
        input_path: JSONL, Parquet or a saved `datasets` folder.
        output_path: ``.jsonl`` or ``.parquet``; written when every row is recorded.
        store: the run store.
        spec_hash: stamped on every row, and part of the default run id.
        options: fields, keep_input, strict, limit, chunk size.
        run_id: the run to start or resume (default: `run_id_for` spec, input, output).
        resume: keep the rows a previous attempt of `run_id` recorded; ``False`` starts over.
        progress: called with the number of rows just recorded.

    Returns:
        The run summary (over every row, resumed ones included) and the run id.

    Raises:
        InputError: the run id belongs to another spec or input; with `strict`, a bad row.
        ServerError: (remote) the server could not be reached after every retry; rows done so
            far stay recorded, call again to resume.
    """
    opts = options or RunOptions()
    input_path, output_path = Path(input_path), Path(output_path)
    source = str(input_path)
    run_id = run_id or run_id_for(spec_hash, input_path, output_path, opts.limit)
    if not resume:
        store.drop_run(run_id)
    store.start_run(run_id, spec_hash=spec_hash, source=input_fingerprint(input_path))
    done = store.done_rows(run_id)
    if progress is not None and done:
        progress(len(done))
    rows: Iterable[RawRow] = iter_raw_rows(input_path)
    if opts.limit is not None:
        rows = itertools.islice(rows, opts.limit)
    started = time.perf_counter()
    pending = (r for r in rows if r[0] not in done)
    for chunk in _chunks(pending, opts.chunk_size):
        out = _score_chunk(chunk, executor, opts, source)
        if opts.strict:
            bad = next((p["result"] for _, p in out if p["result"].get("error", {}).get("kind") == "invalid_input"), None)
            if bad is not None:
                raise InputError(f"{bad['error']['message']} (--strict stops at the first bad row)")
        store.record_rows(run_id, out)
        if progress is not None:
            progress(len(out))
    summary = _write_output(store, run_id, output_path, spec_hash)
    summary.seconds = time.perf_counter() - started
    store.finish_run(run_id)
    return summary, run_id


def _write_output(store: ResultStore, run_id: str, output_path: Path, spec_hash: str) -> RunSummary:
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


def score_file_with(
    spec: str | Path,
    input_path: Path,
    output_path: Path,
    options: RunOptions,
    *,
    backend: str = "local",
    workers: int | None = None,
    timeout: float | None = 60.0,
    remote: str | None = None,
    token: str | None = None,
    ray_address: str | None = None,
    resume: bool = False,
    run_id: str | None = None,
    cache_path: str | Path | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """``rewardlab score`` with ``--resume``, ``--remote URL`` or ``--backend ray``.

    With `remote`, `spec` is the served reward's name, or a spec file whose ``[reward] name``
    is served (its hash must match the server's, so the rows are stamped truthfully).

    Raises:
        UsageError: the server serves another version of the spec; an unknown backend.
    """
    from rewardlab.serve.cache import default_cache_path

    executor, reward_hash = _executor_for(spec, backend, workers, timeout, remote, token, ray_address)
    store = ResultStore(cache_path or default_cache_path())
    try:
        summary, _ = score_file_resumable(
            executor, input_path, output_path, store=store, spec_hash=reward_hash, options=options,
            run_id=run_id, resume=resume, progress=progress,
        )
    finally:
        executor.close()
        store.close()
    return summary


def _executor_for(
    spec: str | Path,
    backend: str,
    workers: int | None,
    timeout: float | None,
    remote: str | None,
    token: str | None,
    ray_address: str | None,
) -> tuple[Executor, str]:
    """The executor for a run and the spec hash its rows are stamped with."""
    from rewardlab.errors import UsageError

    if remote is not None:
        local = _build_if_file(spec)
        remote_exec = RemoteExecutor(remote, local.name if local is not None else str(spec), token=token)
        served_hash = remote_exec.spec_hash()
        if local is not None and spec_hash(local) != served_hash:
            raise UsageError(
                f"the server's {remote_exec.reward!r} has spec hash {served_hash}, the local spec {spec_hash(local)}; "
                "restart the server with this spec or pass the served name instead of the file"
            )
        return remote_exec, served_hash
    from rewardlab.compose import build
    from rewardlab.runner import default_workers
    from rewardlab.serve.executors import make_executor

    reward = build(Path(spec))
    if backend == "ray":
        from rewardlab.serve.ray_backend import RayExecutor

        return RayExecutor(reward, timeout=timeout, address=ray_address), spec_hash(reward)
    if backend == "local":
        n = default_workers() if workers is None else workers
        return make_executor(reward, backend="pool", workers=n, timeout=timeout), spec_hash(reward)
    raise UsageError(f"unknown --backend {backend!r}; use 'local' or 'ray'")


def _build_if_file(spec: str | Path) -> Any:
    path = Path(spec)
    if not path.is_file():
        return None
    from rewardlab.compose import build

    return build(path)
