"""Monte Carlo tree search over reasoning steps, guided by a PRM (PUCT with PRM priors and values).

The tree's nodes are prefixes; a node's children are sampled next steps. Each simulation:

1. **Select** from the root by PUCT (Silver et al. 2017, "Mastering the game of Go without human
   knowledge", Methods): the child maximising Q + c · P · sqrt(N_parent) / (1 + N_child), where P
   is the child's prior — its PRM score, normalised over its siblings — and Q its mean backed-up
   value (before its first visit: its own PRM score).
2. **Expand** the node reached, if it was visited before: `expand` sampled next steps in one
   batched call, each scored by the PRM; descend to the child with the best prior.
3. **Evaluate** the new leaf: with `rollout=True`, finish it with one sampled continuation and
   take the PRM's aggregated score of the whole solution as its value (rollouts scored by a PRM,
   as in rStar, Qi et al. 2024, arXiv:2408.06195, §3, and the value targets of ReST-MCTS*, Zhang
   et al. 2024, arXiv:2406.03816, §3.1); with `rollout=False`, the aggregated PRM score of the
   leaf prefix itself (no tokens spent past the leaf). A complete leaf is its own value.
4. **Back up** the value along the path (visit counts and value sums).

Every rollout is a complete solution; with the complete nodes of the tree they are the
candidates, and the answer is the candidate with the best aggregated PRM score, as in the other
searches. Rollouts share the tree's prefixes, so a simulation costs the tokens of its new steps
only. The search stops after `simulations` simulations or once `max_tokens` are spent. Without
rollouts, when no candidate completed, the most visited path is finished greedily so the search
always answers. Every generated token is counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rewardlab.errors import ArrayError
from rewardlab.select.generate import Problem, StepGenerator, StepScorer, TokenMeter
from rewardlab.select.options import Aggregate
from rewardlab.select.search import Node, SearchResult, _grow, _result, aggregate_prefix

__all__ = ["mcts_search"]


@dataclass
class _Tree:
    node: Node
    value: float  # the PRM's aggregated score of this prefix
    prior: float = 1.0
    visits: int = 0
    total: float = 0.0
    children: list[_Tree] = field(default_factory=list)

    def q(self) -> float:
        return self.total / self.visits if self.visits else self.value


def _puct(parent: _Tree, c: float) -> _Tree:
    """The child with the largest Q + c·P·sqrt(N)/(1 + n); the first of equals (sampling order)."""
    scale = c * math.sqrt(max(parent.visits, 1))
    return max(parent.children, key=lambda t: t.q() + scale * t.prior / (1 + t.visits))


def _priors(children: list[_Tree]) -> None:
    """Siblings' PRM scores as a distribution (uniform when none is positive)."""
    mass = [max(child.value, 0.0) for child in children]
    total = sum(mass)
    for child, m in zip(children, mass, strict=True):
        child.prior = m / total if total > 0 else 1.0 / len(children)


class _Search:
    def __init__(self, generator: StepGenerator, scorer: StepScorer, problem: Problem, *, expand: int, aggregate: Aggregate,
                 max_depth: int, rollout: bool):  # fmt: skip
        self.meter, self.scorer, self.problem = TokenMeter(generator), scorer, problem
        self.expand, self.aggregate, self.max_depth, self.rollout = expand, aggregate, max_depth, rollout
        self.finished: list[Node] = []

    def score(self, node: Node) -> float:
        return aggregate_prefix(node.scores, self.aggregate)

    def grow(self, tree: _Tree) -> None:
        children = [_Tree(c, self.score(c)) for c in _grow(self.meter, self.scorer, self.problem, [tree.node] * self.expand)]
        _priors(children)
        tree.children = children
        self.finished += [child.node for child in children if child.node.complete]

    def evaluate(self, tree: _Tree) -> float:
        node = tree.node
        if node.complete or not self.rollout:
            return tree.value
        while not node.complete and len(node.steps) < self.max_depth:  # one sampled continuation
            node = _grow(self.meter, self.scorer, self.problem, [node])[0]
        if node.complete:
            self.finished.append(node)
        return self.score(node)

    def simulate(self, root: _Tree, exploration: float) -> None:
        path = [root]
        while path[-1].children:
            path.append(_puct(path[-1], exploration))
        leaf = path[-1]
        expandable = not leaf.node.complete and len(leaf.node.steps) < self.max_depth
        if expandable and (leaf.visits > 0 or leaf is root):
            self.grow(leaf)
            path.append(max(leaf.children, key=lambda t: t.prior))
        value = self.evaluate(path[-1])
        for tree in path:
            tree.visits += 1
            tree.total += value


def mcts_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, simulations: int = 24, expand: int = 3,
    exploration: float = 1.0, aggregate: Aggregate = "min", rollout: bool = True, max_tokens: int | None = None,
    max_depth: int = 64,
) -> SearchResult:
    """PUCT tree search over steps with PRM priors and PRM-scored rollouts (see the module docstring).

    Args:
        simulations: simulations to run (each expands at most one node and rolls out once).
        expand: children sampled when a node is expanded.
        exploration: the PUCT constant c (scores in [0, 1]: about 1).
        aggregate: how step scores make a prefix's score (values, priors and the final pick).
        rollout: evaluate leaves by finishing them (True) or by their own PRM score (False).
        max_tokens: stop starting simulations once this many tokens are spent.
    """
    if simulations < 1 or expand < 1 or exploration < 0 or (max_tokens is not None and max_tokens < 1):
        raise ArrayError("simulations", f"need simulations >= 1, expand >= 1, exploration >= 0, max_tokens >= 1; "
                         f"got {simulations}, {expand}, {exploration}, {max_tokens}")  # fmt: skip
    search = _Search(generator, scorer, problem, expand=expand, aggregate=aggregate, max_depth=max_depth, rollout=rollout)
    root = _Tree(Node((), ()), 0.0)
    for _ in range(simulations):
        if max_tokens is not None and search.meter.tokens >= max_tokens:
            break
        search.simulate(root, exploration)
    if not search.finished:
        search.finished.append(_finish(search, _most_visited(root)))
    return _result(search.meter, search.finished, aggregate)


def _most_visited(root: _Tree) -> _Tree:
    tree = root
    while tree.children:
        tree = max(tree.children, key=lambda t: (t.visits, t.value))
    return tree


def _finish(search: _Search, tree: _Tree) -> Node:
    """Greedy completion: the best of `expand` children, step after step, until complete."""
    node = tree.node
    while not node.complete and len(node.steps) < search.max_depth:
        node = max(_grow(search.meter, search.scorer, search.problem, [node] * search.expand), key=search.score)
    return node
