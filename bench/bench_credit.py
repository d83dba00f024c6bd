"""Advantages for ~1M token slots: rewardlab's vectorised numpy vs a per-group Python loop.

Same inputs, same run. Workload (defaults): 512 groups × 16 samples × 128 tokens
(1,048,576 token slots, ragged lengths), 0/1 rewards with some all-equal groups, and:

* GRPO, RLOO, REINFORCE++-baseline: outcome advantages spread over response tokens. The loop
  baseline is verl's `compute_*_outcome_advantage` shape (a dict of per-prompt score lists,
  a Python loop over prompts and samples), in numpy; TRL's vectorised torch formula
  (`view(-1, G)`, float32, as in `GRPOTrainer`) is timed as a second peer for GRPO.
* GAE: rewardlab's batch-vectorised backward recursion vs a per-sequence, per-token loop.

Every pair is checked for agreement before its time is reported. Run:

    .venv/bin/python bench/bench_credit.py            # full size
    .venv/bin/python bench/bench_credit.py --groups 8 # smoke run
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np
from _timing import best_of

from rewardlab.credit import gae, grpo, reinforce_pp, rloo, to_tokens


# ---- straightforward per-group loops (verl's structure, numpy instead of torch) -------------
def loop_outcome(scores: np.ndarray, index: np.ndarray, mask: np.ndarray, kind: str, eps: float = 1e-6) -> np.ndarray:
    id2score: dict[int, list[float]] = defaultdict(list)
    for i in range(len(scores)):
        id2score[int(index[i])].append(float(scores[i]))
    stats = {}
    for idx, group in id2score.items():
        arr = np.array(group)
        flat = arr.max() == arr.min()
        stats[idx] = (arr.mean(), arr.std(ddof=1) if len(arr) > 1 else 0.0, len(arr), flat)
    adv = np.zeros(len(scores))
    for i in range(len(scores)):
        mean, std, n, flat = stats[int(index[i])]
        if flat:
            continue
        if kind == "grpo":
            adv[i] = (scores[i] - mean) / (std + eps)
        elif kind == "rloo":
            adv[i] = (scores[i] - mean) * n / (n - 1)
        else:  # reinforce++-baseline: group mean now, batch whitening below
            adv[i] = scores[i] - mean
    if kind == "rf++":
        adv = (adv - adv.mean()) / (adv.std(ddof=1) + eps)
    out = np.zeros(mask.shape)
    for i in range(len(scores)):
        out[i] = adv[i] * mask[i]
    return out


def loop_gae(r: np.ndarray, v: np.ndarray, mask: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    out = np.zeros(r.shape)
    for b in range(r.shape[0]):
        next_value, running = 0.0, 0.0
        for t in range(r.shape[1] - 1, -1, -1):
            if not mask[b, t]:
                continue
            delta = r[b, t] + gamma * next_value - v[b, t]
            running = delta + gamma * lam * running
            next_value = v[b, t]
            out[b, t] = running
    return out


def trl_torch_grpo(rewards_flat, mask_t, group: int):
    """TRL GRPOTrainer's lines (scale_rewards="group"), float32 torch, then broadcast to tokens."""
    mean = rewards_flat.view(-1, group).mean(dim=1).repeat_interleave(group)
    std = rewards_flat.view(-1, group).std(dim=1).repeat_interleave(group)
    adv = (rewards_flat - mean) / (std + 1e-4)
    return adv.unsqueeze(1) * mask_t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=512)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    g, s, t = args.groups, args.samples, args.tokens
    rng = np.random.default_rng(args.seed)
    p_correct = rng.beta(0.5, 0.5, size=(g, 1))  # many near-0 / near-1 prompts: flat groups occur
    rewards = (rng.random((g, s)) < p_correct).astype(np.float64)
    lengths = rng.integers(1, t + 1, size=g * s)
    mask = np.arange(t)[None, :] < lengths[:, None]
    index = np.repeat(np.arange(g), s)
    flat_groups = int((rewards.max(axis=1) == rewards.min(axis=1)).sum())
    print(f"workload: {g} groups x {s} samples x {t} tokens = {g * s * t:,} token slots, "
          f"{int(mask.sum()):,} response tokens, {flat_groups} zero-variance groups")

    rows = []
    for name, vec, kind in (
        ("GRPO", lambda: to_tokens(grpo(rewards), mask), "grpo"),
        ("RLOO", lambda: to_tokens(rloo(rewards), mask), "rloo"),
        ("REINFORCE++-baseline", lambda: to_tokens(reinforce_pp(rewards), mask), "rf++"),
    ):
        t_vec, out_vec = best_of(vec, args.repeats)
        t_loop, out_loop = best_of(lambda k=kind: loop_outcome(rewards.reshape(-1), index, mask, k), 3)
        diff = float(np.max(np.abs(np.asarray(out_vec) - np.asarray(out_loop))))
        assert diff < 1e-9, f"{name}: vectorised and loop disagree by {diff}"
        rows.append((name, "per-group Python loop (verl-style)", t_vec, t_loop, diff))

    # the group statistics alone, (groups, samples) -> (groups, samples), without the token spread
    zero_mask = np.ones((g * s, 1), dtype=bool)
    t_vec, out_vec = best_of(lambda: grpo(rewards), args.repeats)
    t_loop, out_loop = best_of(lambda: loop_outcome(rewards.reshape(-1), index, zero_mask, "grpo"), 3)
    diff = float(np.max(np.abs(np.asarray(out_vec).reshape(-1) - np.asarray(out_loop)[:, 0])))
    assert diff < 1e-9, f"GRPO (no tokens): vectorised and loop disagree by {diff}"
    rows.append(("GRPO, per-response only", "per-group Python loop (verl-style)", t_vec, t_loop, diff))

    try:
        import torch

        torch.set_num_threads(1)
        r_t = torch.tensor(rewards.reshape(-1), dtype=torch.float32)
        m_t = torch.tensor(mask, dtype=torch.float32)
        t_trl, out_trl = best_of(lambda: trl_torch_grpo(r_t, m_t, s), args.repeats)
        ours = to_tokens(grpo(rewards, eps=1e-4), mask)
        diff = float(np.max(np.abs(out_trl.numpy() - ours)))
        t_vec, _ = best_of(lambda: to_tokens(grpo(rewards, eps=1e-4), mask), args.repeats)
        rows.append(("GRPO", "TRL formula, torch float32 vectorised", t_vec, t_trl, diff))
    except ImportError:
        print("torch not installed: skipping the TRL-formula peer")

    values = rng.normal(size=(g * s, t))
    token_rewards = np.zeros((g * s, t))
    token_rewards[np.arange(g * s), lengths - 1] = rewards.reshape(-1)  # outcome on the last token
    t_vec, (adv_vec, _) = best_of(lambda: gae(token_rewards, values, mask, gamma=1.0, lam=0.95), args.repeats)
    t_loop, adv_loop = best_of(lambda: loop_gae(token_rewards, values, mask, 1.0, 0.95), 1)
    diff = float(np.max(np.abs(np.asarray(adv_vec) - np.asarray(adv_loop))))
    assert diff < 1e-9, f"GAE: vectorised and loop disagree by {diff}"
    rows.append(("GAE (gamma=1, lam=0.95)", "per-sequence, per-token Python loop", t_vec, t_loop, diff))

    print()
    print("| estimator | peer | rewardlab (ms) | peer (ms) | speed-up | max abs diff |")
    print("|---|---|---:|---:|---:|---:|")
    for name, peer, tv, tp, diff in rows:
        print(f"| {name} | {peer} | {tv * 1e3:.1f} | {tp * 1e3:.1f} | {tp / tv:.1f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()
