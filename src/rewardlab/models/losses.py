"""Reward-model losses as named pure functions: tensors in, a scalar loss out.

Every function states its paper and equation. None of them touches a model or an optimiser, so
a loss can be unit-tested on hand-made numbers and reused in any trainer.

Shapes: `chosen`, `rejected` are (B,) rewards of the preferred and dispreferred response of B
pairs; `margin` (B,) is how much better the chosen one is known to be (0 when unknown).
"""

from __future__ import annotations

from typing import Any

try:
    import torch
    import torch.nn.functional as F
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ConfigError

__all__ = [
    "bradley_terry_loss",
    "ensemble_aggregate",
    "odin_loss",
    "pairwise_accuracy",
    "pearson",
    "pinball_loss",
    "step_bce_loss",
]


def bradley_terry_loss(
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    *,
    margin: torch.Tensor | None = None,
    label_smoothing: float = 0.0,
    center_coef: float = 0.0,
    tie: torch.Tensor | None = None,
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Negative log-likelihood of the Bradley-Terry preference model, with the usual variants.

    Bradley & Terry (1952); as a reward-model loss, Ouyang et al. 2022 (InstructGPT), eq. 1:

        L = -log σ(r_c - r_r - m)

    * margin `m` (B,): Touvron et al. 2023 (Llama 2), eq. 2 — a known gap the chosen reward
      must exceed.
    * `label_smoothing` ε: the label is wrong with probability ε (conservative BT, as in
      Mitchell 2023 "cDPO"): L = -(1-ε) log σ(Δ) - ε log σ(-Δ).
    * `tie` (B,) bool: tied pairs get target ½ (Δ pushed to 0): L = -½ log σ(Δ) - ½ log σ(-Δ),
      whose minimum is at Δ = 0.
    * `center_coef` c: reward centring of Eisenstein et al. 2023 ("Helping or herding?",
      Sec. 3): + c·(r_c + r_r)², which pins the mean reward to 0 without changing rankings.
    * `weight` (same shape as the rewards): per-pair weights, e.g. bootstrap counts of
      ensemble members; the loss is then the weighted mean.

    Any shape works as long as the arguments broadcast ((K, B) member rewards with (B,) margins).

    Returns:
        the mean loss over the batch (scalar tensor).
    """
    if not 0.0 <= label_smoothing < 0.5:
        raise ConfigError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    delta = chosen - rejected
    if margin is not None:
        delta = delta - margin
    target = torch.full_like(delta, 1.0 - label_smoothing)
    if tie is not None:
        target = torch.where(tie, torch.full_like(delta, 0.5), target)
    # -t·log σ(Δ) - (1-t)·log σ(-Δ), computed stably with logsigmoid
    loss = -(target * F.logsigmoid(delta) + (1.0 - target) * F.logsigmoid(-delta))
    if center_coef:
        loss = loss + center_coef * (chosen + rejected) ** 2
    if weight is not None:
        return (loss * weight).sum() / weight.sum().clamp(min=1e-8)
    return loss.mean()


def pairwise_accuracy(chosen: torch.Tensor, rejected: torch.Tensor) -> float:
    """Share of pairs ranked right; exact ties count as half (they are coin flips)."""
    if chosen.numel() == 0:
        return float("nan")
    wins = (chosen > rejected).float() + 0.5 * (chosen == rejected).float()
    return float(wins.mean())


def pearson(x: torch.Tensor, y: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Differentiable Pearson correlation of two (N,) tensors."""
    x = x - x.mean()
    y = y - y.mean()
    return torch.div((x * y).sum(), x.norm() * y.norm() + eps)


def odin_loss(
    quality_c: torch.Tensor,
    quality_r: torch.Tensor,
    length_c: torch.Tensor,
    length_r: torch.Tensor,
    len_c: torch.Tensor,
    len_r: torch.Tensor,
    *,
    quality_coef: float = 1.0,
    length_coef: float = 1.0,
    ortho: torch.Tensor | None = None,
    ortho_coef: float = 1.0,
    stratified: bool = True,
    **bt_kwargs: Any,
) -> torch.Tensor:
    """ODIN's disentangled reward loss: Chen et al. 2024, "ODIN: Disentangled Reward Mitigates
    Hacking in RLHF", Sec. 3.

    Two heads share the backbone: quality `r^Q` and length `r^L`. Their sum is trained with the
    ranking loss; the quality head is pushed to be uncorrelated with response length L and the
    length head to carry it; the heads' weight vectors are kept orthogonal:

        L = L_BT(r^Q + r^L)  +  λ_Q·|ρ(r^Q, L)|  −  λ_L·ρ(r^L, L)  +  λ_O·|W_Q·W_L|

    Only `r^Q` is used at inference. Correlations are over the 2B responses of the batch.

    `stratified` (our variant, default on): when chosen responses of the training data are also
    longer, true quality correlates with length over the pooled batch, and |ρ(r^Q, L)| → 0 there
    forces r^Q to *penalise* length (it then anti-correlates with length on neutral data).
    Computing ρ within the chosen and within the rejected responses removes that label-induced
    correlation, so the penalty's zero is a quality head that ignores length. `stratified=False`
    is the paper's pooled form.

    Args:
        quality_c, quality_r, length_c, length_r: (B,) head outputs for chosen/rejected.
        len_c, len_r: (B,) response lengths (any unit; correlation is scale-free).
        ortho: |W_Q·W_L| computed by the caller from the head weights (or None).
    """
    rank = bradley_terry_loss(quality_c + length_c, quality_r + length_r, **bt_kwargs)
    if stratified:  # correlations within chosen and within rejected responses, then averaged
        corr_q = (pearson(quality_c, len_c).abs() + pearson(quality_r, len_r).abs()) / 2
        corr_l = (pearson(length_c, len_c) + pearson(length_r, len_r)) / 2
    else:
        length = torch.cat([len_c, len_r]).float()
        corr_q = pearson(torch.cat([quality_c, quality_r]), length).abs()
        corr_l = pearson(torch.cat([length_c, length_r]), length)
    total = rank + quality_coef * corr_q - length_coef * corr_l
    if ortho is not None:
        total = total + ortho_coef * ortho
    return total


def ensemble_aggregate(scores: torch.Tensor, *, how: str = "mean", penalty: float = 1.0) -> torch.Tensor:
    """Combine (K, N) member scores into (N,): Coste et al. 2024, "Reward Model Ensembles Help
    Mitigate Overoptimization" (ICLR), Sec. 3.

    * `mean`: the average.
    * `min`: worst-case optimisation (WCO), the most pessimistic member.
    * `uwo`: uncertainty-weighted optimisation, mean − λ·variance across members (their eq. 3).
    """
    if scores.ndim != 2 or scores.shape[0] < 1:
        raise ConfigError(f"expected (members, samples) scores, got shape {tuple(scores.shape)}")
    if how == "mean":
        return scores.mean(0)
    if how == "min":
        return scores.min(0).values
    if how == "uwo":
        var = scores.var(0, unbiased=False)
        return scores.mean(0) - penalty * var
    raise ConfigError(f"unknown ensemble aggregation {how!r}; use 'mean', 'min' or 'uwo'")


def step_bce_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Per-step binary cross-entropy for process reward models with hard (0/1) or soft ([0, 1])
    labels: Lightman et al. 2023 ("Let's Verify Step by Step") trains on hard labels; Wang et
    al. 2024 (Math-Shepherd, eq. 3) on hard or soft Monte-Carlo estimates of step correctness.

    Args:
        logits: (B, S) step logits. targets: (B, S) labels in [0, 1]. mask: (B, S) real steps.
    """
    loss = F.binary_cross_entropy_with_logits(logits, targets.float(), reduction="none")
    if mask is None:
        return loss.mean()
    mask = mask.float()
    return (loss * mask).sum() / mask.sum().clamp(min=1.0)


def pinball_loss(pred: torch.Tensor, target: torch.Tensor, quantiles: torch.Tensor) -> torch.Tensor:
    """Quantile (pinball) loss, Koenker & Bassett 1978: ρ_τ(u) = u·(τ − 1[u < 0]), u = y − ŷ.

    Args:
        pred: (N, Q) predicted quantiles. target: (N,). quantiles: (Q,) levels τ in (0, 1).
    """
    u = target.unsqueeze(-1) - pred  # (N, Q)
    return torch.maximum(quantiles * u, (quantiles - 1.0) * u).mean()
