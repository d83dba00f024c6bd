"""Reward over-optimisation: gold reward versus proxy reward under best-of-N selection.

Gao, Schulman & Hilton 2023, "Scaling Laws for Reward Model Overoptimization":

- the KL divergence of best-of-n sampling from the base policy is KL_bon = log n − (n − 1)/n
  (their eq. 1);
- with d = sqrt(KL), the gold reward of best-of-n follows R_bon(d) = d (α − β d) (eq. 2),
  and of RL training R_RL(d) = d (α − β log d) (eq. 3).

`bon_curve` estimates, from a fixed pool of M scored candidates per prompt, the expected proxy
and gold reward of the candidate chosen by best-of-n for each n ≤ M without resampling noise:
sorting a prompt's candidates by proxy score ascending, the i-th (1-based) is the maximum of a
uniformly random n-subset with probability C(i−1, n−1) / C(M, n) (the unbiased estimator of
Nakano et al. 2021, WebGPT appendix). Proxy ties are broken by input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers
from rewardlab.evaluate.expected import expected_best_of_n

__all__ = ["BonCurve", "FunctionalFit", "bon_curve", "bon_kl", "fit_bon", "fit_rl"]


def bon_kl(n: int | Numbers) -> np.ndarray | float:
    """KL(best-of-n ‖ base) = log n − (n − 1)/n, in nats.

    Examples:
        >>> round(bon_kl(4), 4)
        0.6363
    """
    arr = np.asarray(n, dtype=float)
    if np.any(arr < 1):
        raise InputError(f"n must be >= 1, got {n}", source="bon_kl")
    out = np.log(arr) - (arr - 1) / arr
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class BonCurve:
    """Expected proxy and gold reward of the best-of-n pick, per n."""

    n: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray

    def to_dict(self) -> dict[str, list[float]]:
        return {k: getattr(self, k).tolist() for k in ("n", "kl", "proxy", "gold")}


def bon_curve(
    proxy: Sequence[Numbers] | np.ndarray, gold: Sequence[Numbers] | np.ndarray, ns: Sequence[int] | None = None
) -> BonCurve:
    """Best-of-n sweep over a pool of candidates per prompt.

    Args:
        proxy: per prompt, the proxy reward (the one being optimised) of each candidate.
        gold: per prompt, the gold reward of the same candidates (e.g. verifier correctness).
        ns: values of n; default 1, 2, 4, ... up to the smallest pool size.
    """
    if len(proxy) != len(gold) or not proxy:
        raise InputError(f"{len(proxy)} proxy rows for {len(gold)} gold rows", source="bon_curve")
    pools = []
    for i, (p, g) in enumerate(zip(proxy, gold, strict=True)):
        p_arr, g_arr = np.asarray(p, dtype=float), np.asarray(g, dtype=float)
        if p_arr.shape != g_arr.shape or p_arr.ndim != 1 or not p_arr.size:
            raise InputError(f"prompt {i}: proxy and gold must be equal-length non-empty lists", source="bon_curve")
        if not (np.all(np.isfinite(p_arr)) and np.all(np.isfinite(g_arr))):
            raise InputError(f"prompt {i}: non-finite score; drop error results first", source="bon_curve")
        pools.append((p_arr, g_arr))
    smallest = min(len(p) for p, _ in pools)
    if ns is None:
        ns = [2**k for k in range(int(np.log2(smallest)) + 1)]
    if any(n < 1 or n > smallest for n in ns):
        raise InputError(f"every n must be in [1, {smallest}] (the smallest pool), got {list(ns)}", source="bon_curve")
    # Each pool's draws are over its own candidates, so pools are stacked by size. Ties at the
    # top are credited their mean (`expected_best_of_n`), not broken by input order.
    by_size: dict[int, list[int]] = {}
    for i, (p, _) in enumerate(pools):
        by_size.setdefault(len(p), []).append(i)
    stacked = [(rows, np.stack([pools[i][0] for i in rows]), np.stack([pools[i][1] for i in rows])) for rows in by_size.values()]
    proxy_curve, gold_curve = [], []
    for n in ns:
        p_vals, g_vals = np.empty(len(pools)), np.empty(len(pools))
        for rows, p_arr, g_arr in stacked:
            everyone = np.ones(p_arr.shape, dtype=bool)
            p_vals[rows] = expected_best_of_n(p_arr, p_arr, everyone, n)
            g_vals[rows] = expected_best_of_n(p_arr, g_arr, everyone, n)
        proxy_curve.append(float(p_vals.mean()))
        gold_curve.append(float(g_vals.mean()))
    n_arr = np.asarray(ns, dtype=float)
    return BonCurve(n_arr, np.atleast_1d(bon_kl(n_arr)), np.asarray(proxy_curve), np.asarray(gold_curve))


@dataclass(frozen=True)
class FunctionalFit:
    """R(d) = d(α − β f(d)) fitted by least squares; `r2` on the fitted points."""

    form: str  # "bon" or "rl"
    alpha: float
    beta: float
    r2: float

    def predict(self, kl: Numbers) -> np.ndarray:
        d = np.sqrt(np.asarray(kl, dtype=float))
        f = d if self.form == "bon" else np.log(np.maximum(d, 1e-12))
        return np.asarray(d * (self.alpha - self.beta * f), dtype=float)

    def to_dict(self) -> dict[str, float | str]:
        return {"form": self.form, "alpha": self.alpha, "beta": self.beta, "r2": self.r2}


def _fit(form: str, kl: Numbers, reward: Numbers) -> FunctionalFit:
    k = np.asarray(kl, dtype=float)
    r = np.asarray(reward, dtype=float)
    keep = k > 0  # d = 0 carries no information about α, β (R(0) = 0 by construction)
    if k.shape != r.shape or keep.sum() < 2:
        raise InputError("need at least two points with KL > 0 and equal-length kl/reward", source=f"fit_{form}")
    d = np.sqrt(k[keep])
    f = d if form == "bon" else np.log(d)
    # Linear in (α, β): R = α·d − β·d·f(d).
    design = np.stack([d, -d * f], axis=1)
    (alpha, beta), *_ = np.linalg.lstsq(design, r[keep], rcond=None)
    fitted = design @ np.array([alpha, beta])
    total = np.sum((r[keep] - r[keep].mean()) ** 2)
    r2 = 1.0 - np.sum((r[keep] - fitted) ** 2) / total if total > 0 else float("nan")
    return FunctionalFit(form, float(alpha), float(beta), float(r2))


def fit_bon(kl: Numbers, reward: Numbers) -> FunctionalFit:
    """Fit Gao et al.'s best-of-n form R(d) = d(α − β d), d = sqrt(KL), to gold-reward gains.

    Pass rewards relative to n = 1 (R(0) = 0), e.g. `curve.gold - curve.gold[0]`.
    """
    return _fit("bon", kl, reward)


def fit_rl(kl: Numbers, reward: Numbers) -> FunctionalFit:
    """Fit Gao et al.'s RL form R(d) = d(α − β log d), d = sqrt(KL)."""
    return _fit("rl", kl, reward)
