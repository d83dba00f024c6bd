"""`model.hf` on a GPU: throughput (samples/s), real tokens/s and peak memory per dtype and
token budget. Where no CUDA device exists it says so and exits 0 (nothing to measure).

    python bench/bench_hf_rm_gpu.py                                  # a config-built 8-layer Llama RM
    python bench/bench_hf_rm_gpu.py --model Skywork/Skywork-Reward-V2-Qwen3-0.6B --device cuda:1
    python bench/bench_hf_rm_gpu.py --dtypes bf16 --budgets 16384 65536 --n 4000
    python bench/bench_hf_rm_gpu.py --device cpu --n 100 --dtypes fp32 --budgets 4096   # a dry run

`--model` is a directory or a hub id already in the local Hugging Face cache (nothing is
downloaded: `hf download <id>` first). The reference row is fixed-size batches of 32 in input
order, the usual transformers loop, at the first dtype.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch


def measure(score: Callable[[list[Any]], object], samples: list[Any], device: torch.device) -> tuple[float, int]:
    """(seconds, peak bytes) of `score(samples)` once, after a warm-up on 64 samples."""
    gpu = device.type == "cuda"
    score(samples[:64])
    if gpu:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    score(samples)
    if gpu:
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, torch.cuda.max_memory_allocated(device) if gpu else 0


def scored(reward: Any) -> Callable[[list[Any]], object]:
    def run(samples: list[Any]) -> object:
        results = reward.score_batch(samples)
        failed = [r.error for r in results if r.score is None]
        if failed:
            raise SystemExit(f"{len(failed)} samples failed, e.g. {failed[0]}")
        return results
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="directory or cached hub id (default: a config-built Llama)")
    parser.add_argument("--device", default="cuda", help="a CUDA device; `cpu` dry-runs the same steps (no memory figures)")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--dtypes", nargs="+", default=["bf16", "fp16", "fp32"])
    parser.add_argument("--budgets", nargs="+", type=int, default=[16384, 65536])
    args = parser.parse_args()
    if args.device != "cpu" and not torch.cuda.is_available():
        print("no CUDA device on this machine (or torch is a CPU build): nothing to measure, skipping")
        return 0
    sys.path.insert(0, os.path.dirname(__file__))
    from bench_hf_rm import fixed_batches, mixed_samples

    from rewardlab.models.hf_reward import HFReward
    from rewardlab.models.hf_tiny import save_tiny

    samples = mixed_samples(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(save_tiny(tmp, "llama", layers=8, hidden=512))
        where = torch.cuda.get_device_name(args.device) if args.device != "cpu" else "cpu (dry run)"
        print(f"model {model}, {where}, {args.n} mixed-length samples")
        print(f"{'dtype':>5} {'budget':>8} {'samples/s':>10} {'tokens/s':>10} {'peak MiB':>9}")
        for dtype in args.dtypes:
            for budget in args.budgets:
                reward = HFReward(model=model, device=args.device, dtype=dtype, max_tokens_per_batch=budget,
                                  max_batch_size=512)
                tokens = sum(len(reward.inputs.encode(s.prompt, [{"role": "assistant", "content": s.response}]).ids)
                             for s in samples)
                seconds, peak = measure(scored(reward), samples, reward.loaded.device)
                print(f"{dtype:>5} {budget:>8} {args.n / seconds:10.1f} {tokens / seconds:10.0f} {peak / 2**20:9.0f}")
        peer = HFReward(model=model, device=args.device, dtype=args.dtypes[0])
        seconds, peak = measure(lambda batch: fixed_batches(peer, batch, 32, sort=False), samples, peer.loaded.device)
        print(f"{args.dtypes[0]:>5} {'32 fixed':>8} {args.n / seconds:10.1f} {tokens / seconds:10.0f} {peak / 2**20:9.0f}"
              "   (the peer: fixed batches of 32 in input order)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
