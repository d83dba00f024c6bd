"""Monte Carlo tree search over reasoning steps, with the PRM as the value of a node.

Each simulation walks down the tree by UCT (Kocsis & Szepesvári 2006: mean value plus
`c * sqrt(ln N_parent / n)`), expands the leaf it reaches with `expand` sampled next steps, and
backs each child's aggregated PRM score up the path, as PRM-guided MCTS for maths does instead of
rolling out to the end (e.g. Zhang et al. 2024, "ReST-MCTS*", arXiv:2406.03816, §3.1). A
simulation that reaches a complete solution backs its score up again without generating, so
good solutions are confirmed rather than re-sampled. The answer is the best complete solution
found by aggregated score, as in the other searches; when the simulations end before any
solution is complete, the most visited path is finished greedily (best of `expand` children a
step, like one DVTS tree), so the search always answers. Every generated token is counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rewardlab.errors import ArrayError
from rewardlab.select.generate import Problem, StepGenerator, StepScorer, TokenMeter
from rewardlab.select.search import Aggregate, Node, SearchResult, _grow, _result, aggregate_prefix

__all__ = ["mcts_search"]


@dataclass
class _Tree:
    node: Node
    parent: _Tree | None
    value: float = 0.0  # aggregated PRM score of this prefix (its prior value)
    visits: int = 0
    total: float = 0.0
    children: list[_Tree] = field(default_factory=list)

    def uct(self, c: float) -> float:
        if self.visits == 0:
            return math.inf
        assert self.parent is not None  # only children are ranked
        return self.total / self.visits + c * math.sqrt(math.log(max(self.parent.visits, 1)) / self.visits)


def _backup(tree: _Tree | None, value: float) -> None:
    while tree is not None:
        tree.visits += 1
        tree.total += value
        tree = tree.parent


def mcts_search(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, simulations: int = 24, expand: int = 3,
    exploration: float = 1.0, aggregate: Aggregate = "min", max_depth: int = 64,
) -> SearchResult:
    """MCTS with `simulations` expansions of `expand` children each (see the module docstring)."""
    if simulations < 1 or expand < 1 or exploration < 0:
        raise ArrayError("simulations", f"need simulations >= 1, expand >= 1, exploration >= 0; got {simulations}, {expand}, {exploration}")
    meter = TokenMeter(generator)
    root = _Tree(Node((), ()), None)
    finished: list[Node] = []
    for _ in range(simulations):
        tree = root
        while tree.children and not tree.node.complete:
            tree = max(tree.children, key=lambda t: t.uct(exploration))  # first of equals: sampling order
        if tree.node.complete or len(tree.node.steps) >= max_depth:
            _backup(tree, tree.value)
            continue
        for child in _grow(meter, scorer, problem, [tree.node] * expand):
            leaf = _Tree(child, tree, value=aggregate_prefix(child.scores, aggregate))
            tree.children.append(leaf)
            if child.complete:
                finished.append(child)
            _backup(leaf, leaf.value)
    if not finished:
        finished.append(_finish(meter, scorer, problem, _most_visited_leaf(root), expand, aggregate, max_depth))
    return _result(meter, finished, aggregate)


def _most_visited_leaf(root: _Tree) -> Node:
    tree = root
    while tree.children:
        tree = max(tree.children, key=lambda t: (t.visits, t.value))
    return tree.node


def _finish(meter: TokenMeter, scorer: StepScorer, problem: Problem, node: Node, expand: int, aggregate: Aggregate,
            max_depth: int) -> Node:
    """Greedy completion: the best of `expand` children, step after step, until complete."""
    while not node.complete and len(node.steps) < max_depth:
        node = max(_grow(meter, scorer, problem, [node] * expand), key=lambda c: aggregate_prefix(c.scores, aggregate))
    return node
