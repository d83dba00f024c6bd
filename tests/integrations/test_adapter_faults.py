"""The trainer adapters under random faults (seeded): TRL's reward call with the worker pool
(`as_trl_reward(spec, workers=2)`, kill -9 of its busy workers meanwhile), OpenRLHF's
`make_reward_func` and verl's `compute_score` / `compute_score_batch`.

Every call must answer each row exactly once, in order, with its right value or its fault's typed
error turned into the adapter's documented value (TRL: None, which TRL sums as NaN; OpenRLHF:
`error_reward` with ``extra_logs['rewardlab/error']`` set; verl: `error_score` with
``rewardlab_error`` set), return within its deadline, and leave the adapter able to score the
next normal call right.
"""

from __future__ import annotations

import contextlib
import functools
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil
import pytest

from deadlines import nested, within_deadline
from serve._rewards import register_all

pytestmark = [pytest.mark.slow, pytest.mark.isolated, pytest.mark.timeout(300)]

SEED = 39039
SPEC = '[reward]\nname = "faulty"\n[[reward.components]]\nname = "f"\nuse = "test.faulty"\n'
# Per sample in the pool: far above a normal row, even on a loaded machine; a dying row's worker
# is gone long before it.
TIMEOUT = 0.75
# What each fault's total must be: (error kind, a phrase of the message). A raising component
# fails the total as `component`, naming it.
EXPECTED = {
    "raise": ("component", "verifier bug"),
    "crash": ("crash", "exit code 3"),
    "sleep": ("timeout", "per-sample timeout"),
    "deep": ("invalid_input", "nested too deep"),
}


@pytest.fixture(autouse=True)
def _faulty_registered() -> None:
    register_all()


def draw(rng: random.Random, n: int, faults: dict[str, int]) -> list[str]:
    kinds = ["plain"] * (n - sum(faults.values())) + [k for k, m in faults.items() for _ in range(m)]
    rng.shuffle(kinds)
    return kinds


def completion(kind: str, i: int, rng: random.Random) -> str:
    """The response of a row: a fault's trigger word, or a unique plain text (score len/100)."""
    return "y" * rng.randrange(0, 30) + f"#{i}" if kind == "plain" else ("ok-deep" if kind == "deep" else kind)


class PoolKiller:
    """kill -9 of a random busy worker of `pool` (a `ProcessPool`) every few milliseconds;
    never of one on a never-answering sample (left to the timeout, so that it is exercised)."""

    def __init__(self, pool: Any, rng: random.Random):
        self.pool, self.rng, self.kills = pool, rng, 0
        # kills left until the caller gives more: a fixed number per call, since a killer that
        # kills whenever a worker is busy keeps the pool busy redoing killed chunks
        self.allowance = 0
        self.stop = threading.Event()
        self.last: psutil.Process | None = None

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.003, 0.015)):
            busy = []
            for w in list(self.pool._workers):
                task = w.task
                if task is None:
                    continue
                with contextlib.suppress(IndexError, AttributeError):
                    if task.entries[int(w.progress[0])][1].response_text == "sleep":
                        continue
                busy.append(w)
            if busy and self.allowance > 0:
                with contextlib.suppress(psutil.NoSuchProcess):
                    self.last = psutil.Process(self.rng.choice(busy).process.pid)
                    self.last.kill()
                    self.kills += 1
                    self.allowance -= 1

    def __enter__(self) -> PoolKiller:
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop, once the last kill has landed: a signal is delivered asynchronously, and a worker
        killed just as it finished would look alive to the next call, whose first row would be
        blamed for its death."""
        self.stop.set()
        self.thread.join(10)
        deadline = time.monotonic() + 10
        while self.last is not None and time.monotonic() < deadline:
            try:
                if self.last.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.01)


def test_trl_reward_call_with_the_worker_pool_under_random_faults():
    from rewardlab.integrations.trl import as_trl_reward

    rng = random.Random(SEED)
    reward = as_trl_reward(SPEC, workers=2, timeout=TIMEOUT)
    faults = {"raise": 10, "crash": 10, "deep": 10, "sleep": 2}  # 200 each over 20 calls, 40 never answering
    injected: Counter[str] = Counter()
    killed = 0
    logged: list[float] = []

    def call(kinds: list[str], offset: int) -> tuple[list[str], list[Any]]:
        completions = [completion(kind, offset + i, rng) for i, kind in enumerate(kinds)]
        solutions = [nested(600) if kind == "deep" else "s" for kind in kinds]
        log_metric = lambda key, value: logged.append(value) if key == "rewardlab/error_rate" else None  # noqa: E731
        # TRL's call (`GRPOTrainer._calculate_rewards`): keywords, dataset columns, its hooks.
        values = within_deadline(
            reward, prompts=["q"] * len(kinds), completions=completions, completion_ids=None, solution=solutions,
            log_metric=log_metric, deadline=faults["sleep"] * TIMEOUT + 30,
        )  # fmt: skip
        return completions, values

    try:
        call(["plain"] * 4, -10)  # the pool starts on the first call
        with PoolKiller(reward._pool.pool._pool, random.Random(SEED + 1)) as killer:
            burst = -1
            # 20 calls, and more (at most 40) while the killer is short of 200 kills: a call
            # may end before its 11 (on a fast machine); what it leaves goes to the next
            while burst < 19 or (killer.kills < 200 and burst < 39):
                burst += 1
                killer.allowance += 11
                kinds = draw(rng, rng.randrange(80, 160), faults)
                completions, values = call(kinds, burst * 1000)
                results = reward.last_results
                assert len(values) == len(results) == len(kinds)
                for kind, text, value, result in zip(kinds, completions, values, results, strict=True):
                    error = result.error
                    if error is not None and error.kind.value == "crash" and "exit code 3" not in error.message:
                        killed += 1  # the killer's kill -9: a typed crash, None for TRL
                        assert value is None and "died" in error.message
                    elif kind == "plain":
                        assert value == pytest.approx(len(text) / 100), (text, result)
                    else:
                        want, phrase = EXPECTED[kind]
                        assert value is None and error is not None and error.kind.value == want and phrase in error.message
                errors = sum(r.error is not None for r in results)
                assert logged[-1] == pytest.approx(errors / len(kinds))
                injected.update(k for k in kinds if k != "plain")
        # The next normal call works, and with it every row.
        completions, values = call(["plain"] * 40, 10**6)
        assert values == pytest.approx([len(t) / 100 for t in completions])
    finally:
        reward.close()
    print(f"injected into TRL's pool: {dict(injected)}, kills {killer.kills}; rows killed: {killed}")
    assert all(injected[k] >= 20 * n for k, n in faults.items()), injected
    assert killer.kills >= 200 and killed <= killer.kills


def _openrlhf_row(kind: str, i: int, rng: random.Random) -> tuple[str, str, Any]:
    """(query, prompt, label) of an OpenRLHF row: the query is the prompt and the response."""
    prompt = f"<|user|>question {i}?<|assistant|>"
    if kind == "unlocated":  # the prompt is not in the query (a tokenizer that changed it)
        return f"<|user|>question {i}!<|assistant|>answer", prompt, "l"
    if kind == "deep":
        return prompt + "ok-deep", prompt, nested(600)
    return prompt + completion(kind, i, rng), prompt, "l"


def test_openrlhf_reward_func_under_random_faults():
    """OpenRLHF's `reward_func` in process: raising rows, prompts that cannot be located in the
    query, labels nested 600 deep; each row's reward is its value or `error_reward`, flagged."""
    from rewardlab.integrations.openrlhf import make_reward_func

    rng = random.Random(SEED + 2)
    func = make_reward_func(SPEC, error_reward=-7.0, special_tokens=("<|user|>", "<|assistant|>"))
    faults = {"raise": 21, "unlocated": 21, "deep": 21}
    injected: Counter[str] = Counter()
    for burst in range(10):
        kinds = draw(rng, rng.randrange(60, 120), faults)
        rows = [_openrlhf_row(kind, burst * 1000 + i, rng) for i, kind in enumerate(kinds)]
        queries, prompts, labels = (list(col) for col in zip(*rows, strict=True))
        reply = within_deadline(func, queries, prompts, labels)
        rewards, flags = reply["rewards"].tolist(), reply["extra_logs"]["rewardlab/error"].tolist()
        assert len(rewards) == len(flags) == len(kinds)
        for kind, (query, prompt, _), value, flag in zip(kinds, rows, rewards, flags, strict=True):
            if kind in ("raise", "unlocated"):
                assert (value, flag) == (-7.0, 1.0), (kind, query)
            else:  # the response is the query after its prompt; a deep label is this reward's business
                assert value == pytest.approx(len(query[len(prompt) :]) / 100) and flag == 0.0, (kind, query, value)
        injected.update(k for k in kinds if k != "plain")
    print(f"injected into OpenRLHF's reward_func: {dict(injected)}")
    assert all(n >= 200 for n in injected.values()), injected
    after = func(["<|user|>q<|assistant|>abcd"], ["<|user|>q<|assistant|>"], ["l"])
    assert after["rewards"].tolist() == pytest.approx([0.04]) and after["extra_logs"]["rewardlab/error"].tolist() == [0.0]


def test_verl_compute_score_and_batch_under_random_faults(tmp_path):
    """verl's `compute_score` (one row per call, from several threads as verl's reward loop does)
    and `compute_score_batch`: raising rows are `error_score` with ``rewardlab_error`` 1, rows
    with a ground truth nested 600 deep are scored, the rest are their values."""
    from rewardlab.integrations.verl import compute_score, compute_score_batch

    spec = tmp_path / "faulty.toml"
    spec.write_text(SPEC)
    rng = random.Random(SEED + 3)
    faults = {"raise": 21, "deep": 21}
    injected: Counter[str] = Counter()

    one_row = functools.partial(compute_score, "d", extra_info=None, spec=str(spec), error_score=-3.0)

    def expect(kind: str, text: str, row: dict[str, float]) -> None:
        if kind == "raise":
            assert (row["score"], row["rewardlab_error"]) == (-3.0, 1.0), row
        else:
            assert row["score"] == pytest.approx(len(text) / 100) and row["rewardlab_error"] == 0.0, (kind, text, row)

    for burst in range(10):
        kinds = draw(rng, rng.randrange(60, 120), faults)
        texts = [completion(kind, burst * 1000 + i, rng) for i, kind in enumerate(kinds)]
        truths = [nested(600) if kind == "deep" else "t" for kind in kinds]
        rows = within_deadline(
            compute_score_batch, ["d"] * len(kinds), texts, truths, [None] * len(kinds), spec=str(spec), error_score=-3.0
        )
        assert len(rows) == len(kinds)
        for kind, text, row in zip(kinds, texts, rows, strict=True):
            expect(kind, text, row)
        # One row per call, four threads at once.
        with ThreadPoolExecutor(4) as threads:
            singles = list(threads.map(one_row, texts, truths, timeout=60))
        for kind, text, row in zip(kinds, texts, singles, strict=True):
            expect(kind, text, row)
        injected.update(k for k in kinds if k != "plain")
    print(f"injected into verl's compute_score and compute_score_batch (each): {dict(injected)}")
    assert all(n >= 200 for n in injected.values()), injected
    assert compute_score("d", "abc", "t", None, spec=str(spec), error_score=-3.0)["score"] == pytest.approx(0.03)
