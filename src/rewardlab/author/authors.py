"""Authors write candidate reward code: a language model behind any OpenAI-compatible
endpoint, or an offline template author that searches the parameters of a reward template.

Both answer the same request (the task, the goal, the round, and the records of earlier
rounds) with source code, which then goes through the same static checks, sandbox and
fitness as any other candidate: the template author is not trusted more than a model.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rewardlab.author.checks import CodePolicy
from rewardlab.author.prompts import extract_code, task_messages
from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import merit, rank
from rewardlab.errors import ConfigError, RewardCodeError, ScoringError

__all__ = ["Author", "LLMAuthor", "Proposal", "TemplateAuthor"]


@dataclass(frozen=True)
class Proposal:
    """One candidate as the author wrote it: what it was asked, what it answered, the code
    (None when none could be taken from the answer, with `error` saying why)."""

    index: int
    prompt: Any
    reply: str
    code: str | None
    error: str | None = None
    error_kind: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


class Author(Protocol):
    """Writes `len(indices)` candidates for round `round` given the `history` of records."""

    name: str

    def propose(self, task: FiniteTask, goal: str, round: int, indices: Sequence[int],
                history: Sequence[Mapping[str, Any]], policy: CodePolicy) -> list[Proposal]: ...  # fmt: skip


# -- the offline template author ------------------------------------------------------------------
#: A reward template: success bonus, failure penalty, step cost, and two potential-based terms:
#: task progress (Phi = weight * stages completed) and distance to the cells that move the task
#: forward. Both are F = gamma*Phi(s') - Phi(s) with Phi = 0 at the end, which keeps the optimal
#: policy of the rest (Ng, Harada and Russell, "Policy invariance under reward transformations",
#: ICML 1999). A progress bonus paid once per stage instead is not invariant: discounting makes an
#: early bonus worth more, so its optimum fetches the nearest item first even on a longer route.
TEMPLATE = '''GAMMA = {gamma!r}
TARGETS = {targets!r}
SCALE = {scale!r}
W_SUCCESS = {success!r}
W_FAILURE = {failure!r}
STEP_COST = {step_cost!r}
W_PROGRESS = {progress!r}
W_SHAPING = {shaping!r}
OFFSET = {offset!r}
DEPTH = {depth!r}


def progress_potential(obs):
    return W_PROGRESS * DEPTH.get(obs.get("stage", 0), 0)


def potential(obs):
    cells = TARGETS.get(obs.get("stage", 0), [])
    if not cells or W_SHAPING == 0:
        return 0.0
    distance = min(abs(obs["x"] - x) + abs(obs["y"] - y) for x, y in cells)
    return W_SHAPING * (OFFSET - distance / SCALE)


def reward(obs, action, next_obs, info):
    ended = info["success"] or info["failed"]
    shaping = (0.0 if ended else GAMMA * potential(next_obs)) - potential(obs)
    progress = (0.0 if ended else GAMMA * progress_potential(next_obs)) - progress_potential(obs)
    return {{
        "success": W_SUCCESS * float(info["success"]),
        "failure": -W_FAILURE * float(info["failed"]),
        "step": -STEP_COST,
        "progress": progress,
        "shaping": shaping,
    }}
'''

#: the values each template parameter may take; the first of each is the sparse start
TEMPLATE_SPACE: Mapping[str, tuple[float, ...]] = {
    "failure": (0.0, 0.1, 1.0),
    "step_cost": (0.0, 0.01, 0.05),
    "progress": (0.0, 0.1, 0.5, 1.0),
    "shaping": (0.0, 0.1, 0.5, 1.0),
    "offset": (0.0, 1.0),
}


class TemplateAuthor:
    """Searches `TEMPLATE_SPACE` from the sparse start (success bonus only) by mutation.

    Round 0 proposes the start and mutations of it; every later round mutates the best
    candidate so far (by true-task optimality: an elitist (1 + k) evolution strategy). A
    mutation redraws one to three parameters, and up to one more for every round the best has
    not improved (a stalled search takes larger steps, as the step-size adaptation of evolution
    strategies does: Rechenberg 1973, Beyer and Schwefel 2002); parameters already tried are
    not proposed again. A lineage whose best merit has not risen for `restart_after` rounds is
    left for a new one from the sparse start (restarts, as in restart evolution strategies:
    Auger and Hansen 2005): a small space has local optima that no short step leaves.
    Deterministic given `seed`, the round and the index, so a resumed loop asks for the same
    candidates.
    """

    name = "template"

    def __init__(self, *, seed: int = 0, start: Mapping[str, float] | None = None, gamma: float = 0.9,
                 restart_after: int = 3):  # fmt: skip
        if restart_after < 1:
            raise ConfigError(f"restart_after must be >= 1 round, got {restart_after}")
        self.seed, self.gamma, self.restart_after = seed, gamma, restart_after
        self.start = {k: v[0] for k, v in TEMPLATE_SPACE.items()} | dict(start or {})
        unknown = set(self.start) - set(TEMPLATE_SPACE)
        if unknown:
            raise ConfigError(f"unknown template parameters {sorted(unknown)}; known: {sorted(TEMPLATE_SPACE)}")

    def render(self, task: FiniteTask, params: Mapping[str, float]) -> str:
        """The template's source for `task` with `params`."""
        targets = {int(k): [tuple(c) for c in v] for k, v in task.facts.get("stage_targets", {}).items()}
        depth = {int(k): int(v) for k, v in task.facts.get("stage_depth", {}).items()}
        scale = float(task.facts.get("width", 10) + task.facts.get("height", 10))
        return TEMPLATE.format(gamma=self.gamma, targets=targets, depth=depth, scale=scale, success=1.0, **params)

    def propose(self, task: FiniteTask, goal: str, round: int, indices: Sequence[int],
                history: Sequence[Mapping[str, Any]], policy: CodePolicy) -> list[Proposal]:  # fmt: skip
        lineage, parent, stalled = self._parent(history, round)
        tried = {_key(r["meta"]["params"]) for r in history if "params" in r.get("meta", {})}
        out = []
        for index in indices:
            rng = random.Random(f"{self.seed}/{round}/{index}" + (f"/{lineage}" if lineage else ""))
            params = parent if (round == 0 and index == 0) else self._mutate(parent, rng, tried, 3 + stalled)
            tried.add(_key(params))
            prompt = {"template": "success/failure/step/progress/shaping", "parent": parent, "stalled_rounds": stalled,
                      "lineage": lineage}  # fmt: skip
            code = self.render(task, params)
            out.append(Proposal(index, prompt, code, code, meta={"params": params, "lineage": lineage}))
        return out

    def _parent(self, history: Sequence[Mapping[str, Any]], round: int) -> tuple[int, dict[str, float], int]:
        """(lineage, parent, rounds stalled): the best of the current lineage, or the sparse start
        of a new lineage once the current one's best merit is `restart_after` rounds old."""
        mine = [r for r in history if "params" in r.get("meta", {})]
        lineage = max((int(r["meta"].get("lineage", 0)) for r in mine), default=0)
        scored = [r for r in mine if r.get("fate") == "scored" and int(r["meta"].get("lineage", 0)) == lineage]
        if not scored:
            return lineage, dict(self.start), 0
        best = max(scored, key=rank)
        top = merit(best)
        reached = min(int(r["round"]) for r in scored if merit(r) >= top - 1e-9)
        stalled = max(0, round - 1 - reached)
        if stalled >= self.restart_after:
            return lineage + 1, dict(self.start), 0
        return lineage, dict(best["meta"]["params"]), stalled

    @staticmethod
    def _mutate(parent: Mapping[str, float], rng: random.Random, tried: set[str], most: int) -> dict[str, float]:
        child = dict(parent)
        for _ in range(50):
            child = dict(parent)
            for name in rng.sample(sorted(TEMPLATE_SPACE), rng.randint(1, min(most, len(TEMPLATE_SPACE)))):
                child[name] = rng.choice([v for v in TEMPLATE_SPACE[name] if v != parent[name]])
            if _key(child) not in tried:
                return child
        return child


def _key(params: Mapping[str, float]) -> str:
    return repr(sorted(params.items()))


# -- a language model ----------------------------------------------------------------------------
class LLMAuthor:
    """A language model behind an OpenAI-compatible chat endpoint (vLLM, Ollama, OpenAI...).

    Each candidate is one completion of the prompt of `rewardlab.author.prompts.task_messages`
    (the reflection on earlier rounds included); the code is the reply's last fenced block
    that defines `reward`. A failed request or a reply without code is that candidate's fate,
    never the loop's end.

    Args:
        base_url: e.g. `http://127.0.0.1:8000/v1`.
        model: the model name the endpoint serves.
        temperature: sampling temperature (Eureka samples at 1.0 for diversity).
        api_key_env: environment variable with the API key (none sent when unset).
        timeout: seconds per request.
        retries: retries of a failed request (see `rewardlab.judges.client.ChatClient`).
    """

    name = "llm"

    def __init__(self, base_url: str, model: str, *, temperature: float = 1.0, max_tokens: int = 2048,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 120.0, retries: int = 2):  # fmt: skip
        from rewardlab.judges.client import ChatClient

        self.model, self.temperature, self.max_tokens = model, temperature, max_tokens
        self.client = ChatClient(base_url, api_key_env=api_key_env, timeout=timeout, retries=retries)
        self.name = f"llm:{model}"

    def propose(self, task: FiniteTask, goal: str, round: int, indices: Sequence[int],
                history: Sequence[Mapping[str, Any]], policy: CodePolicy) -> list[Proposal]:  # fmt: skip
        messages = task_messages(task, goal, policy, history)
        out = []
        for index in indices:
            try:
                reply = self.client.complete(self.model, messages, temperature=self.temperature, max_tokens=self.max_tokens).text
            except ScoringError as exc:
                out.append(Proposal(index, messages, "", None, f"the endpoint failed: {exc}", "author_error"))
                continue
            try:
                out.append(Proposal(index, messages, reply, extract_code(reply)))
            except RewardCodeError as exc:
                out.append(Proposal(index, messages, reply, None, exc.message, exc.kind))
        return out

    def close(self) -> None:
        self.client.close()
