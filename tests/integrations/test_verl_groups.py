"""Group rewards through verl 0.9.1's own reward path.

verl's trainer gives each prompt a `uid` (`RayPPOTrainer.fit`) and, without a reward model,
computes rewards while it generates: `AgentLoopWorker._compute_score` sends each response alone,
as a one-row `DataProto`, to `RewardLoopWorker.compute_score`. With a reward model (no separate
pool) `RewardLoopManager.compute_rm_score` hands each worker a chunk (`compute_score_batch`).
Both are driven here on verl's own `RewardLoopWorker`, built from the documented overrides by
verl's config composition, with `DataProto`s built by verl's constructors; the rewards must be
the ones `rewardlab.score` gives on the same groups.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from integration_spec import tiny_tokenizer
from test_verl_reward_loop import reward_loop_worker

import rewardlab
from rewardlab import Sample
from rewardlab.errors import GroupSplitError

verl = pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
pytest.importorskip("hydra", reason="hydra-core is not installed (dev extra)")
pytestmark = pytest.mark.slow

VOTE_SPEC = """
[reward]
name = "ttrl"
[[reward.components]]
name = "vote"
use = "labelfree.majority_vote"
params = { min_group = 3 }
"""
GROUP_MARKER = "reward.num_workers=1"  # the documented command for group rewards
# Two prompts, 4 responses each (rollout.n = 4); any part of 2-3 members votes differently.
GROUPS = {
    "uid-a": ("What is 2+2?", ["\\boxed{4}", "\\boxed{5}", "\\boxed{4}", "\\boxed{4}"]),
    "uid-b": ("What is 2+6?", ["\\boxed{7}", "\\boxed{8}", "\\boxed{8}", "\\boxed{8}"]),
}
# verl's balance_batch reorders the batch: the members of a group need not be neighbours.
ORDER = [("uid-a", 0), ("uid-b", 0), ("uid-a", 1), ("uid-b", 1), ("uid-a", 2), ("uid-b", 2), ("uid-a", 3), ("uid-b", 3)]


@pytest.fixture
def run_dir(tmp_path):
    (tmp_path / "reward.toml").write_text(VOTE_SPEC)
    tiny_tokenizer().save_pretrained(tmp_path / "tokenizer")
    return tmp_path


def group_worker(run_dir: Path, extra: list[str] = ()):
    return reward_loop_worker(run_dir, list(extra), marker=GROUP_MARKER)


def rows_batch(tokenizer, rows: list[tuple[str, int]], *, uids: bool = True):
    """A `DataProto` of `rows` (uid, member) the way verl's rollout builds it: left-padded
    prompts, right-padded responses ending in EOS, verl's `uid` per prompt."""
    import numpy as np
    import torch

    prompts = [GROUPS[uid][0] for uid, _ in rows]
    responses = [GROUPS[uid][1][k] + tokenizer.eos_token for uid, k in rows]
    p = tokenizer(prompts, padding="max_length", max_length=24, return_tensors="pt", padding_side="left")
    r = tokenizer(responses, padding="max_length", max_length=24, return_tensors="pt", padding_side="right")
    non_tensors = {
        "data_source": np.array(["math"] * len(rows), dtype=object),
        "reward_model": np.array([{"ground_truth": None} for _ in rows], dtype=object),
        "extra_info": np.array([{"index": i} for i in range(len(rows))], dtype=object),
    }
    if uids:
        non_tensors["uid"] = np.array([uid for uid, _ in rows], dtype=object)
    return verl.DataProto.from_dict(
        tensors={"prompts": p["input_ids"], "responses": r["input_ids"],
                 "attention_mask": torch.cat([p["attention_mask"], r["attention_mask"]], dim=1)},
        non_tensors=non_tensors,
    )  # fmt: skip


def expected(run_dir: Path, rows: list[tuple[str, int]]) -> list[float | None]:
    """`rewardlab.score` on the same rows, each in its group."""
    samples = [Sample(response=GROUPS[uid][1][k], group=uid) for uid, k in rows]
    return [r.score for r in rewardlab.score(run_dir / "reward.toml", samples)]


def test_the_groups_are_built_so_a_part_votes_differently(run_dir):
    """Control: the rows scored one chunk at a time (what a cut group gets) differ."""
    whole = expected(run_dir, ORDER)
    assert whole == [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    halves = expected(run_dir, ORDER[:4]) + expected(run_dir, ORDER[4:])
    assert halves != whole


def test_a_chunk_is_scored_in_its_uid_groups(run_dir):
    worker = group_worker(run_dir)
    data = rows_batch(worker.input_tokenizer, ORDER)
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    assert [o["reward_score"] for o in outputs] == expected(run_dir, ORDER)
    assert [o["reward_extra_info"]["vote/scored"] for o in outputs] == [1.0] * 8


def test_without_a_uid_the_prompt_is_the_group(run_dir):
    worker = group_worker(run_dir)
    data = rows_batch(worker.input_tokenizer, ORDER, uids=False)
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    assert [o["reward_score"] for o in outputs] == expected(run_dir, ORDER)


def test_streamed_rows_wait_for_their_whole_group(run_dir):
    """verl's agent loop sends each response on its own as it finishes generating."""
    worker = group_worker(run_dir)
    data = rows_batch(worker.input_tokenizer, ORDER)

    async def stream():
        tasks = []
        for i in range(len(ORDER)):
            tasks.append(asyncio.ensure_future(worker.compute_score(data[i : i + 1])))
            for _ in range(5):  # several turns between two responses, as between two generations
                await asyncio.sleep(0)
            if i == 5:  # a0..a2, b0..b2 arrived: no group is whole, nobody is scored yet
                assert not any(t.done() for t in tasks)
        return await asyncio.gather(*tasks)

    outputs = worker.loop.run_until_complete(stream())
    assert [o["reward_score"] for o in outputs] == expected(run_dir, ORDER)


def test_a_late_copy_of_a_scored_group_is_scored_against_that_group(run_dir):
    """verl's validation pads its batch with copies of the first rows (same uid)."""
    worker = group_worker(run_dir)
    group_a = [("uid-a", k) for k in range(4)]
    worker.loop.run_until_complete(worker.compute_score_batch(rows_batch(worker.input_tokenizer, group_a)))
    late = worker.loop.run_until_complete(worker.compute_score_batch(rows_batch(worker.input_tokenizer, [("uid-a", 1)])))
    assert [o["reward_score"] for o in late] == expected(run_dir, [*group_a, ("uid-a", 1)])[-1:] == [0.0]


def test_a_group_that_never_completes_fails_instead_of_hanging(run_dir):
    worker = group_worker(run_dir, ["+reward.custom_reward_function.reward_kwargs.group_wait=0.05"])
    data = rows_batch(worker.input_tokenizer, [("uid-a", 0), ("uid-a", 1), ("uid-a", 2)])
    with pytest.raises(GroupSplitError, match=r"3 of group 'uid-a'.s 4 responses"):
        worker.loop.run_until_complete(worker.compute_score_batch(data))


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("reward.num_workers=2", "reward.num_workers=1"),
        ("actor_rollout_ref.rollout.val_kwargs.n=1", "val_kwargs.n=4"),
        ("data.train_batch_size=512", "data.train_batch_size * n <= 1000"),
        ("data.val_batch_size=null", "data.val_batch_size * n <= 1000"),
        ("algorithm.adv_estimator=remax", "remax"),
    ],
    ids=["two_reward_workers", "validation_groups_of_one", "more_rows_than_ray_runs_at_once", "whole_validation_set_at_once", "remax_baseline"],
)
def test_a_configuration_that_cannot_keep_groups_whole_is_refused_at_start(run_dir, override, named):
    with pytest.raises(GroupSplitError, match=named.replace("*", r"\*")):
        group_worker(run_dir, [override])


def test_the_documented_group_command_is_accepted_by_verl(run_dir):
    from rewardlab.integrations.verl_batch import RewardlabBatchManager

    manager = group_worker(run_dir).reward_manager
    assert isinstance(manager, RewardlabBatchManager) and manager.group_size == 4


def test_compute_score_one_row_at_a_time_refuses_a_group_reward(run_dir):
    worker = reward_loop_worker(run_dir)  # the documented per-row command (naive manager)
    data = rows_batch(worker.input_tokenizer, ORDER[:2])
    with pytest.raises(GroupSplitError, match="RewardlabBatchManager"):
        worker.loop.run_until_complete(worker.compute_score_batch(data))


def test_legacy_batch_reward_manager_groups_rows_by_their_prompt(run_dir):
    """verl's legacy `BatchRewardManager` passes the batch's lists, no uid: the prompt in
    `extra_info` (verl's gsm8k preprocessing puts the question there) is the group."""
    import functools

    from verl.workers.reward_manager.batch import BatchRewardManager

    from rewardlab.integrations.verl import compute_score_batch

    tokenizer = tiny_tokenizer()
    data = rows_batch(tokenizer, ORDER)
    for i, (uid, _) in enumerate(ORDER):
        data.non_tensor_batch["extra_info"][i]["question"] = GROUPS[uid][0]
    fn = functools.partial(compute_score_batch, spec=str(run_dir / "reward.toml"))
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=fn)
    out = manager(data, return_dict=True)
    assert out["reward_tensor"].sum(dim=1).tolist() == expected(run_dir, ORDER)
    assert out["reward_extra_info"]["vote/scored"] == [1.0] * 8


def test_verls_defaults_are_refused_naming_both_overrides(run_dir):
    """The batch manager's command without the group settings: verl's shipped defaults (8 reward
    workers, validation groups of 1 response) cannot give a group reward whole groups."""
    with pytest.raises(GroupSplitError, match=r"reward\.num_workers=1.*val_kwargs\.n=4"):
        reward_loop_worker(run_dir, ["actor_rollout_ref.rollout.n=4", "data.train_batch_size=8"], marker="RewardlabBatchManager")


def test_legacy_batch_rows_without_uid_or_prompt_are_refused_not_merged(run_dir):
    """Without a uid or a prompt every row would look like one group: refused, naming the row."""
    import functools

    from verl.workers.reward_manager.batch import BatchRewardManager

    from rewardlab.integrations.verl import compute_score_batch

    tokenizer = tiny_tokenizer()
    fn = functools.partial(compute_score_batch, spec=str(run_dir / "reward.toml"))
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=fn)
    with pytest.raises(GroupSplitError, match="verl row 0 has no uid and no prompt"):
        manager(rows_batch(tokenizer, ORDER))


class RayActorHandle:
    """What `AgentLoopWorker._compute_score` uses of a Ray handle: `await h.compute_score.remote(data)`
    runs the actor's coroutine (the transport is the only stand-in; the reward worker is verl's)."""

    def __init__(self, worker):
        self.compute_score = SimpleNamespace(remote=worker.compute_score)


def verl_method(module: str, cls: str, name: str):
    """verl's own method `cls.name`, compiled from its module's source file (the module needs
    torchdata to import, which the reward path does not; the method needs only `DataProto`)."""
    import ast
    import importlib.util

    path = Path(importlib.util.find_spec(module).origin)
    tree = ast.parse(path.read_text())
    owner = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    fn = next(n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace: dict = {"DataProto": verl.DataProto}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(path), "exec"), namespace)
    return namespace[name]


def test_verls_agent_loop_streams_each_response_with_its_uid_and_gets_the_group_reward(run_dir):
    """verl's trainer batch (a uid per prompt, `_get_gen_batch`, `repeat(n, interleave=True)`)
    through verl's own `AgentLoopWorker._compute_score`, one response at a time in a shuffled
    order, to the reward worker: every response gets its whole group's reward."""
    import random
    import uuid

    import numpy as np

    pytest.importorskip("cachetools", reason="verl's agent loop imports cachetools (dev extra)")
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopMetrics,
        AgentLoopOutput,
        AgentLoopWorker,
    )

    reward_worker = group_worker(run_dir)
    tokenizer = reward_worker.input_tokenizer
    uids = list(GROUPS)
    prompts = [GROUPS[u][0] for u in uids]
    batch = verl.DataProto.from_dict(
        tensors={"input_ids": tokenizer(prompts, padding=True, return_tensors="pt")["input_ids"]},
        non_tensors={
            "data_source": np.array(["math"] * 2, dtype=object),
            "reward_model": np.array([{"ground_truth": None}] * 2, dtype=object),
            "extra_info": np.array([{"index": i} for i in range(2)], dtype=object),
            "raw_prompt": np.empty(2, dtype=object),  # each a chat, as RLHFDataset gives it
        },
    )
    batch.non_tensor_batch["raw_prompt"][:] = [[{"role": "user", "content": p}] for p in prompts]
    batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch.batch))], dtype=object)  # RayPPOTrainer.fit
    gen_batch = verl_method("verl.trainer.ppo.ray_trainer", "RayPPOTrainer", "_get_gen_batch")(None, batch)
    gen_batch = gen_batch.repeat(repeat_times=4, interleave=True)
    # AgentLoopWorker.generate_sequences: a sample's kwargs are its non-tensor fields
    kwargs = [{k: v[i] for k, v in gen_batch.non_tensor_batch.items()} for i in range(len(gen_batch))]
    rows = [(uids[i // 4], i % 4) for i in range(8)]  # interleaved repeat: a prompt's 4 responses side by side
    outputs = [
        AgentLoopOutput(prompt_ids=tokenizer(GROUPS[u][0])["input_ids"], response_ids=ids, response_mask=[1] * len(ids),
                        metrics=AgentLoopMetrics())
        for u, k in rows
        for ids in [tokenizer(GROUPS[u][1][k] + tokenizer.eos_token)["input_ids"]]
    ]  # fmt: skip
    agent = object.__new__(AgentLoopWorker)  # only what _compute_score reads: no LLM servers here
    agent.processor, agent.mm_processor_kwargs = None, {}
    agent.reward_loop_worker_handles = [RayActorHandle(reward_worker)]
    finish_order = random.Random(0).sample(range(8), 8)  # generations finish in any order

    async def stream():
        tasks = {}
        for i in finish_order:
            tasks[i] = asyncio.ensure_future(AgentLoopWorker._compute_score(agent, [outputs[i]], kwargs=kwargs[i]))
            for _ in range(5):
                await asyncio.sleep(0)
        await asyncio.gather(*tasks.values())

    reward_worker.loop.run_until_complete(stream())
    assert [o.reward_score for o in outputs] == expected(run_dir, rows)
    assert [o.extra_fields["reward_extra_info"]["vote/scored"] for o in outputs] == [1.0] * 8
