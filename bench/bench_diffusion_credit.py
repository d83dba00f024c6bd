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
   * `bright`: 8x8 labelled blob images, reward the mean clipped pixel value (bigger blobs);
   * `half`: the ring, reward `tanh(4 x / radius)` (samples in the right half-plane): a coarse choice.
   `--radius 4` puts the ring's modes twice as far apart (the reward's mode at (radius, 0)), so
   the DDPM chooses between them at higher noise: a DDPM task decided in the early steps.
   Before each, the bench measures which steps decide the reward (the premise of the rule):
   from 24 sampled trajectories it branches 48 continuations at every state x_k to estimate
   V(x_k) = E[reward | x_k], and prints the share of Var(reward) each third of the steps adds
   (Var V(x_{k+1}) - Var V(x_k)) beside the mean cosine weight the rule gives those steps. On
   `ring` and `bright` the last third of the steps decides most of the reward while the
   cosine weights there are near 0 (x̂_0's direction has settled before the fine position or
   size is chosen) on the DDPM toy; `half` is decided in the first two thirds. `--kind flow`
   runs the same tasks on the rectified flow with Flow-GRPO's SDE sampler, whose large early
   noise moves the deciding steps earlier on every task.
   The ratio is uniform's samples / cosine's: above 1 means cosine credit needed fewer. A
   control, `decay`, weights step k by the fixed (K - k) / K: what fading the credit over the
   steps gains without reading the trajectory. A seed
   that never reaches the target counts as budget + one batch (so the ratio is a bound).
2. **Spatial allocation vs uniform allocation** (STAR, arXiv:2606.17979): the region-specific
   reward is the mean clipped pixel value of the quadrant the label names. Compared: uniform;
   allocation by the toy model's own label-to-pixel attention maps; allocation by the map of
   the region the prompt names (what ideal text-image attention would mark). Reported: mean
   reward over the last 5 iterations, and samples to a target.
3. **Spatial allocation by attention that localises** (`scene`): the toy of
   `rewardlab.diffusion.scene`, whose denoiser reads a four-token prompt through a
   pixel-to-token cross-attention; the map of the prompt's subject token is the allocation
   weight. The bench prints how much of that map falls inside the subject quadrant, then compares
   uniform allocation, the model's own map and the quadrant's 0/1 map on the subject quadrant's
   brightness: final reward mean ± sd and per seed, and samples to a target per seed.

Run (the numbers; about 5-10 minutes on one free core):

    .venv/bin/python bench/bench_diffusion_credit.py
    .venv/bin/python bench/bench_diffusion_credit.py --seeds 10 --iterations 60   # tighter
    .venv/bin/python bench/bench_diffusion_credit.py --kind flow --seeds 10 --iterations 60
    .venv/bin/python bench/bench_diffusion_credit.py --tasks ring,half --radius 4   # DDPM decided early
    .venv/bin/python bench/bench_diffusion_credit.py --tasks scene --seeds 3 --iterations 40 --lr 3e-4
    .venv/bin/python bench/bench_diffusion_credit.py --tiny                       # smoke run
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from rewardlab.credit.diffusion import cosine_progress_advantages, spatial_advantages
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
from rewardlab.diffusion.scene import region_mass, subject_masks
from rewardlab.diffusion.toy import ToyDiffusion, ToyDiffusionConfig, train_toy_diffusion

Reward = Callable[[np.ndarray, np.ndarray], np.ndarray]
PAPER_RATIO = "1.25-2x (CoCA, SD-class models)"


RADIUS = 2.0  # of the ring toy's circle of modes (--radius)


def ring_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(-((x - np.array([RADIUS, 0.0])) ** 2).sum(axis=1) / (2 * 0.5**2)))


def bright_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(x, -1, 1).mean(axis=(1, 2)))


def half_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(np.tanh(4 * x[:, 0] / RADIUS))


@torch.no_grad()
def _finish(model: ToyDiffusion, x: torch.Tensor, k: int, labels: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    for t in range(model.config.steps - k, 0, -1):
        mean, _, _ = model._step(x, t, labels)
        x = mean + torch.sqrt(model._variance(t)) * torch.randn(x.shape, generator=gen)
    return x


def premise(task: str, model: ToyDiffusion, reward: Reward, trajectories: int = 24, branches: int = 48) -> None:
    """Which thirds of the steps decide the reward, beside the cosine weight they get."""
    k = model.config.steps
    labels = torch.zeros(trajectories, dtype=torch.long)
    rollout = model.sample(trajectories, labels=labels, seed=12345)
    gen = torch.Generator().manual_seed(54321)
    value = np.zeros((trajectories, k + 1))
    for step in range(k + 1):
        x = rollout.latents[:, step].repeat_interleave(branches, 0)
        final = _finish(model, x, step, labels.repeat_interleave(branches), gen)
        scores = reward(final.double().numpy().reshape(-1, *model.config.state_shape), np.zeros(len(final)))
        value[:, step] = scores.reshape(trajectories, branches).mean(axis=1)
    added = np.diff(value.var(axis=0))
    adv = reward(rollout.final, np.zeros(trajectories))
    adv = adv - adv.mean()
    keep = np.abs(adv) > 1e-6
    weights = np.asarray(cosine_progress_advantages(rollout.trajectory(), adv, max_ratio=2.0))[keep] / adv[keep, None]
    thirds = np.array_split(np.arange(k), 3)
    share = [added[i].sum() / max(added.sum(), 1e-12) for i in thirds]
    cos_w = [weights[:, i].mean() for i in thirds]
    print(f"  {task:7s} share of Var(reward) decided in steps' thirds: {np.round(share, 2).tolist()};"
          f"  mean cosine weight there: {np.round(cos_w, 2).tolist()}")


def linear_decay() -> CreditRule:
    """The control: a fixed profile A (K - k) / K that uses nothing of the trajectory,
    standardised per prompt as the cosine rule is. It separates what cosine credit gains by
    reading each trajectory from what any weighting that fades over the steps gains."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        k = inputs.trajectory.steps
        adv = inputs.advantages.reshape(-1, 1) * (1 - np.arange(k) / k)[None, :]
        per_prompt = adv.reshape(inputs.advantages.shape[0], -1)
        centred = per_prompt - per_prompt.mean(axis=1, keepdims=True)
        out: np.ndarray = (centred / (per_prompt.std(axis=1, keepdims=True) + 1e-6)).reshape(adv.shape)
        return out

    return rule


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
    premise(task, model, reward)
    rules: dict[str, Callable[[], CreditRule]] = {"uniform": uniform, "cosine": cosine, "decay": linear_decay}
    runs = run_rules(model, reward, rules, args.seeds, args.iterations, args.lr)
    rows = {name: samples_to(r, target) for name, r in runs.items()}
    for name, (reached, mean) in rows.items():
        final = np.mean([np.mean(r.rewards[-5:]) for r in runs[name]])
        print(f"  {task:7s} {name:8s} samples to {target}: {reached}  mean {mean:7.0f}  final reward {final:.3f}")
    ratio = rows["uniform"][1] / rows["cosine"][1]
    print(f"  {task:7s} sample-efficiency ratio uniform/cosine = {ratio:.2f}x   (paper: {PAPER_RATIO}); "
          f"uniform/decay (the fixed-profile control) = {rows['uniform'][1] / rows['decay'][1]:.2f}x")


def spatial_vs_uniform(model: ToyDiffusion, target: float, args: argparse.Namespace) -> None:
    print(f"  region  the image toy's attention mass inside the labelled quadrant per third of the steps: "
          f"{attention_inside(model, quadrant_masks)} (even: 0.25)")
    rules: dict[str, Callable[[], CreditRule]] = {"uniform": uniform, "attention": spatial, "region-map": region_maps}
    runs = run_rules(model, region_reward, rules, args.seeds, args.iterations, args.lr)
    base = np.mean([np.mean(r.rewards[-5:]) for r in runs["uniform"]])
    for name, group in runs.items():
        final = [float(np.mean(r.rewards[-5:])) for r in group]
        reached, mean = samples_to(group, target)
        print(f"  region  {name:10s} final reward {np.mean(final):.3f} (vs uniform {np.mean(final) - base:+.3f}; "
              f"per seed {np.round(final, 3).tolist()})  samples to {target}: mean {mean:.0f} {reached}")


def subject_reward(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The scene's region-specific reward: mean clipped brightness of the subject's quadrant."""
    return np.asarray((np.clip(x, -1, 1) * subject_masks(labels)).sum(axis=(1, 2)) / 16)


def subject_maps() -> CreditRule:
    """Spatial allocation by the subject quadrant's 0/1 map (the map ideal attention would be)."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        k = inputs.trajectory.steps
        maps = np.repeat(subject_masks(inputs.rollout.labels.numpy())[:, None], k, axis=1) + 1e-3
        out: np.ndarray = spatial_advantages(uniform()(inputs), maps)
        return out

    return rule


def attention_inside(model: ToyDiffusion, masks: Callable[[np.ndarray], np.ndarray], n: int = 128) -> str:
    """Mean share of the recorded attention maps' mass inside the rewarded region, per third of the steps."""
    labels = torch.arange(n) % model.config.classes
    rollout = model.sample(n, labels=labels, seed=777)
    mass = region_mass(np.asarray(rollout.trajectory().attention), masks(labels.numpy())).mean(axis=0)
    return ", ".join(f"{part.mean():.2f}" for part in np.array_split(mass, 3))


def spatial_scene(target: float, args: argparse.Namespace) -> None:
    """Spatial allocation by the scene toy's own cross-attention (which localises) vs uniform."""
    start = time.perf_counter()
    scene = train_toy_diffusion(
        ToyDiffusionConfig(data="scene", kind=args.kind, lr=1e-2, batch_size=128, train_iters=args.scene_pretrain_iters)
    )
    print(f"  scene   pretrained in {time.perf_counter() - start:.1f} s; subject token's attention mass inside "
          f"the subject quadrant per third of the steps: {attention_inside(scene, subject_masks)} (even: 0.25)")
    rules: dict[str, Callable[[], CreditRule]] = {"uniform": uniform, "attention": spatial, "region-map": subject_maps}
    runs = run_rules(scene, subject_reward, rules, args.seeds, args.iterations, args.lr)
    base = [float(np.mean(r.rewards[-5:])) for r in runs["uniform"]]
    for name, group in runs.items():
        final = [float(np.mean(r.rewards[-5:])) for r in group]
        gain = np.subtract(final, base)
        reached, mean = samples_to(group, target)
        print(f"  scene   {name:10s} final reward {np.mean(final):.3f} ± {np.std(final):.3f} "
              f"(vs uniform {gain.mean():+.3f} ± {gain.std():.3f}, better in {int((gain > 0).sum())}/{len(gain)} seeds; "
              f"per seed {np.round(final, 3).tolist()})  samples to {target}: mean {mean:.0f} {reached}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--pretrain-iters", type=int, default=1500)
    parser.add_argument("--kind", choices=("ddpm", "flow"), default="ddpm", help="the toy model: DDPM or rectified flow")
    parser.add_argument("--radius", type=float, default=2.0, help="the ring's radius (4: the DDPM decides early)")
    parser.add_argument("--scene-pretrain-iters", type=int, default=400)
    parser.add_argument("--tasks", default="ring,bright,half,region,scene", help="comma-separated subset to run")
    parser.add_argument("--tiny", action="store_true", help="a smoke run: 1 seed, 3 iterations, barely pretrained")
    args = parser.parse_args()
    if args.tiny:
        args.seeds, args.iterations, args.pretrain_iters, args.scene_pretrain_iters = 1, 3, 30, 30
    torch.set_num_threads(1)
    global RADIUS
    RADIUS = args.radius
    start = time.perf_counter()
    tasks = set(args.tasks.split(","))
    ring = image = None
    if tasks & {"ring", "half"}:
        ring = train_toy_diffusion(ToyDiffusionConfig(data="ring", kind=args.kind, radius=args.radius, train_iters=args.pretrain_iters))
    if tasks & {"bright", "region"}:
        image = train_toy_diffusion(ToyDiffusionConfig(data="image", kind=args.kind, train_iters=args.pretrain_iters))
    print(f"pretrained the toy {args.kind} models in {time.perf_counter() - start:.1f} s; "
          f"{args.seeds} seeds x {args.iterations} iterations x 64 samples per rule")
    print("1. cosine-progress credit vs uniform credit")
    for task, model, reward, target in (
        ("ring", ring, ring_reward, 0.6),
        ("bright", image, bright_reward, 0.3),
        ("half", ring, half_reward, 0.9),
    ):
        if task in tasks and model is not None:
            cosine_vs_uniform(task, model, reward, target, args)
    if "region" in tasks and image is not None:
        print("2. spatial allocation vs uniform allocation (reward: the labelled quadrant's brightness)")
        spatial_vs_uniform(image, 0.7, args)
    if "scene" in tasks:
        print("3. spatial allocation by a cross-attention that localises (reward: the subject quadrant's brightness)")
        spatial_scene(0.7, args)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
