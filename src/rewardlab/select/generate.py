"""The pluggable parts of step-wise search: a generator that proposes next steps, a PRM that scores them.

A solution is a sequence of `Step`s; the last one has `final=True` and carries the extracted
`answer`. Search algorithms only talk to these two protocols, batched (one call per search
round), so the same beam search drives the offline simulator, an OpenAI-compatible server or
any other model:

    class StepGenerator(Protocol):
        def extend(self, problem, prefixes) -> list[Step]       # one next step per prefix
    class StepScorer(Protocol):
        def score(self, problem, prefixes) -> list[float]       # PRM score of each prefix's last step

Every generated step counts its `tokens`; `TokenMeter` adds them up, which is the compute axis
of every comparison (a beam search and best-of-n are compared at equal generated tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Problem", "RewardScorer", "Step", "StepGenerator", "StepScorer", "TokenMeter"]


@dataclass(frozen=True)
class Problem:
    """What a generator is asked to solve.

    Attributes:
        prompt: the problem text.
        reference: the gold answer when known (used only to judge, never by search).
        id: a stable identifier.
        meta: anything a generator needs (the simulator keeps its hidden parameters here).
    """

    prompt: str
    reference: str | None = None
    id: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One reasoning step.

    Attributes:
        text: the step's text.
        tokens: generated tokens it cost.
        final: True when this step ends the solution.
        answer: the final answer, on a final step (None if none could be extracted).
        meta: generator-specific facts (the simulator's hidden correctness lives here; search
            never reads it).
    """

    text: str
    tokens: int
    final: bool = False
    answer: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class StepGenerator(Protocol):
    """Proposes one next step for each prefix (sampled: calling twice gives different steps)."""

    def extend(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[Step]:
        """One sampled next step per prefix, in order."""
        ...


@runtime_checkable
class StepScorer(Protocol):
    """A process reward model: a score for the last step of each prefix (higher is better)."""

    def score(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[float]:
        """One score per prefix, for its last step."""
        ...


def is_complete(prefix: Sequence[Step]) -> bool:
    """Whether a prefix is a whole solution (its last step is final)."""
    return bool(prefix) and prefix[-1].final


def answer_of(prefix: Sequence[Step]) -> str | None:
    """The final answer of a complete prefix (None if incomplete or no answer)."""
    return prefix[-1].answer if is_complete(prefix) else None


class TokenMeter:
    """Counts generated tokens and steps across calls of a wrapped generator."""

    def __init__(self, generator: StepGenerator):
        self.generator = generator
        self.tokens = 0
        self.steps = 0

    def extend(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[Step]:
        steps = self.generator.extend(problem, prefixes)
        if len(steps) != len(prefixes):
            from rewardlab.errors import InputError

            raise InputError(f"generator returned {len(steps)} steps for {len(prefixes)} prefixes", source=type(self.generator).__name__)
        self.tokens += sum(s.tokens for s in steps)
        self.steps += len(steps)
        return steps


class RewardScorer:
    """Any `Reward` as a `StepScorer` (a PRM from a reward spec, a learned PRM, a verifier).

    A prefix becomes `Sample(prompt=problem.prompt, response=<steps joined by delimiter>,
    steps=<step texts>)` — no reference: a PRM judges without the gold answer. The score is the
    last entry of the result's step scores when the reward gives them, else its score. A result
    that is not `ok` scores `-inf` (never preferred by a search) and is counted in `errors`, so a
    failing reward is seen, not read as a low score.
    """

    def __init__(self, reward: Any, *, delimiter: str = "\n\n"):
        self.reward = reward
        self.delimiter = delimiter
        self.errors = 0
        self.error_kinds: dict[str, int] = {}

    def score(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[float]:
        from rewardlab.core import Sample, Status

        samples = [Sample(prompt=problem.prompt, response=self.delimiter.join(s.text for s in p),
                          steps=tuple(s.text for s in p)) for p in prefixes]  # fmt: skip
        out = []
        for result in self.reward.score_batch(samples):
            if result.status is Status.OK and result.score is not None:
                out.append(float(result.steps[-1]) if result.steps else float(result.score))
                continue
            kind = result.error.kind.value if result.error is not None else result.status.value
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
            self.errors += 1
            out.append(float("-inf"))
        return out
