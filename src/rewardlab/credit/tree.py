"""Prefix-tree credit: values over a group's responses, advantages relative to fork points.

The responses sampled for one prompt often share prefixes (always with tree-structured
sampling, often with small vocabularies or low temperature). Put them in a prefix tree (trie):
each node is a prefix, and its value V(n) is the mean reward of the responses that pass through
it. A token's advantage is

    A(token) = V(node after the token) − V(nearest fork above it)

where a *fork* is the root or a node at which responses diverge (more than one child, or a
response that ends there). Inside a chain without forks V is constant, so every token of a
chain gets the same credit: the change of expected reward caused by the branch it belongs to.
A response that stops where others continue gets, on its last token, the value of stopping
relative to that node (the EOS decision is a branch too). Along a response the credits then
telescope to `r_i − mean(r)` (for identical copies of a response, which no token can tell apart,
to their mean reward minus `mean(r)`), and when responses
share no prefix every token gets `r_i − mean(r)`: exactly Dr.GRPO's advantage, and GRPO's with
`scale_std=True`. This follows the local tree advantage V(s_n) − V(parent) of TreeRL (Hou et al.
2025, "TreeRL: LLM Reinforcement Learning with On-Policy Tree Search", arXiv:2506.11902), with
parents taken at fork points so the no-sharing case reduces to GRPO.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import EPS, F64, check_finite, like, prefix_mask, to_mask, to_numpy

__all__ = ["tree_advantages", "tree_advantages_batch"]


def tree_advantages(
    responses: Sequence[Sequence[int]],
    rewards: Sequence[float] | Any,
    *,
    scale_std: bool = False,
    eps: float = EPS,
    ddof: int = 1,
) -> list[np.ndarray]:
    """Fork-relative token advantages for one group (see the module docstring).

    Args:
        responses: token ids of each response of the group (any hashable tokens).
        rewards: one reward per response.
        scale_std: divide by the group's reward std (+eps), as GRPO does.
        eps, ddof: as in `rewardlab.credit.grpo`.

    Returns:
        one float64 array per response, its tokens' advantages. A group of one response, or
        with all rewards equal, gives zeros.
    """
    r = to_numpy(rewards, "rewards", ndim=1)
    if len(responses) != r.shape[0]:
        raise ArrayError("rewards", f"need one reward per response ({len(responses)}), got {r.shape[0]}")
    check_finite(r, "rewards")
    if r.shape[0] < 2 or r.max() == r.min():
        return [np.zeros(len(seq)) for seq in responses]
    trie = _Trie.build(responses, r)
    value = trie.total / trie.count
    is_fork = (trie.children + trie.ends_here) > 1
    is_fork[0] = True
    # Nodes are created after their parent, so one forward pass resolves each node's fork.
    fork_value = np.zeros(len(trie.parent))
    for n in range(1, len(trie.parent)):
        p = trie.parent[n]
        fork_value[n] = value[p] if is_fork[p] else fork_value[p]
    # Stopping is a branch too: a response that ends where others go on gets, on its last
    # token (the EOS decision), the value of "ending here" relative to the node.
    ends = trie.ends_here
    stop_bonus = np.where(ends > 0, trie.end_total / np.maximum(ends, 1) - value, 0.0)
    scale = 1.0 / (float(np.std(r, ddof=ddof)) + eps) if scale_std else 1.0
    out = []
    for path in trie.paths:
        idx = np.asarray(path, dtype=np.int64)
        adv = value[idx] - fork_value[idx]
        if idx.size:
            adv[-1] += stop_bonus[idx[-1]]
        out.append(adv * scale)
    return out


@dataclass(frozen=True)
class _Trie:
    """Prefix tree of a group's responses; node 0 is the root (the empty prefix).

    Per node: `parent`, reward `total` and `count` of the responses passing through it, number
    of `children`, and the responses that end exactly there (`ends_here`, `end_total`);
    `paths[i]` lists the nodes after each token of response i.
    """

    parent: list[int]
    total: F64
    count: F64
    children: NDArray[np.int64]
    ends_here: NDArray[np.int64]
    end_total: F64
    paths: list[list[int]]

    @classmethod
    def build(cls, responses: Sequence[Sequence[Any]], r: F64) -> _Trie:
        node_of: dict[tuple[int, Any], int] = {}
        parent, total, count, children = [-1], [float(r.sum())], [r.shape[0]], [0]
        ends_here, end_total = [0], [0.0]
        paths: list[list[int]] = []
        for i, seq in enumerate(responses):
            node, path = 0, []
            for tok in seq:
                child = node_of.get((node, tok))
                if child is None:
                    child = node_of[(node, tok)] = len(parent)
                    parent.append(node)
                    for column in (total, end_total):
                        column.append(0.0)
                    for counter in (count, children, ends_here):
                        counter.append(0)
                    children[node] += 1
                total[child] += float(r[i])
                count[child] += 1
                node = child
                path.append(child)
            ends_here[node] += 1
            end_total[node] += float(r[i])
            paths.append(path)
        return cls(
            parent=parent,
            total=np.asarray(total),
            count=np.asarray(count, dtype=np.float64),
            children=np.asarray(children, dtype=np.int64),
            ends_here=np.asarray(ends_here, dtype=np.int64),
            end_total=np.asarray(end_total),
            paths=paths,
        )


def tree_advantages_batch(
    token_ids: Any,
    token_mask: Any,
    rewards: Any,
    *,
    scale_std: bool = False,
    eps: float = EPS,
    ddof: int = 1,
) -> Any:
    """`tree_advantages` for padded arrays: `(groups, samples, tokens)` ids → same-shape advantages.

    Args:
        token_ids: `(groups, samples, tokens)` integer token ids.
        token_mask: same shape, a prefix per response (right padding).
        rewards: `(groups, samples)`.
    """
    ids = np.asarray(token_ids.detach().cpu().numpy() if hasattr(token_ids, "detach") else token_ids)
    if ids.ndim != 3:
        raise ArrayError("token_ids", f"must be (groups, samples, tokens), got shape {ids.shape}")
    mask = to_mask(token_mask, "token_mask", ids.shape)
    prefix_mask(mask, "token_mask")
    r = to_numpy(rewards, "rewards", ndim=2)
    if r.shape != ids.shape[:2]:
        raise ArrayError("rewards", f"must have shape {ids.shape[:2]}, got {r.shape}")
    out = np.zeros(ids.shape, dtype=np.float64)
    lengths = mask.sum(axis=2)
    for g in range(ids.shape[0]):  # groups are independent; the trie walk is per token
        seqs = [ids[g, s, : lengths[g, s]].tolist() for s in range(ids.shape[1])]
        for s, adv in enumerate(tree_advantages(seqs, r[g], scale_std=scale_std, eps=eps, ddof=ddof)):
            out[g, s, : adv.shape[0]] = adv
    return like(out, rewards, token_mask)
