"""Model rewards are batched through every runner path: `rewardlab score` (streamed and recorded
runs), `rewardlab.score(workers=...)` and Ray. The model's forward is counted in this process:
a path that scored row by row, or in worker processes that each load their own copy, would show
one forward per row here (or none at all)."""

from __future__ import annotations

import json
import math
import pickle
import random

import pytest
import torch

import rewardlab
from rewardlab.cli.main import main
from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.models.hf_load import load_model
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, save_tiny
from rewardlab.runner.executors import InlineExecutor, make_executor

N = 150
MAX_BATCH = 64


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny(tmp_path_factory.mktemp("runner") / "rm", "qwen2", seed=60)


@pytest.fixture()
def forwards(model_dir):
    """Rows per forward call of the one loaded copy of the model, in this process."""
    loaded = load_model(str(model_dir), kind="sequence")
    calls: list[int] = []
    handle = loaded.model.register_forward_pre_hook(lambda _m, _a, kw: calls.append(len(kw["input_ids"])),
                                                    with_kwargs=True)
    yield calls
    handle.remove()


def _rows(n: int = N) -> list[dict[str, str]]:
    rng = random.Random(8)
    return [{"prompt": " ".join(rng.choice(WORDS[:200]) for _ in range(rng.randint(1, 10))),
             "response": " ".join(rng.choice(WORDS[:200]) for _ in range(rng.randint(1, 20)))} for _ in range(n)]


def _spec(tmp_path, model_dir):
    path = tmp_path / "spec.toml"
    path.write_text(f'[reward]\nname = "rm"\n[[reward.components]]\nname = "rm"\nuse = "model.hf"\n'
                    f'params = {{ model = "{model_dir}", max_batch_size = {MAX_BATCH} }}\n')
    return path


def _expected(model_dir, rows):
    rm = HFReward(model=str(model_dir))
    return [r.score for r in rm.score_batch([Sample(prompt=r["prompt"], response=r["response"]) for r in rows])]


@pytest.mark.parametrize("extra", [[], ["--workers", "2"], ["--workers", "0"], ["--resume"]],
                         ids=["default", "workers2", "workers0", "recorded"])
def test_rewardlab_score_batches_the_model_in_this_process(tmp_path, model_dir, forwards, extra):
    rows = _rows()
    expected = _expected(model_dir, rows)
    forwards.clear()
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    cache = ["--cache", str(tmp_path / "runs.sqlite")] if "--resume" in extra else []
    assert main(["score", str(_spec(tmp_path, model_dir)), str(data), "-o", str(out), *extra, *cache]) == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["reward_status"] for g in got] == ["ok"] * N
    torch.testing.assert_close(torch.tensor([g["reward"] for g in got]), torch.tensor(expected), atol=1e-5,
                               rtol=0)
    assert sum(forwards) == N  # the forward ran here ...
    assert len(forwards) <= 2 * math.ceil(N / MAX_BATCH), forwards  # ... in batches, not row by row


def test_the_library_with_workers_batches_the_model_in_this_process(model_dir, forwards):
    rows = _rows(40)
    expected = _expected(model_dir, rows)
    forwards.clear()
    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(model_dir)}}]}}
    results = rewardlab.score(spec, rows, workers=2)
    assert [r.status for r in results] == [Status.OK] * 40
    assert [r.score for r in results] == pytest.approx(expected, abs=1e-5)
    assert len(forwards) == 1 and forwards[0] == 40


def test_the_pool_backend_is_inline_for_a_model_reward(model_dir):
    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(model_dir)}}]}}
    executor = make_executor(build(spec), backend="pool", workers=2)
    try:
        assert isinstance(executor, InlineExecutor)
    finally:
        executor.close()


def test_a_model_reward_pickles_as_its_parameters(model_dir):
    rm = HFReward(model=str(model_dir), max_batch_size=7, normalize="sigmoid")
    data = pickle.dumps(rm)
    assert len(data) < 4_000  # the parameters, not the weights
    copy = pickle.loads(data)
    assert copy.params == rm.params and copy.max_batch_size == 7
    sample = Sample(prompt="w1 w2", response="w3 w4")
    assert copy.score(sample).score == rm.score(sample).score


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ray_scores_a_model_reward_in_one_task_per_batch(ray_session, model_dir):
    from rewardlab.runner.ray import RayExecutor

    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(model_dir)}}]}}
    reward = build(spec)
    executor = make_executor(reward, backend="ray")
    try:
        assert isinstance(executor, RayExecutor) and executor._size(10_000) >= 10_000
        samples = [Sample(prompt=r["prompt"], response=r["response"]) for r in _rows(30)]
        got = executor.map(samples)
        assert [r.score for r in got] == pytest.approx([r.score for r in reward.score_batch(samples)], abs=1e-5)
    finally:
        executor.close()


class _InProcessGroup:
    """A group reward that batches in its own process (as a model in a group spec does): each
    member scores its group's size and records the process that scored it."""

    name = "test.in_process_group"
    range = (0.0, 100.0)
    group_keys = frozenset({"group"})
    batches_in_process = True

    def score(self, sample):
        return self.score_batch([sample])[0]

    def score_batch(self, samples):
        import os

        from rewardlab.core import RewardResult

        sizes: dict = {}
        for s in samples:
            sizes[s.group] = sizes.get(s.group, 0) + 1
        return [RewardResult.ok(float(sizes[s.group]), info={"pid": os.getpid()}) for s in samples]

    async def ascore_batch(self, samples):
        return self.score_batch(samples)

    def describe(self):
        return {"use": self.name}


def test_a_group_file_with_an_in_process_reward_is_scored_here(tmp_path):
    import os

    from rewardlab.runner.options import ScoreFileOptions
    from rewardlab.runner.score import score_file

    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps({"response": f"r{i}", "group": f"g{i % 3}"}) + "\n" for i in range(12)))
    out = tmp_path / "out.jsonl"
    score_file(_InProcessGroup(), data, out, ScoreFileOptions(workers=2))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward"] for r in rows] == [4.0] * 12  # whole groups
    assert {r["reward_info"]["pid"] for r in rows} == {os.getpid()}
