"""Every path that takes `workers` and `timeout` gives a sample the same fate: one rule
(`rewardlab.runner.executors.execution_plan`). ``workers=0`` without a timeout scores in this
process; a timeout the caller gives is always enforced (``workers=0`` then runs one worker
process), so a sample that sleeps past it is `error/timeout` whichever door it came through."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import rewardlab
from rewardlab import BaseReward, RewardResult, Sample
from rewardlab.cli.main import main
from rewardlab.errors import ConfigError
from rewardlab.evaluate._scoring import scorer
from rewardlab.integrations.trl import as_trl_reward
from rewardlab.runner import ScoreFileOptions, WorkerPool, execution_plan, make_executor, score_file
from rewardlab.serve.app import create_app
from rewardlab.serve.settings import RewardLimits, ServeSettings

NAP = 1.0  # seconds the reward sleeps: 2.5 times the timeout, so only a kill can end it early
TIMEOUT = 0.4

Fate = tuple[str, str | None, int | None]  # status, error kind, pid of the process that scored


class Nap(BaseReward):
    """Sleeps `NAP` seconds, then 1.0 with the pid of the process that computed it."""

    name = "test.nap"
    range = (0.0, 1.0)

    def compute(self, sample: Sample) -> RewardResult:
        time.sleep(NAP)
        return RewardResult.ok(1.0, info={"pid": os.getpid()})


class GroupNap(Nap):
    """`Nap` as a group reward (scored a whole group at a time)."""

    name = "test.group_nap"
    group_keys = frozenset({"group"})

    def score_batch(self, samples: list[Sample]) -> list[RewardResult]:
        time.sleep(NAP)
        return [RewardResult.ok(1.0, info={"pid": os.getpid()}) for _ in samples]


rewardlab.register("test.nap", Nap, overwrite=True)


def _fate(result: RewardResult) -> Fate:
    kind = result.error.kind.value if result.error is not None else None
    return result.status.value, kind, result.info.get("pid") if result.error is None else None


def _row_fate(path: Path) -> Fate:
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    info = row["reward_info"]
    pid = info.get("pid", info.get("test_nap", {}).get("pid"))  # a reward named on the CLI is a component
    return row["reward_status"], row["reward_error_kind"], pid if row["reward_status"] == "ok" else None


def _data(tmp_path: Path, **extra: Any) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"prompt": "q", "response": "a", **extra}) + "\n")
    return path


def via_score(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    return _fate(rewardlab.score(Nap(), [{"response": "a"}], workers=workers, timeout=timeout)[0])


def via_score_file(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    out = tmp_path / "out.jsonl"
    score_file(Nap(), _data(tmp_path), out, ScoreFileOptions(workers=workers, timeout=timeout))
    return _row_fate(out)


def via_score_file_resume(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    out = tmp_path / "out.jsonl"
    options = ScoreFileOptions(workers=workers, timeout=timeout, resume=True, run_store=tmp_path / "runs.sqlite")
    score_file(Nap(), _data(tmp_path), out, options)
    return _row_fate(out)


def via_score_file_groups(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    out = tmp_path / "out.jsonl"
    score_file(GroupNap(), _data(tmp_path, group="g"), out, ScoreFileOptions(workers=workers, timeout=timeout))
    return _row_fate(out)


def via_cli(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    """`rewardlab score`: no --timeout is the default, which with worker processes is 60 s (more
    than the nap) and with ``-w 0`` is none; a given --timeout is enforced."""
    out = tmp_path / "out.jsonl"
    given = [] if timeout is None else ["--timeout", str(timeout)]
    assert main(["score", "test.nap", str(_data(tmp_path)), "-o", str(out), "-w", str(workers), *given, "--no-progress"]) == 0
    return _row_fate(out)


def via_make_executor(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    executor = make_executor(Nap(), backend="pool", workers=workers, timeout=timeout)
    try:
        return _fate(executor.map([Sample(response="a")])[0])
    finally:
        executor.close()


def via_worker_pool(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    with WorkerPool(Nap(), workers=workers, timeout=timeout) as pool:
        return _fate(pool.map([Sample(response="a")])[0])


def via_evaluate_scorer(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    with scorer(Nap(), workers=workers, timeout=timeout) as score:
        return _fate(score([Sample(response="a")])[0])


def via_trl(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    reward_fn = as_trl_reward(Nap(), workers=workers, timeout=timeout)
    try:
        reward_fn(prompts=["q"], completions=["a"])
        return _fate(reward_fn.last_results[0])
    finally:
        reward_fn.close()


def via_server(workers: int, timeout: float | None, tmp_path: Path) -> Fate:
    """The server's executor, through the app in-process (ServeSettings' sample_timeout)."""
    app = create_app({"nap": Nap()}, None, ServeSettings(workers=workers, sample_timeout=timeout))

    async def go() -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
                reply = await client.post("/v1/rewards/nap:score", json={"samples": [{"response": "a"}]}, timeout=60)
                return dict(reply.json()["results"][0])
        finally:
            await app.state.service.aclose()

    return _fate(RewardResult.from_dict(asyncio.run(go())))


PATHS: list[Callable[[int, float | None, Path], Fate]] = [
    via_score, via_score_file, via_score_file_resume, via_score_file_groups, via_cli, via_make_executor,
    via_worker_pool, via_evaluate_scorer, via_trl, via_server,
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("timeout", [None, TIMEOUT], ids=["no-timeout", "timeout"])
@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("path", PATHS, ids=lambda f: f.__name__.removeprefix("via_"))
def test_workers_and_timeout_mean_the_same_on_every_path(path, workers, timeout, tmp_path):
    status, kind, pid = path(workers, timeout, tmp_path)
    if timeout is not None:  # asked for, so enforced: the nap is cut short in a worker process
        assert (status, kind) == ("error", "timeout")
    else:  # no timeout: the nap completes, in this process exactly when workers == 0
        assert (status, kind) == ("ok", None)
        assert (pid == os.getpid()) == (workers == 0)


@pytest.mark.parametrize(
    ("workers", "timeout", "where", "processes"),
    [(0, None, "inline", 0), (0, TIMEOUT, "pool", 1), (1, None, "pool", 1), (2, TIMEOUT, "pool", 2)],
)
def test_execution_plan_is_the_rule(workers, timeout, where, processes):
    plan = execution_plan(Nap(), workers=workers, timeout=timeout)
    assert (plan.where, plan.workers) == (where, processes)
    assert plan.timeout == (timeout if where == "pool" else None)


def test_a_reward_that_batches_in_process_stays_inline_whatever_the_workers():
    reward = Nap()
    reward.batches_in_process = True  # type: ignore[attr-defined]  # as `model.hf` declares it
    for backend in ("pool", "inline"):
        assert execution_plan(reward, backend=backend, workers=2, timeout=TIMEOUT).where == "inline"


def test_score_file_options_refuses_an_unknown_backend_naming_the_choices():
    with pytest.raises(ConfigError, match=r"backend must be one of 'local', 'ray'; got 'bogus'"):
        ScoreFileOptions(backend="bogus")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"), [("workers", -1), ("timeout", 0), ("timeout", -2.0), ("chunk_size", 0), ("record_every", 0), ("limit", -1)]
)
def test_score_file_options_refuse_unusable_values_naming_the_field(field, value):
    with pytest.raises(ConfigError, match=field):
        ScoreFileOptions(**{field: value})


def test_make_executor_refuses_an_unknown_backend_naming_the_choices():
    with pytest.raises(ConfigError, match=r"'inline', 'pool', 'ray'; got 'bogus'"):
        make_executor(Nap(), backend="bogus")  # type: ignore[arg-type]


def test_serve_workers_zero_without_a_timeout_is_the_server_process():
    assert ServeSettings(workers=0).sample_timeout is None
    assert ServeSettings(workers=0, sample_timeout=5).sample_timeout == 5
    assert ServeSettings().sample_timeout == 60.0


def test_serve_per_reward_workers_zero_follows_the_same_rule():
    assert ServeSettings(per_reward={"a": RewardLimits(workers=0)}).for_reward("a").sample_timeout is None
    assert ServeSettings(sample_timeout=5, per_reward={"a": RewardLimits(workers=0)}).for_reward("a").sample_timeout == 5
    assert ServeSettings(per_reward={"a": RewardLimits(workers=0, sample_timeout=3)}).for_reward("a").sample_timeout == 3


def test_the_default_timeout_still_reaches_ray_with_workers_zero():
    assert ServeSettings(backend="ray", workers=0).sample_timeout == 60.0


class Pid(BaseReward):
    """1.0 with the pid of the process that computed it, at once."""

    name = "test.pid"
    range = (0.0, 1.0)

    def compute(self, sample: Sample) -> RewardResult:
        return RewardResult.ok(1.0, info={"pid": os.getpid()})


def test_score_file_options_default_timeout_is_for_worker_processes(tmp_path):
    """``ScoreFileOptions(workers=0)`` scores in this process, as ``rewardlab.score(workers=0)``
    does; the same 60 s passed by the caller is enforced (in one worker process)."""
    assert ScoreFileOptions(workers=0).timeout is None
    assert ScoreFileOptions(workers=0, timeout=60.0).timeout == 60.0
    assert ScoreFileOptions().timeout == ScoreFileOptions(workers=2).timeout == 60.0
    assert ScoreFileOptions(workers=0, backend="ray").timeout == 60.0  # Ray tasks are processes
    for options, here in [(ScoreFileOptions(workers=0), True), (ScoreFileOptions(workers=0, timeout=60.0), False)]:
        out = tmp_path / "out.jsonl"
        score_file(Pid(), _data(tmp_path), out, options)
        assert _row_fate(out) == ("ok", None, _row_fate(out)[2])
        assert (_row_fate(out)[2] == os.getpid()) == here
