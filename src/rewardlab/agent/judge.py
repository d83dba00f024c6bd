"""`agent.rank`: a whole group of trajectories ranked in one judge call, asked in both orders.

ART's RULER idea (relative judging: the trajectories of one prompt are scored against each other,
which is easier for a judge than an absolute score): each group is rendered as numbered
trajectories and the judge answers ``[[i]] = score`` (0-10) for each. Judges favour positions,
so with ``swap`` (default) the group is asked a second time in reverse order and each
trajectory's two scores are averaged, the protection `judge.pairwise` uses for pairs;
``info["consistent"]`` says whether both orders ranked the group alike. Reversal cancels a bias
for the first (or last) position exactly between the two ends; a trajectory in the middle of a
group of three or more keeps its position in both orders, so a judge's first-position bonus
still separates it from the ends (tests/agent/test_agent_rank.py shows the numbers). An answer that misses a
trajectory's score is a `parse` error for the group, never a 0.

It is a group reward (`group_keys`): every shell hands it whole groups.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from rewardlab.agent.tool_calls import trajectory_of
from rewardlab.core.registry import registry
from rewardlab.core.result import ErrorKind, RewardResult
from rewardlab.core.reward import BaseReward, GroupKey, Reward, group_id
from rewardlab.core.sample import Sample
from rewardlab.core.trajectory import Trajectory, is_trajectory, parse_trajectory
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.judges.client import ChatClient, OwnsChatClient, Usage
from rewardlab.store.calls import CallCache

SYSTEM = (
    "You compare several attempts by an AI agent at the same task. Each attempt is a trajectory of "
    "assistant turns, tool calls and tool results. Judge how well each attempt accomplishes the task: "
    "correct tool use, correct final state and answer, no wasted or harmful actions. Score every attempt "
    "from 0 (useless) to 10 (perfect), relative to the others."
)
_SCORE = re.compile(r"\[\[\s*(\d+)\s*\]\]\s*[=:]\s*(\d+(?:\.\d+)?)")


def render_trajectory(trajectory: Trajectory, *, max_chars: int = 4000) -> str:
    """A trajectory as plain text for a judge: one line per turn, call and result (long text cut)."""
    lines = []
    results = iter(trajectory.results)
    for message in trajectory.messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "assistant":
            if content:
                lines.append(f"[assistant] {content}")
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                lines.append(f"[call] {function.get('name')}({json.dumps(function.get('arguments'), ensure_ascii=False, sort_keys=True)})")
        elif role in ("tool", "function", "ipython"):
            result = next(results, None)
            lines.append(f"[tool{' error' if result is not None and result.error else ''}] {content}")
        else:
            lines.append(f"[{role}] {content}")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars // 2] + "\n[...]\n" + text[-max_chars // 2 :]


class GroupRank(OwnsChatClient, BaseReward):
    """Relative scores of a group's trajectories from one judge call per order (see the module doc).

    Args:
        base_url: the OpenAI-compatible API root (`.../v1`).
        model: the judge model name.
        swap: ask the reversed order too and average (removes position bias; twice the calls).
        group_by: what makes a group: the sample's `group` id or its prompt text.
        max_chars: longest rendering of one trajectory (the middle is cut).
        temperature: sampling temperature (None: the server's default).
        max_tokens: longest judge answer.
        timeout: seconds per request.
        retries: attempts after the first for retryable failures.
        concurrency: groups judged at the same time.
        cache: path of the SQLite call cache, or None.
        api_key_env: environment variable with the API key.
    """

    name = "agent.rank"
    range = (0.0, 1.0)

    def __init__(self, *, base_url: str, model: str, swap: bool = True, group_by: Literal["group", "prompt"] = "group",
                 max_chars: int = 4000, temperature: float | None = None, max_tokens: int | None = 512,
                 timeout: float = 60.0, retries: int = 3, concurrency: int = 4, cache: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY"):  # fmt: skip
        if group_by not in ("group", "prompt"):
            raise ConfigError(f"group_by must be 'group' or 'prompt', got {group_by!r}")
        if max_chars < 100 or concurrency < 1:
            raise ConfigError("need max_chars >= 100 and concurrency >= 1")
        self.group_by: GroupKey = group_by
        self.group_keys: frozenset[GroupKey] = frozenset({group_by})  # runners keep a group in one batch
        self._sampling: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        self.usage = Usage()
        self._client = self._new_client()

    def _new_client(self) -> ChatClient:
        p: dict[str, Any] = dict(self.params)
        cache = CallCache(p["cache"]) if p["cache"] else None
        return ChatClient(p["base_url"], api_key_env=p["api_key_env"], timeout=p["timeout"], retries=p["retries"],
                          max_connections=p["concurrency"], cache=cache)  # fmt: skip

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        out: list[RewardResult | None] = [None] * len(samples)
        groups: dict[str, list[int]] = {}
        for i, sample in enumerate(samples):
            key = group_id(sample, self.group_by)
            if key is None:
                out[i] = RewardResult.failure(ErrorKind.INVALID_INPUT, f"{self.name} needs the sample's `group`; sample {sample.id} has none")
            else:
                groups.setdefault(key, []).append(i)
        members = list(groups.values())
        with ThreadPoolExecutor(max_workers=min(int(self.params["concurrency"]), max(1, len(members)))) as pool:
            scored = list(pool.map(lambda m: self._safe_group([samples[i] for i in m]), members))
        for indices, results in zip(members, scored, strict=True):
            for i, result in zip(indices, results, strict=True):
                out[i] = result
        return [r for r in out if r is not None]

    def _safe_group(self, group: Sequence[Sample]) -> list[RewardResult]:
        try:
            return self._group(group)
        except ScoringError as exc:
            return [RewardResult.failure(exc.kind, str(exc)) for _ in group]

    def _group(self, group: Sequence[Sample]) -> list[RewardResult]:
        texts = [render_trajectory(trajectory_of(s), max_chars=int(self.params["max_chars"])) for s in group]
        n = len(texts)
        forward = self._ask(group[0].prompt_text, texts)
        orders = [forward]
        if self.params["swap"] and n > 1:
            backward = self._ask(group[0].prompt_text, texts[::-1])
            orders.append(backward[::-1])  # back to the group's order
        scores = [sum(o[i] for o in orders) / len(orders) for i in range(n)]
        consistent = len(orders) == 1 or _ranking(orders[0]) == _ranking(orders[1])
        return [RewardResult.ok(scores[i] / 10.0, info={"scores": [o[i] for o in orders], "consistent": consistent, "group_size": n})
                for i in range(n)]  # fmt: skip

    def _ask(self, task: str, texts: Sequence[str]) -> list[float]:
        shown = "\n\n".join(f"=== Trajectory {i + 1} ===\n{t}" for i, t in enumerate(texts))
        user = (f"Task:\n{task}\n\n{shown}\n\nAnswer with one line per trajectory, exactly in the form "
                f"[[number]] = score, for numbers 1 to {len(texts)}.")  # fmt: skip
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
        completion = self._client.complete(str(self.params["model"]), messages, usage=self.usage, **self._sampling)
        found = {int(i): float(s) for i, s in _SCORE.findall(completion.text)}
        missing = [i for i in range(1, len(texts) + 1) if i not in found]
        if missing or any(not 0 <= s <= 10 for s in found.values()):
            raise ScoringError("parse", f"the judge's answer lacks scores in 0..10 for trajectories {missing}: {completion.text[-300:]!r}")
        return [found[i] for i in range(1, len(texts) + 1)]


def _ranking(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


_JUDGES = ("judge.llm", "judge.rubric", "judge.pairwise")


class TrajectoryJudge(BaseReward):
    """A judge (`judge.llm`, `judge.rubric` or `judge.pairwise`) over the rendered trajectory.

    The judge sees `render_trajectory`'s text as the response; for `judge.pairwise`, a baseline
    in ``meta`` that is itself a trajectory (a message list) is rendered the same way, so two
    trajectories are compared in both orders with the pairwise judge's swap.

    Args:
        judge: the judge reward to ask.
        params: its parameters (``base_url``, ``model``, ``template``, ``criteria``...).
        max_chars: longest rendering of one trajectory (the middle is cut).
    """

    name = "agent.judge"
    range = (0.0, 1.0)

    def __init__(self, *, judge: Literal["judge.llm", "judge.rubric", "judge.pairwise"] = "judge.llm",
                 params: dict[str, Any] | None = None, max_chars: int = 4000):  # fmt: skip
        if judge not in _JUDGES:
            raise ConfigError(f"judge must be one of {list(_JUDGES)}, got {judge!r}")
        if max_chars < 100:
            raise ConfigError(f"max_chars must be >= 100, got {max_chars}")
        self._inner: Reward = registry.create(judge, params or {}, location="params")
        self.range = self._inner.range
        self._max_chars = max_chars

    def compute(self, sample: Sample) -> RewardResult:
        text = render_trajectory(trajectory_of(sample), max_chars=self._max_chars)
        meta: Mapping[str, Any] = sample.meta
        key = str(dict(getattr(self._inner, "params", {})).get("baseline_key", "baseline"))
        if is_trajectory(meta.get(key)):
            baseline = render_trajectory(parse_trajectory(meta[key], field=f"meta.{key}"), max_chars=self._max_chars)
            meta = {**meta, key: baseline}
        return self._inner.score(dataclasses.replace(sample, response=text, meta=meta))
