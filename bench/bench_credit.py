"""Advantages for ~1M token slots: rewardlab's vectorised numpy vs a per-group Python loop.

Same inputs, same run. Workload (defaults): 512 groups × 16 samples × 128 tokens
(1,048,576 token slots, ragged lengths), 0/1 rewards with some all-equal groups, and:

* GRPO, RLOO, REINFORCE++-baseline: outcome advantages spread over response tokens. The loop
  baseline is verl's `compute_*_outcome_advantage` shape (a dict of per-prompt score lists,
  a Python loop over prompts and samples), in numpy; TRL's vectorised torch formula
  (`view(-1, G)`, float32, as in `GRPOTrainer`) is timed as a second peer for GRPO.
* The same estimators against verl 0.9.1's own `core_algos` functions (its per-prompt loops
  and its vectorised variants), called on float32 torch tensors as verl runs them, with
  REINFORCE++-baseline's token-weighted whitening (`reinforce_pp(token_mask=...)`).
* GAE: rewardlab's batch-vectorised backward recursion vs a per-sequence, per-token loop, and
  vs verl's `compute_gae_advantage_return` (its returns; verl then whitens the advantages).

Every pair is checked for agreement before its time is reported. Run:

    .venv/bin/python bench/bench_credit.py            # full size
    .venv/bin/python bench/bench_credit.py --groups 8 # smoke run
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np
from _timing import best_of

from rewardlab.credit import gae, grpo, pack, reinforce_pp, rloo, to_tokens


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


def verl_rows(rewards: np.ndarray, mask: np.ndarray, lengths: np.ndarray, dtype):
    """verl's inputs: the outcome reward on each response's last token, a float response mask."""
    import torch

    b, t = mask.shape
    token_level = torch.zeros(b, t, dtype=dtype)
    token_level[torch.arange(b), torch.as_tensor(lengths - 1)] = torch.as_tensor(rewards.reshape(-1), dtype=dtype)
    return token_level, torch.as_tensor(mask, dtype=dtype)


def verl_peers(rewards, mask, lengths, index, repeats) -> list[tuple[str, str, float, float, float]]:
    """verl 0.9.1's own `core_algos` functions, on float32 tensors as verl trains."""
    import torch
    from verl.trainer.ppo import core_algos

    torch.set_num_threads(1)
    token_level, response_mask = verl_rows(rewards, mask, lengths, torch.float32)
    uid = index.astype(object)
    packed = pack(rewards.reshape(-1), uid)
    tokens = packed.pack_tokens(mask)
    cases = (
        ("GRPO", "compute_grpo_outcome_advantage", lambda: to_tokens(grpo(rewards), mask)),
        ("GRPO", "compute_grpo_vectorized_outcome_advantage", lambda: to_tokens(grpo(rewards), mask)),
        ("RLOO", "compute_rloo_outcome_advantage", lambda: to_tokens(rloo(rewards), mask)),
        ("RLOO", "compute_rloo_vectorized_outcome_advantage", lambda: to_tokens(rloo(rewards), mask)),
        (
            "REINFORCE++-baseline",
            "compute_reinforce_plus_plus_baseline_outcome_advantage",
            lambda: to_tokens(reinforce_pp(packed.values, packed.mask, token_mask=tokens, eps=0.0), mask),
        ),
    )
    rows = []
    for name, fn_name, ours in cases:
        fn = getattr(core_algos, fn_name)
        t_vec, out_vec = best_of(ours, repeats)
        t_verl, (out_verl, _) = best_of(lambda f=fn: f(token_level, response_mask, uid), 3)
        diff = float(np.max(np.abs(np.asarray(out_vec) - out_verl.double().numpy())))
        assert diff < 1e-4, f"{name}: rewardlab and verl {fn_name} disagree by {diff}"  # verl is float32
        rows.append((name, f"verl 0.9.1 `{fn_name}` (float32)", t_vec, t_verl, diff))
    return rows


def verl_gae(token_rewards, values, mask, repeats) -> tuple[str, str, float, float, float]:
    """verl's `compute_gae_advantage_return` (float32); its returns are compared (it whitens Â)."""
    import torch
    from verl.trainer.ppo import core_algos

    r_t, v_t, m_t = (torch.as_tensor(x, dtype=torch.float32) for x in (token_rewards, values, mask))
    t_vec, (_, returns) = best_of(lambda: gae(token_rewards, values, mask, gamma=1.0, lam=0.95), repeats)
    t_verl, (_, verl_returns) = best_of(
        lambda: core_algos.compute_gae_advantage_return(r_t, v_t, m_t, gamma=1.0, lam=0.95), repeats
    )
    diff = float(np.max(np.abs(np.where(mask, returns - verl_returns.double().numpy(), 0.0))))
    assert diff < 1e-4, f"GAE: rewardlab and verl returns disagree by {diff}"  # verl is float32
    return ("GAE (gamma=1, lam=0.95)", "verl 0.9.1 `compute_gae_advantage_return` (float32)", t_vec, t_verl, diff)


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
        ("REINFORCE++-baseline (per-response statistics)", lambda: to_tokens(reinforce_pp(rewards), mask), "rf++"),
    ):
        t_vec, out_vec = best_of(vec, args.repeats)
        t_loop, out_loop = best_of(lambda k=kind: loop_outcome(rewards.reshape(-1), index, mask, k), 3)
        diff = float(np.max(np.abs(np.asarray(out_vec) - np.asarray(out_loop))))
        assert diff < 1e-9, f"{name}: vectorised and loop disagree by {diff}"
        rows.append((name, "per-group Python loop (verl-style, numpy)", t_vec, t_loop, diff))

    # the group statistics alone, (groups, samples) -> (groups, samples), without the token spread
    zero_mask = np.ones((g * s, 1), dtype=bool)
    t_vec, out_vec = best_of(lambda: grpo(rewards), args.repeats)
    t_loop, out_loop = best_of(lambda: loop_outcome(rewards.reshape(-1), index, zero_mask, "grpo"), 3)
    diff = float(np.max(np.abs(np.asarray(out_vec).reshape(-1) - np.asarray(out_loop)[:, 0])))
    assert diff < 1e-9, f"GRPO (no tokens): vectorised and loop disagree by {diff}"
    rows.append(("GRPO, per-response only", "per-group Python loop (verl-style, numpy)", t_vec, t_loop, diff))

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
    try:
        rows += verl_peers(rewards, mask, lengths, index, args.repeats)
    except ImportError:
        print("verl not installed: skipping verl's own functions (make installs verl==0.9.1)")

    values = rng.normal(size=(g * s, t))
    token_rewards = np.zeros((g * s, t))
    token_rewards[np.arange(g * s), lengths - 1] = rewards.reshape(-1)  # outcome on the last token
    t_vec, (adv_vec, _) = best_of(lambda: gae(token_rewards, values, mask, gamma=1.0, lam=0.95), args.repeats)
    t_loop, adv_loop = best_of(lambda: loop_gae(token_rewards, values, mask, 1.0, 0.95), 1)
    diff = float(np.max(np.abs(np.asarray(adv_vec) - np.asarray(adv_loop))))
    assert diff < 1e-9, f"GAE: vectorised and loop disagree by {diff}"
    rows.append(("GAE (gamma=1, lam=0.95)", "per-sequence, per-token Python loop", t_vec, t_loop, diff))
    try:
        rows.append(verl_gae(token_rewards, values, mask, args.repeats))
    except ImportError:
        print("verl not installed: skipping verl's GAE")

    print()
    print("| estimator | peer | rewardlab (ms) | peer (ms) | speed-up | max abs diff |")
    print("|---|---|---:|---:|---:|---:|")
    for name, peer, tv, tp, diff in rows:
        print(f"| {name} | {peer} | {tv * 1e3:.1f} | {tp * 1e3:.1f} | {tp / tv:.1f}x | {diff:.1e} |")


if __name__ == "__main__":
    main()
