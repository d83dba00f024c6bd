"""An offline step-reasoning simulator with known correctness, for tests and benches of search.

The model (every number seeded, so a run is reproducible):

- a problem has a per-step accuracy `p` (drawn from Beta(a, b): some problems are hard) and a
  solution length `L` (uniform in a range);
- a generated step of a still-correct prefix is correct with probability `p`; once a step goes
  wrong the prefix stays wrong (`recovery` = 0 by default);
- step `L` is final: a correct chain ends in the reference answer, a broken one in one of a few
  distractors with Zipf-like weights, so wrong answers collide the way they do in real votes;
- each step costs Poisson(`tokens_per_step`) + 1 tokens;
- the PRM is noisy but informative: a step of a correct prefix gets a signal N(+d/2, 1), any
  other step N(-d/2, 1), and the PRM's score is sigmoid(signal). It is *not* calibrated (a score
  of 0.8 is not an 80 % chance); calibrate it on held-out rollouts (`adaptive.fit_calibrator`).

The hidden facts (`ok`, the PRM signal) live in `Step.meta`; search code never reads them, only
`judge` and the simulated PRM do.

Randomness is keyed, not streamed: the k-th step ever drawn after a given prefix comes from a
generator seeded with (seed, prefix, k). Two simulators with the same seed therefore produce the
same i-th rollout whatever else was drawn in between, so methods compared on fresh simulators
see common random numbers: best-of-n and early rejection grow the same solutions until one is
dropped, and an adaptive vote reads a prefix of the same sample sequence a fixed vote reads.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.select.generate import Problem, Step
from rewardlab.select.options import SimulatorConfig

__all__ = ["SimulatedPRM", "StepSimulator", "judge"]


class StepSimulator:
    """A `StepGenerator` over simulated problems; `.prm` is its matching `StepScorer`.

    Examples:
        >>> sim = StepSimulator(seed=0)
        >>> problem = sim.problems(1)[0]
        >>> prefix = []
        >>> while not prefix or not prefix[-1].final:
        ...     prefix.append(sim.extend(problem, [prefix])[0])
        >>> len(prefix) >= problem.meta["length"]   # longer if it went wrong (a detour)
        True
    """

    def __init__(self, config: SimulatorConfig | None = None, *, seed: int = 0):
        self.config = config or SimulatorConfig()
        self.seed = seed
        self.prm = SimulatedPRM()
        self._draws: dict[str, int] = {}  # prefix key -> steps drawn after it so far

    def problems(self, n: int, *, seed: int | None = None) -> list[Problem]:
        """`n` problems; the same `seed` (default: the simulator's) gives the same problems."""
        seed = self.seed if seed is None else seed
        rng = np.random.default_rng(seed)
        cfg = self.config
        p = rng.beta(*cfg.step_accuracy, size=n)
        lengths = rng.integers(cfg.steps[0], cfg.steps[1] + 1, size=n)
        return [
            Problem(prompt=f"simulated problem {i}", reference=str(1000 + i), id=f"sim-{seed}-{i}",
                    meta={"p_step": float(p[i]), "length": int(lengths[i])})
            for i in range(n)
        ]  # fmt: skip

    def extend(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[Step]:
        return [self._step(problem, prefix) for prefix in prefixes]

    def _rng(self, key: str) -> tuple[np.random.Generator, str]:
        """The generator of the next step after prefix `key`, and that step's own key."""
        draw = self._draws.get(key, 0)
        self._draws[key] = draw + 1
        digest = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng([self.seed, digest, draw]), f"{key}/{draw}"

    def _step(self, problem: Problem, prefix: Sequence[Step]) -> Step:
        cfg = self.config
        if prefix and prefix[-1].final:
            raise ArrayError("prefixes", "a complete solution cannot be extended")
        rng, key = self._rng(str(prefix[-1].meta["key"]) if prefix else f"{problem.id}:{problem.prompt}")
        was_ok = not prefix or bool(prefix[-1].meta["ok"])
        p = float(problem.meta["p_step"])
        ok = bool(rng.random() < p) if was_ok else bool(rng.random() < cfg.recovery)
        signal = rng.normal(cfg.prm_separation / 2 if ok else -cfg.prm_separation / 2, 1.0)
        tokens = int(rng.poisson(cfg.tokens_per_step)) + 1
        depth = len(prefix) + 1
        length = int(problem.meta["length"])
        if not ok and was_ok:  # the step that breaks the chain fixes how long it will wander
            length = depth + int(rng.poisson(cfg.detour)) + max(length - depth, 0)
        elif prefix:
            length = int(prefix[-1].meta["length"])
        final = depth >= length
        answer = None
        if final:
            answer = problem.reference if ok else self._distractor(problem, rng)
        text = f"step {depth}" + (f": the answer is {answer}" if final else "")
        return Step(text=text, tokens=tokens, final=final, answer=answer, meta={"ok": ok, "prm_signal": float(signal), "length": length, "key": key})

    def _distractor(self, problem: Problem, rng: np.random.Generator) -> str:
        k = self.config.distractors
        weights = 1.0 / np.arange(1, k + 1)  # Zipf: the first wrong answer is the common mistake
        pick = int(rng.choice(k, p=weights / weights.sum()))
        return str(int(problem.reference or 0) + 1 + pick)


class SimulatedPRM:
    """The simulator's process reward model: sigmoid of the noisy signal drawn with each step."""

    def score(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[float]:
        out = []
        for prefix in prefixes:
            if not prefix:
                raise ArrayError("prefixes", "an empty prefix has no step to score")
            out.append(1.0 / (1.0 + math.exp(-float(prefix[-1].meta["prm_signal"]))))
        return out


def judge(problem: Problem, answer: str | None) -> bool:
    """Whether `answer` is the problem's reference (exact: simulated answers are integers)."""
    return answer is not None and answer == problem.reference
