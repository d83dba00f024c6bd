"""A toy end-to-end check: a tabular softmax policy learns a verifiable target on CPU in seconds.

Task: for each prompt p (a target sum T_p), write `length` digits from `0 … vocab−1` whose sum is
T_p. The verifier is exact (`sum == T_p` → 1, else 0); with the defaults a random policy
succeeds 3–14 % of the time, so many groups are all-wrong (zero-variance) at the start. A
*process* reward is verifiable too: after each digit, 1 if the target is still reachable.

Policy: independent softmax logits θ[p, t, v] per prompt and position (a "language model" with
no context beyond the position). Training: sample `group_size` responses per prompt, turn
rewards into token advantages with the estimator under test, and take a REINFORCE step
`θ += lr · mean_i A_{i,t} (onehot(a_{i,t}) − π_t)` — the exact gradient of `log π` for a
softmax. Progress is measured exactly: the success probability of the current policy, summed
over all `vocab**length` sequences (no sampling noise in the metric).

    >>> from rewardlab.credit.toy import train_toy
    >>> run = train_toy("grpo", steps=150, seed=0)
    >>> run.success[-1] > 0.9
    True
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rewardlab.credit.outcome import a_hpo, dr_grpo, gdpo, grpo, reinforce_pp, rloo
from rewardlab.credit.steps import process_advantages
from rewardlab.credit.tree import tree_advantages_batch
from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import F64
from rewardlab.shape.zero_variance import zero_variance

__all__ = ["ESTIMATORS", "ToyComparison", "ToyRun", "ToyTask", "compare", "train_toy"]


@dataclass(frozen=True)
class ToyTask:
    """Digits that must sum to a target; one prompt per target."""

    vocab: int = 5  # digits 0..4: 625 sequences of length 4, enumerable for the exact metric
    length: int = 4
    targets: tuple[int, ...] = (3, 8, 13)  # rare (3 %), common (14 %) and rare-high (3 %)

    def rewards(self, tokens: np.ndarray) -> F64:
        """`(prompts, samples)` 0/1: does each response hit its prompt's target sum?"""
        hit: F64 = (tokens.sum(axis=2) == np.asarray(self.targets)[:, None]).astype(np.float64)
        return hit

    def step_rewards(self, tokens: np.ndarray) -> F64:
        """`(prompts, samples, length)` 0/1: is the target still reachable after each digit?"""
        partial = np.cumsum(tokens, axis=2)
        left = self.length - 1 - np.arange(self.length)  # digits still to write
        need = np.asarray(self.targets)[:, None, None] - partial
        reachable: F64 = ((need >= 0) & (need <= left * (self.vocab - 1))).astype(np.float64)
        return reachable

    def closeness(self, tokens: np.ndarray) -> F64:
        """`(prompts, samples)` in [0, 1]: 1 − |sum − T| / max distance (a second reward)."""
        span = self.length * (self.vocab - 1)
        close: F64 = 1.0 - np.abs(tokens.sum(axis=2) - np.asarray(self.targets)[:, None]) / span
        return close


Estimator = Callable[[ToyTask, np.ndarray], F64]  # (task, tokens (P, G, L)) -> advantages (P, G, L)


def _outcome(fn: Callable[[F64], object]) -> Estimator:
    def token_advantages(task: ToyTask, tokens: np.ndarray) -> F64:
        adv = np.asarray(fn(task.rewards(tokens)))
        return np.repeat(adv[:, :, None], task.length, axis=2)  # every token of a response

    return token_advantages


def _gdpo(task: ToyTask, tokens: np.ndarray) -> F64:
    components = np.stack([task.rewards(tokens), task.closeness(tokens)], axis=2)
    adv = np.asarray(gdpo(components, weights=[1.0, 0.5]))
    return np.repeat(adv[:, :, None], task.length, axis=2)


def _tree(task: ToyTask, tokens: np.ndarray) -> F64:
    mask = np.ones(tokens.shape, dtype=bool)
    return np.asarray(tree_advantages_batch(tokens, mask, task.rewards(tokens), scale_std=True))


def _process(task: ToyTask, tokens: np.ndarray) -> F64:
    return np.asarray(process_advantages(task.step_rewards(tokens)))


#: name -> token-advantage function; "none" is the control that must not learn.
ESTIMATORS: dict[str, Estimator] = {
    "grpo": _outcome(grpo),
    "dr_grpo": _outcome(dr_grpo),
    "rloo": _outcome(rloo),
    "reinforce_pp": _outcome(reinforce_pp),
    "a_hpo": _outcome(lambda r: a_hpo(grpo(r))[0]),
    "gdpo": _gdpo,
    "tree": _tree,
    "process": _process,
    "none": lambda task, tokens: np.zeros(tokens.shape),
}


@dataclass
class ToyRun:
    """History of one training run: exact success probability and zero-variance share per step."""

    estimator: str
    success: list[float] = field(default_factory=list)
    zero_variance: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _softmax(logits: F64) -> F64:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs: F64 = z / z.sum(axis=-1, keepdims=True)
    return probs


def _exact_success(task: ToyTask, probs: F64, all_seqs: np.ndarray, hits: np.ndarray) -> float:
    # P(sequence) = Π_t π[p, t, a_t]; success = Σ over hitting sequences, averaged over prompts.
    per_pos = probs[:, np.arange(task.length)[None, :], all_seqs]  # (P, N, L)
    return float((per_pos.prod(axis=2) * hits).sum(axis=1).mean())


def train_toy(
    estimator: str | Estimator,
    *,
    task: ToyTask | None = None,
    steps: int = 150,
    group_size: int = 16,
    lr: float = 2.0,
    seed: int = 0,
) -> ToyRun:
    """Train the tabular policy with `estimator` and record exact success after every step."""
    task = task or ToyTask()
    name = estimator if isinstance(estimator, str) else getattr(estimator, "__name__", "custom")
    if isinstance(estimator, str):
        if estimator not in ESTIMATORS:
            raise ArrayError("estimator", f"unknown {estimator!r}; choose from {sorted(ESTIMATORS)}")
        estimator = ESTIMATORS[estimator]
    rng = np.random.default_rng(seed)
    n_prompts, length, vocab = len(task.targets), task.length, task.vocab
    theta = np.zeros((n_prompts, length, vocab))
    all_seqs = np.array(list(itertools.product(range(vocab), repeat=length)))
    hits = (all_seqs.sum(axis=1)[None, :] == np.asarray(task.targets)[:, None]).astype(np.float64)
    run = ToyRun(estimator=name)
    start = time.perf_counter()
    for _ in range(steps):
        probs = _softmax(theta)  # (P, L, V)
        cdf = np.cumsum(probs, axis=2)
        u = rng.random((n_prompts, group_size, length, 1))
        tokens = (u > cdf[:, None, :, :]).sum(axis=3).clip(max=vocab - 1)  # inverse-CDF sampling
        adv = estimator(task, tokens)  # (P, G, L)
        onehot = np.eye(vocab)[tokens]  # (P, G, L, V)
        grad = (adv[..., None] * (onehot - probs[:, None, :, :])).mean(axis=1)
        theta = theta + lr * grad
        run.zero_variance.append(float(np.asarray(zero_variance(task.rewards(tokens))).mean()))
        run.success.append(_exact_success(task, _softmax(theta), all_seqs, hits))
    run.seconds = time.perf_counter() - start
    return run


@dataclass(frozen=True)
class ToyComparison:
    """One estimator's summary over seeds: how fast it learns and where it ends."""

    estimator: str
    steps_to_threshold: float  # mean over seeds; `steps + 1` counts a seed that never got there
    final_success: float  # mean over seeds
    seconds: float  # total training time over seeds


def compare(
    estimators: list[str] | None = None,
    *,
    seeds: range = range(3),
    steps: int = 150,
    threshold: float = 0.9,
) -> list[ToyComparison]:
    """Train every estimator on the same seeds and summarise (the toy's comparison table)."""
    rows = []
    for name in estimators or list(ESTIMATORS):
        runs = [train_toy(name, steps=steps, seed=seed) for seed in seeds]
        reached = [next((i + 1 for i, s in enumerate(r.success) if s >= threshold), steps + 1) for r in runs]
        rows.append(
            ToyComparison(
                estimator=name,
                steps_to_threshold=float(np.mean(reached)),
                final_success=float(np.mean([r.success[-1] for r in runs])),
                seconds=float(sum(r.seconds for r in runs)),
            )
        )
    return rows
