"""Credit over denoising steps and pixels on the toy DDPM: does it learn faster than uniform DDPO?

Two questions, each over several seeds (the seed of the DDPO run; the pretrained toy model is
the same for every seed), with the same learning rate, batch (4 prompts x 16 samples) and noise
for every rule in a seed (common random numbers at the first iteration):

1. **Cosine-progress credit vs uniform credit** (Liao et al. 2025, arXiv:2505.19196, report
   1.25-2x higher sample efficiency on SD-class models; here as their code trains it: the
   reward-to-go of the dense step rewards from the similarity of each step's x̂_0 with the
   final sample, standardised per prompt). Samples drawn until the 3-iteration
   running mean of the on-policy reward first reaches a target, on two tasks:
   * `ring`: the 2-D 8-Gaussian ring, reward `exp(-|x - (2, 0)|^2 / 0.5)` (one mode of eight);
   * `bright`: 8x8 labelled blob images, reward the mean clipped pixel value (bigger blobs).
   The ratio is uniform's samples / cosine's: above 1 means cosine credit needed fewer. A seed
   that never reaches the target counts as budget + one batch (so the ratio is a bound).
2. **Spatial allocation vs uniform allocation** (STAR, arXiv:2606.17979): the region-specific
   reward is the mean clipped pixel value of the quadrant the label names. Compared: uniform;
   allocation by the toy model's own label-to-pixel attention maps; allocation by the map of
   the region the prompt names (what ideal text-image attention would mark). Reported: mean
   reward over the last 5 iterations, and samples to a target.

Run (the numbers; about 5-10 minutes on one free core):

    .venv/bin/python bench/bench_diffusion_credit.py
    .venv/bin/python bench/bench_diffusion_credit.py --seeds 10 --iterations 60   # tighter
    .venv/bin/python bench/bench_diffusion_credit.py --tiny                       # smoke run
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from rewardlab.credit.diffusion import spatial_advantages
from rewardlab.diffusion.ddpo import (
    CreditInputs,
    CreditRule,
    DDPOConfig,
    DDPORun,
    cosine,
    spatial,
    train_ddpo,
    uniform,
)
from rewardlab.diffusion.toy import ToyDiffusion, ToyDiffusionConfig, train_toy_diffusion

Reward = Callable[[np.ndarray, np.ndarray], np.ndarray]
PAPER_RATIO = "1.25-2x (CoCA, SD-class models)"


def ring_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(-((x - np.array([2.0, 0.0])) ** 2).sum(axis=1) / (2 * 0.5**2)))


def bright_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(x, -1, 1).mean(axis=(1, 2)))


def quadrant_masks(labels: np.ndarray) -> np.ndarray:
    """`(B, 8, 8)` 1 on the quadrant each label names."""
    masks = np.zeros((len(labels), 8, 8))
    for i, label in enumerate(labels):
        r0, c0 = (int(label) // 2) * 4, (int(label) % 2) * 4
        masks[i, r0 : r0 + 4, c0 : c0 + 4] = 1.0
    return masks


def region_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray((np.clip(x, -1, 1) * quadrant_masks(labels)).sum(axis=(1, 2)) / 16)


def region_maps() -> CreditRule:
    """Spatial allocation by the map of the region the prompt (label) names."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        k = inputs.trajectory.steps
        maps = np.repeat(quadrant_masks(inputs.rollout.labels.numpy())[:, None], k, axis=1) + 1e-3
        out: np.ndarray = spatial_advantages(uniform()(inputs), maps)
        return out

    return rule


def run_rules(
    model: ToyDiffusion, reward: Reward, rules: dict[str, Callable[[], CreditRule]], seeds: int, iterations: int, lr: float
) -> dict[str, list[DDPORun]]:
    out: dict[str, list[DDPORun]] = {name: [] for name in rules}
    for seed in range(seeds):
        for name, make in rules.items():
            _, run = train_ddpo(model, reward, make(), DDPOConfig(iterations=iterations, lr=lr, seed=seed))
            out[name].append(run)
    return out


def samples_to(runs: list[DDPORun], target: float) -> tuple[list[int | None], float]:
    reached = [run.samples_to(target) for run in runs]
    budget = runs[0].samples[-1] + (runs[0].samples[0] if runs[0].samples else 0)
    return reached, float(np.mean([budget if r is None else r for r in reached]))


def cosine_vs_uniform(task: str, model: ToyDiffusion, reward: Reward, target: float, args: argparse.Namespace) -> None:
    runs = run_rules(model, reward, {"uniform": uniform, "cosine": cosine}, args.seeds, args.iterations, args.lr)
    rows = {name: samples_to(r, target) for name, r in runs.items()}
    for name, (reached, mean) in rows.items():
        final = np.mean([np.mean(r.rewards[-5:]) for r in runs[name]])
        print(f"  {task:7s} {name:8s} samples to {target}: {reached}  mean {mean:7.0f}  final reward {final:.3f}")
    ratio = rows["uniform"][1] / rows["cosine"][1]
    print(f"  {task:7s} sample-efficiency ratio uniform/cosine = {ratio:.2f}x   (paper: {PAPER_RATIO})")


def spatial_vs_uniform(model: ToyDiffusion, target: float, args: argparse.Namespace) -> None:
    rules: dict[str, Callable[[], CreditRule]] = {"uniform": uniform, "attention": spatial, "region-map": region_maps}
    runs = run_rules(model, region_reward, rules, args.seeds, args.iterations, args.lr)
    base = np.mean([np.mean(r.rewards[-5:]) for r in runs["uniform"]])
    for name, group in runs.items():
        final = [float(np.mean(r.rewards[-5:])) for r in group]
        reached, mean = samples_to(group, target)
        print(f"  region  {name:10s} final reward {np.mean(final):.3f} (vs uniform {np.mean(final) - base:+.3f}; "
              f"per seed {np.round(final, 3).tolist()})  samples to {target}: mean {mean:.0f} {reached}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--pretrain-iters", type=int, default=1500)
    parser.add_argument("--tiny", action="store_true", help="a smoke run: 1 seed, 3 iterations, barely pretrained")
    args = parser.parse_args()
    if args.tiny:
        args.seeds, args.iterations, args.pretrain_iters = 1, 3, 30
    torch.set_num_threads(1)
    start = time.perf_counter()
    ring = train_toy_diffusion(ToyDiffusionConfig(data="ring", train_iters=args.pretrain_iters))
    image = train_toy_diffusion(ToyDiffusionConfig(data="image", train_iters=args.pretrain_iters))
    print(f"pretrained both toy models in {time.perf_counter() - start:.1f} s; "
          f"{args.seeds} seeds x {args.iterations} iterations x 64 samples per rule")
    print("1. cosine-progress credit vs uniform credit")
    cosine_vs_uniform("ring", ring, ring_reward, 0.6, args)
    cosine_vs_uniform("bright", image, bright_reward, 0.3, args)
    print("2. spatial allocation vs uniform allocation (reward: the labelled quadrant's brightness)")
    spatial_vs_uniform(image, 0.7, args)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
