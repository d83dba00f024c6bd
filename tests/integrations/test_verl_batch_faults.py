"""verl's `RewardlabBatchManager` under random faults (seeded), on verl 0.9.1's own
`RewardLoopWorker` built from the documented overrides.

- A reward that raises on some rows and ground truths nested 600 deep, in chunks that verl's
  workers send at the same time (`compute_score_batch`, several at once on the worker's event
  loop, as a Ray async actor runs them) mixed with single responses streamed as they finish
  generating (`compute_score`): every row answered exactly once, with its value, or the
  documented `error_score` with ``rewardlab_error`` 1, and no row of one call in another's reply.
- A group reward whose groups lose members (a response that never reaches the reward worker):
  each row of a group that stays short fails with `GroupSplitError` once no row has come for
  `group_wait` seconds, never hangs; whole groups are scored against their group; late copies of
  a scored group (verl's validation padding) are scored against it.

After each burst the manager scores a normal chunk right. No worker process is involved (the
manager scores in verl's reward worker), so this is not an `isolated` suite.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from integration_spec import tiny_tokenizer
from test_verl_reward_loop import reward_loop_worker

import rewardlab
from deadlines import nested
from rewardlab import Sample
from rewardlab.errors import GroupSplitError
from serve._rewards import register_all

verl = pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
pytest.importorskip("hydra", reason="hydra-core is not installed (dev extra)")
pytestmark = pytest.mark.slow

SEED = 90909
FAULTY_SPEC = '[reward]\nname = "faulty"\n[[reward.components]]\nname = "f"\nuse = "test.faulty"\n'
VOTE_SPEC = '[reward]\nname = "ttrl"\n[[reward.components]]\nname = "vote"\nuse = "labelfree.majority_vote"\nparams = { min_group = 3 }\n'
AT_LEAST = 200
GROUP_WAIT = 0.2  # seconds an incomplete group waits for a new row before its rows fail


def proto(tokenizer: Any, prompts: list[str], responses: list[str], truths: list[Any], uids: list[str] | None = None) -> Any:
    """A `DataProto` the way verl's rollout builds it: left-padded prompts, right-padded
    responses ending in EOS, an attention mask over both, a ground truth (and a uid) per row."""
    import numpy as np
    import torch

    p = tokenizer(prompts, padding="max_length", max_length=24, return_tensors="pt", padding_side="left")
    r = tokenizer([x + tokenizer.eos_token for x in responses], padding="max_length", max_length=40, return_tensors="pt",
                  padding_side="right")  # fmt: skip
    assert p["attention_mask"].sum(1).max() < 24 and r["attention_mask"].sum(1).max() < 40
    truth_column = np.empty(len(truths), dtype=object)
    truth_column[:] = [{"ground_truth": t} for t in truths]
    non_tensors = {
        "data_source": np.array(["d"] * len(prompts), dtype=object),
        "reward_model": truth_column,
        "extra_info": np.array([{"index": i} for i in range(len(prompts))], dtype=object),
    }
    if uids is not None:
        non_tensors["uid"] = np.array(uids, dtype=object)
    return verl.DataProto.from_dict(
        tensors={"prompts": p["input_ids"], "responses": r["input_ids"],
                 "attention_mask": torch.cat([p["attention_mask"], r["attention_mask"]], dim=1)},
        non_tensors=non_tensors,
    )  # fmt: skip


def verl_score(result: Any) -> float:
    """What verl gets for `result` with the documented ``error_score=0.0`` (a tied vote is skipped)."""
    return result.score if result.score is not None else 0.0


def within(loop: asyncio.AbstractEventLoop, awaitable: Any, seconds: float) -> Any:
    """Run `awaitable` on verl's worker loop; fail if it takes longer than `seconds`."""
    return loop.run_until_complete(asyncio.wait_for(awaitable, seconds))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    register_all()  # the manager builds the spec in this process: `test.faulty` must be known
    tiny_tokenizer().save_pretrained(tmp_path / "tokenizer")
    return tmp_path


def test_concurrent_chunks_and_streamed_rows_under_random_faults(run_dir):
    (run_dir / "reward.toml").write_text(FAULTY_SPEC)
    worker = reward_loop_worker(run_dir, marker="RewardlabBatchManager")  # documented: error_score=0.0
    tokenizer, loop = worker.input_tokenizer, worker.loop
    rng = random.Random(SEED)
    injected: Counter[str] = Counter()
    faults = {"raise": 7, "deep": 7}
    flagged = 0

    def draw(n: int, tag: str) -> tuple[list[str], list[str], list[Any]]:
        kinds = ["plain"] * (n - sum(faults.values())) + [k for k, m in faults.items() for _ in range(m)]
        rng.shuffle(kinds)
        texts = ["raise" if k == "raise" else "y" * rng.randrange(0, 12) + f"#{tag}{i}" for i, k in enumerate(kinds)]
        return kinds, texts, [nested(600) if k == "deep" else "t" for k in kinds]

    for burst in range(10):
        # three chunks at once and ten single rows streamed among them
        calls = [draw(rng.randrange(24, 40), f"{burst}.{c}.") for c in range(3)]
        singles = [draw(len(faults) + 1, f"{burst}.s{c}.") for c in range(10)]
        singles = [([k[0]], [t[0]], [g[0]]) for k, t, g in singles]  # one row each, a fault as often as not

        async def burst_calls(calls=calls, singles=singles) -> list[Any]:
            tasks = [asyncio.ensure_future(worker.compute_score_batch(proto(tokenizer, ["q"] * len(t), t, g))) for _, t, g in calls]
            for _, t, g in singles:
                tasks.append(asyncio.ensure_future(worker.compute_score(proto(tokenizer, ["q"], t, g))))
                await asyncio.sleep(0)
            return await asyncio.gather(*tasks)

        started = time.monotonic()
        replies = within(loop, burst_calls(), 60)
        assert time.monotonic() - started < 60
        for (kinds, texts, _), reply in zip([*calls, *singles], replies, strict=True):
            outputs = reply if isinstance(reply, list) else [reply]
            assert len(outputs) == len(kinds)
            for kind, text, out in zip(kinds, texts, outputs, strict=True):
                info = out["reward_extra_info"]
                if kind == "raise":
                    assert (out["reward_score"], info["rewardlab_error"]) == (0.0, 1.0), out
                    flagged += 1
                else:  # a deep ground truth is this reward's business: it scores the response
                    assert out["reward_score"] == pytest.approx(len(text) / 100) and info["rewardlab_error"] == 0.0, (kind, text, out)
            injected.update(k for k in kinds if k != "plain")
        after = within(loop, worker.compute_score_batch(proto(tokenizer, ["q"] * 3, ["a", "bb", "ccc"], ["t"] * 3)), 30)
        assert [o["reward_score"] for o in after] == pytest.approx([0.01, 0.02, 0.03])
    print(f"injected into RewardlabBatchManager: {dict(injected)}")
    assert flagged == injected["raise"]
    assert all(injected[k] >= AT_LEAST for k in faults), injected


def test_groups_that_lose_members_fail_typed_and_the_rest_get_their_group_reward(run_dir):
    """Rows streamed one per call in a random order (verl's agent loop sends each response as it
    finishes): whole groups, groups missing 1-3 of their 4 members, and late copies of whole ones."""
    (run_dir / "reward.toml").write_text(VOTE_SPEC)
    worker = reward_loop_worker(run_dir, [f"+reward.custom_reward_function.reward_kwargs.group_wait={GROUP_WAIT}"],
                                marker="reward.num_workers=1")  # fmt: skip
    tokenizer, loop = worker.input_tokenizer, worker.loop
    rng = random.Random(SEED + 1)
    cut_rows = whole_rows = late_rows = 0
    for burst in range(4):
        groups = {}
        for g in range(45):
            uid = f"b{burst}g{g}"
            groups[uid] = (f"What is {g}+{burst}?", [f"\\boxed{{{rng.choice('45')}}}" for _ in range(4)])
        cut = set(rng.sample(sorted(groups), 30))  # these lose 1-3 members on the way
        rows = []
        for uid in groups:
            keep = rng.randrange(1, 4) if uid in cut else 4
            rows += [(uid, k) for k in rng.sample(range(4), keep)]
        rng.shuffle(rows)
        whole = [uid for uid in groups if uid not in cut]
        late = [(uid, rng.randrange(4)) for uid in rng.sample(whole, 5)]

        async def stream(rows=rows, groups=groups) -> list[Any]:
            tasks = []
            for uid, k in rows:
                data = proto(tokenizer, [groups[uid][0]], [groups[uid][1][k]], [None], [uid])
                tasks.append(asyncio.ensure_future(worker.compute_score(data)))
                await asyncio.sleep(0)
            return await asyncio.gather(*tasks, return_exceptions=True)

        started = time.monotonic()
        outcomes = within(loop, stream(), 30)
        # the cut groups fail once no row has come for GROUP_WAIT: never a hang
        assert time.monotonic() - started < GROUP_WAIT + 20
        want = {}
        for uid in whole:
            samples = [Sample(response=a, group=uid) for a in groups[uid][1]]
            want[uid] = [verl_score(r) for r in rewardlab.score(run_dir / "reward.toml", samples)]
        for (uid, k), outcome in zip(rows, outcomes, strict=True):
            if uid in cut:
                assert isinstance(outcome, GroupSplitError), (uid, outcome)
                assert f"group {uid!r}" in str(outcome) and "4 responses" in str(outcome)
                cut_rows += 1
            else:
                assert not isinstance(outcome, BaseException), (uid, outcome)
                assert outcome["reward_score"] == want[uid][k], (uid, k, outcome)
                whole_rows += 1
        # verl's validation padding: copies of rows of groups scored already
        for uid, k in late:
            data = proto(tokenizer, [groups[uid][0]], [groups[uid][1][k]], [None], [uid])
            out = within(loop, worker.compute_score(data), 30)
            assert out["reward_score"] == verl_score(rewardlab.score(run_dir / "reward.toml", [
                *(Sample(response=a, group=uid) for a in groups[uid][1]), Sample(response=groups[uid][1][k], group=uid)
            ])[-1])  # fmt: skip
            late_rows += 1
    print(f"rows of cut groups: {cut_rows}, of whole groups: {whole_rows}, late copies: {late_rows}")
    assert cut_rows >= AT_LEAST and whole_rows >= AT_LEAST
