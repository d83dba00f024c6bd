"""PRM-guided search over steps: best-of-n, beam search, best-first search, early rejection.

All four drive a `StepGenerator` and a `StepScorer` (see `generate.py`) one batched round at a
time and count every generated token, so they can be compared at equal compute.

- best-of-n: n independent solutions, the one with the best aggregated PRM score wins
  (Lightman et al. 2023, "Let's Verify Step by Step", arXiv:2305.20050).
- beam search: keep the `width` best prefixes, extend each `expand` times per round (Snell et al.
  2024, "Scaling LLM Test-Time Compute Optimally...", arXiv:2408.03314, §5.1). Complete
  solutions leave the beam; the search stops when `width` solutions are complete.
- best-first search: always extend the best-scoring open prefix (a priority queue), until a
  complete solution is the best open node or the token budget is spent.
- diverse verifier tree search (DVTS): `trees` independent greedy subtrees, each keeping its
  best of `expand` children per round, so one strong early prefix cannot take over the whole
  beam (Beeching, Tunstall & Rush 2024, "Scaling test-time compute with open models",
  Hugging Face blog); the best finished solution over all trees wins.
- early rejection: best-of-n whose partial solutions are dropped as soon as a calibrated PRM says
  they are unlikely to end correct (Sun et al. 2024, "Fast Best-of-N Decoding via Speculative
  Rejection", arXiv:2410.20290, with a calibrated threshold instead of a fixed share).

Prefix scores aggregate the step scores (`min`, the usual PRM choice; `last`; `product`; `mean`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.select.generate import Problem, Step, StepGenerator, StepScorer, TokenMeter

# the budgets' defaults are SearchOptions', declared once in `options`
from rewardlab.select.options import EXPAND, MAX_TOKENS, WIDTH, Aggregate

__all__ = [
    "Node",
    "SearchResult",
    "aggregate_prefix",
    "beam_search",
    "best_first_search",
    "best_of_n_search",
    "diverse_tree_search",
    "early_rejection_search",
    "replay_rejection",
    "rollouts",
]



@dataclass(frozen=True)
class Node:
    """A (partial) solution: its steps and the PRM score of each step."""

    steps: tuple[Step, ...]
    scores: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return bool(self.steps) and self.steps[-1].final

    @property
    def answer(self) -> str | None:
        return self.steps[-1].answer if self.complete else None


@dataclass(frozen=True)
class SearchResult:
    """What a search returned.

    Attributes:
        answer: the picked solution's final answer (None if nothing completed).
        solution: the picked solution.
        score: its aggregated PRM score (NaN if nothing completed).
        tokens: every token generated, on every branch.
        finished: every complete solution found.
    """

    answer: str | None
    solution: Node | None
    score: float
    tokens: int
    finished: tuple[Node, ...]


def aggregate_prefix(scores: Sequence[float], how: Aggregate = "min") -> float:
    """One score for a prefix from its step scores."""
    if not scores:
        raise ArrayError("scores", "a prefix without steps has no score")
    if how == "min":
        return float(min(scores))
    if how == "last":
        return float(scores[-1])
    if how == "product":
        return float(math.prod(scores))
    if how == "mean":
        return float(sum(scores) / len(scores))
    raise ArrayError("aggregate", f"must be min, last, product or mean, got {how!r}")


def _grow(meter: TokenMeter, scorer: StepScorer, problem: Problem, nodes: Sequence[Node]) -> list[Node]:
    """One round: a sampled next step for every node, scored by the PRM."""
    if not nodes:
        return []
    steps = meter.extend(problem, [n.steps for n in nodes])
    prefixes = [(*n.steps, s) for n, s in zip(nodes, steps, strict=True)]
    scores = scorer.score(problem, prefixes)
    if len(scores) != len(prefixes):
        raise ArrayError("scorer", f"returned {len(scores)} scores for {len(prefixes)} prefixes")
    return [Node(p, (*n.scores, float(s))) for n, p, s in zip(nodes, prefixes, scores, strict=True)]


def _result(meter: TokenMeter, finished: Sequence[Node], how: Aggregate) -> SearchResult:
    if not finished:
        return SearchResult(None, None, float("nan"), meter.tokens, ())
    scores = [aggregate_prefix(n.scores, how) for n in finished]
    best = int(np.argmax(scores))  # the first of equal scores: generation order
    return SearchResult(finished[best].answer, finished[best], scores[best], meter.tokens, tuple(finished))


def rollouts(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, n: int, *, max_steps: int = 64,
    keep: Callable[[list[Node], list[Node]], list[bool]] | None = None, meter: TokenMeter | None = None,
) -> tuple[list[Node], TokenMeter]:
    """`n` solutions grown side by side; `keep(open_nodes, finished_nodes)` may drop partial ones
    after each round.

    The finished solutions come back in the order the rollouts were started (not the order they
    finished, which favours short solutions), so "the first of equal scores" or "the answer seen
    first" does not depend on length.
    """
    if n < 1:
        raise ArrayError("n", f"must be >= 1, got {n}")
    meter = meter or TokenMeter(generator)
    open_nodes = [Node((), ())] * n
    ids = list(range(n))
    finished: list[tuple[int, Node]] = []
    for _ in range(max_steps):
        if not open_nodes:
            break
        grown = _grow(meter, scorer, problem, open_nodes)
        finished += [(i, g) for i, g in zip(ids, grown, strict=True) if g.complete]
        pairs = [(i, g) for i, g in zip(ids, grown, strict=True) if not g.complete]
        if keep is not None and pairs:
            verdicts = keep([g for _, g in pairs], [g for _, g in finished])
            pairs = [pair for pair, k in zip(pairs, verdicts, strict=True) if k]
        ids, open_nodes = [i for i, _ in pairs], [g for _, g in pairs]
    return [g for _, g in sorted(finished, key=lambda pair: pair[0])], meter


def best_of_n_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, n: int, *, aggregate: Aggregate = "min",
    max_steps: int = 64,
) -> SearchResult:
    """n independent solutions; the best aggregated PRM score wins."""
    finished, meter = rollouts(generator, scorer, problem, n, max_steps=max_steps)
    return _result(meter, finished, aggregate)


def beam_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, width: int = WIDTH, expand: int = EXPAND,
    aggregate: Aggregate = "min", max_steps: int = 64,
) -> SearchResult:
    """Keep the `width` best prefixes; each is extended `expand` times per round.

    The first round samples `width * expand` first steps, as every later round does (Snell et
    al. 2024, sec. 5.1: N first steps, the best N / M kept, M children each). Complete
    solutions leave the beam (the beam shrinks by one for each), so the search ends after
    `width` complete solutions.
    """
    if width < 1 or expand < 1:
        raise ArrayError("width", f"width and expand must be >= 1, got {width} and {expand}")
    meter = TokenMeter(generator)
    beam = [Node((), ())] * width  # the root, `width` times: `width * expand` first steps
    finished: list[Node] = []
    for _ in range(max_steps):
        room = width - len(finished)
        if room <= 0 or not beam:
            break
        children = _grow(meter, scorer, problem, [node for node in beam for _ in range(expand)])
        ranked = sorted(children, key=lambda c: -aggregate_prefix(c.scores, aggregate))  # stable: ties by order
        chosen = ranked[:room]
        finished += [c for c in chosen if c.complete]
        beam = [c for c in chosen if not c.complete]
    return _result(meter, finished, aggregate)


def diverse_tree_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, trees: int = WIDTH, expand: int = EXPAND,
    aggregate: Aggregate = "min", max_steps: int = 64,
) -> SearchResult:
    """DVTS: `trees` independent subtrees grown side by side (one batched call per round); each
    keeps only its best child of `expand`, until it completes."""
    if trees < 1 or expand < 1:
        raise ArrayError("trees", f"trees and expand must be >= 1, got {trees} and {expand}")
    meter = TokenMeter(generator)
    heads = [Node((), ())] * trees
    finished: list[tuple[int, Node]] = []
    ids = list(range(trees))
    for _ in range(max_steps):
        if not heads:
            break
        children = _grow(meter, scorer, problem, [h for h in heads for _ in range(expand)])
        next_ids, next_heads = [], []
        for k, tree in enumerate(ids):
            group = children[k * expand : (k + 1) * expand]
            best = max(group, key=lambda c: aggregate_prefix(c.scores, aggregate))  # first of equals
            if best.complete:
                finished.append((tree, best))
            else:
                next_ids.append(tree)
                next_heads.append(best)
        ids, heads = next_ids, next_heads
    return _result(meter, [n for _, n in sorted(finished, key=lambda pair: pair[0])], aggregate)


def best_first_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, expand: int = EXPAND, max_tokens: int = MAX_TOKENS,
    aggregate: Aggregate = "min",
) -> SearchResult:
    """Extend the best open prefix first; stop when a complete solution is the best node or at
    `max_tokens` (then the best complete solution found, if any, is returned)."""
    if expand < 1 or max_tokens < 1:
        raise ArrayError("expand", f"expand and max_tokens must be >= 1, got {expand} and {max_tokens}")
    meter = TokenMeter(generator)
    heap: list[tuple[float, int, Node]] = [(-math.inf, 0, Node((), ()))]  # (-score, order, node)
    order = 1
    finished: list[Node] = []
    while heap and meter.tokens < max_tokens:
        _, _, node = heapq.heappop(heap)
        if node.complete:
            return SearchResult(node.answer, node, aggregate_prefix(node.scores, aggregate), meter.tokens, (*finished, node))
        for child in _grow(meter, scorer, problem, [node] * expand):
            heapq.heappush(heap, (-aggregate_prefix(child.scores, aggregate), order, child))
            order += 1
            if child.complete:
                finished.append(child)
    return _result(meter, finished, aggregate)


def _rejection_verdicts(
    scores: np.ndarray, p: np.ndarray, best_finished: float | None, *, threshold: float, coverage: float | None, bound: bool,
) -> np.ndarray:
    """Which open prefixes early rejection keeps, from their aggregated scores and calibrated
    probabilities (the rules of `early_rejection_search`; `best_finished`: None before any finished)."""
    alive = p >= threshold
    if coverage is not None:
        order = np.argsort(-p, kind="stable")
        # P(none of the better-ranked prefixes ends correct), before each prefix in rank order
        miss_before = np.concatenate([[1.0], np.cumprod(1.0 - p[order])[:-1]])
        covered = np.empty(len(p), dtype=bool)
        covered[order] = 1.0 - miss_before >= coverage
        alive &= ~covered
    alive[int(np.argmax(scores))] = True
    if bound and best_finished is not None:
        alive &= scores >= best_finished
    return alive


def early_rejection_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, n: int,
    calibrated: Callable[[np.ndarray, np.ndarray], np.ndarray], *, threshold: float = 0.1, coverage: float | None = None,
    aggregate: Aggregate = "min", prune_dominated: bool = True, max_steps: int = 64,
) -> SearchResult:
    """Best-of-n that stops growing partial solutions which cannot, or will likely not, be worth it.

    After every round (every step) each open prefix is checked:

    - dominated (`prune_dominated`, for `min` and `product`): a prefix whose aggregated score is
      already below the best finished solution's can never be picked, because a minimum can only
      fall and a product of scores in [0, 1] too (branch and bound). This changes nothing in what
      best-of-n returns; it only saves the tokens of tails that cannot win. `product` needs step
      scores in [0, 1] (a PRM's probabilities): a score outside raises `ArrayError`.
    - calibrated: `p = calibrated(prefix score, depth)` is the prefix's probability of ending
      correct; it is dropped when `p < threshold`. Choose the threshold with
      `adaptive.rejection_threshold`, which bounds the accuracy lost against best-of-n.
    - covered (`coverage`): dropped when the prefixes ranked above it already give P(at least one
      ends correct) = 1 − Π(1 − p) ≥ `coverage`. This treats the prefixes as independent, which
      those of one problem are not (they succeed or fail together): it saves much, at a cost.

    The best open prefix is never dropped by the calibrated or covered rules, so something
    always completes.
    """
    if not 0 <= threshold < 1 or (coverage is not None and not 0 < coverage < 1):
        raise ArrayError("threshold", f"need 0 <= threshold < 1 and 0 < coverage < 1, got {threshold}, {coverage}")
    bound = prune_dominated and aggregate in ("min", "product")

    def keep(nodes: list[Node], finished: list[Node]) -> list[bool]:
        if bound and finished and aggregate == "product":
            _check_unit_scores([*nodes, *finished])
        scores = np.array([aggregate_prefix(node.scores, aggregate) for node in nodes])
        depths = np.array([len(node.steps) for node in nodes])
        p = np.clip(np.asarray(calibrated(scores, depths), dtype=np.float64), 0.0, 1.0)
        best = max((aggregate_prefix(node.scores, aggregate) for node in finished), default=None)
        alive = _rejection_verdicts(scores, p, best, threshold=threshold, coverage=coverage, bound=bound)
        return [bool(a) for a in alive]

    finished, meter = rollouts(generator, scorer, problem, n, max_steps=max_steps, keep=keep)
    return _result(meter, finished, aggregate)


def replay_rejection(
    chains: Sequence[Node], p: Sequence[np.ndarray], *, threshold: float, coverage: float | None = None,
    aggregate: Aggregate = "min", prune_dominated: bool = True,
) -> tuple[Node | None, int]:
    """What `early_rejection_search` would return had its `n` rollouts been `chains` (complete
    solutions, in rollout order), and the tokens it would spend: rejection only cuts chains
    short, so it can be replayed on finished rollouts without generating again.

    Args:
        chains: complete solutions, as `rollouts` returns them.
        p: per chain, the calibrated probability of each of its prefixes (depth 1, 2, ...).
    """
    bound = prune_dominated and aggregate in ("min", "product")
    alive = list(range(len(chains)))
    finished: list[int] = []
    tokens = 0
    for depth in range(1, max((len(c.steps) for c in chains), default=0) + 1):
        tokens += sum(chains[i].steps[depth - 1].tokens for i in alive)
        finished += [i for i in alive if len(chains[i].steps) == depth]
        alive = [i for i in alive if len(chains[i].steps) > depth]
        if not alive:
            break
        scores = np.array([aggregate_prefix(chains[i].scores[:depth], aggregate) for i in alive])
        probability = np.array([p[i][depth - 1] for i in alive])
        best = max((aggregate_prefix(chains[i].scores, aggregate) for i in finished), default=None)
        verdicts = _rejection_verdicts(scores, probability, best, threshold=threshold, coverage=coverage, bound=bound)
        alive = [i for i, keep in zip(alive, verdicts, strict=True) if keep]
    if not finished:
        return None, tokens
    kept = sorted(finished)
    final = [aggregate_prefix(chains[i].scores, aggregate) for i in kept]
    return chains[kept[int(np.argmax(final))]], tokens


def _check_unit_scores(nodes: Sequence[Node]) -> None:
    """Product bounds need step scores in [0, 1] (-inf, a failed score, is allowed: it never wins)."""
    for node in nodes:
        for score in node.scores:
            if not 0.0 <= score <= 1.0 and score != -math.inf:
                raise ArrayError("scorer", f"gave a step score of {score}, outside [0, 1]: the product of such scores "
                                 "can grow, so pass prune_dominated=False or aggregate='min'")  # fmt: skip
