"""`model.hf` token-budget batching against fixed-size batches of the same model, on CPU.

The peer is how a reward model is usually called with transformers: the samples in input order,
32 at a time, each batch padded to its longest sample (`tokenizer(..., padding=True)`, as a
`pipeline(batch_size=32)` or a hand-written loop does). rewardlab sorts by length and cuts
batches by a padded-token budget. Both use the same config-built Llama reward model (its weights
are random: only the cost matters, and the scores must agree). A third line, fixed-size batches
of length-sorted samples, separates what sorting gives from what the budget adds.

    python bench/bench_hf_rm.py                 # 2,000 mixed-length samples, one run
    python bench/bench_hf_rm.py --n 500 --threads 2
"""

from __future__ import annotations

import argparse
import math
import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from rewardlab.core import Sample
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, save_tiny

T = TypeVar("T")


def mixed_samples(n: int, seed: int = 0) -> list[Sample]:
    """Prompts of 2-60 words; responses log-uniform in 4-400 words (short answers and long
    chains of thought in one batch, as a GRPO group or a best-of-n pool has)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        prompt = " ".join(rng.choices(WORDS[:200], k=rng.randint(2, 60)))
        length = int(math.exp(rng.uniform(math.log(4), math.log(400))))
        out.append(Sample(prompt=prompt, response=" ".join(rng.choices(WORDS[:200], k=length))))
    return out


def fixed_batches(reward: HFReward, samples: Sequence[Sample], batch_size: int, *, sort: bool) -> list[float]:
    """The peer: transformers called on fixed-size batches, padded to each batch's longest."""
    tok, model = reward.loaded.tokenizer, reward.loaded.model
    texts = [tok.apply_chat_template([{"role": "user", "content": s.prompt},
                                      {"role": "assistant", "content": s.response}], tokenize=False)
             for s in samples]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if sort else list(range(len(texts)))
    scores = [0.0] * len(texts)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = tok([texts[i] for i in idx], padding=True, add_special_tokens=False, return_tensors="pt").to(model.device)
            logits = model(**enc).logits[:, 0]
            for i, value in zip(idx, logits.tolist(), strict=True):
                scores[i] = value
    return scores


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32, help="the peer's fixed batch size")
    parser.add_argument("--budget", type=int, default=8192, help="rewardlab's padded tokens per batch")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: the machine is shared)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = save_tiny(tmp, "llama", layers=2, hidden=64)
        reward = HFReward(model=str(path), max_tokens_per_batch=args.budget, max_batch_size=128)
        samples = mixed_samples(args.n)
        reward.score_batch(samples[:64])  # warm-up: lazy imports, first allocations
        fixed_batches(reward, samples[:64], args.batch_size, sort=False)
        ours_s, results = timed(lambda: reward.score_batch(samples))
        peer_s, peer = timed(lambda: fixed_batches(reward, samples, args.batch_size, sort=False))
        sorted_s, _ = timed(lambda: fixed_batches(reward, samples, args.batch_size, sort=True))
    if any(r.score is None for r in results):
        raise SystemExit(f"rewardlab failed to score some samples: {[r.error for r in results if r.error][:3]}")
    ours = [float(r.score) for r in results if r.score is not None]
    gap = max(abs(a - b) for a, b in zip(ours, peer, strict=True))
    print(f"{args.n} samples, torch threads {args.threads}, max |score difference| {gap:.2e}")
    if gap > 1e-4:
        raise SystemExit("rewardlab and the peer disagree")
    print(f"fixed batches of {args.batch_size}, input order (peer): {peer_s:7.2f} s  {args.n / peer_s:7.1f} samples/s")
    print(f"fixed batches of {args.batch_size}, length-sorted:      {sorted_s:7.2f} s  {args.n / sorted_s:7.1f} samples/s")
    print(f"rewardlab token budget {args.budget}:             {ours_s:7.2f} s  {args.n / ours_s:7.1f} samples/s")
    print(f"speed-up over the peer: {peer_s / ours_s:.2f}x (over sorted fixed batches: {sorted_s / ours_s:.2f}x)")


if __name__ == "__main__":
    main()
