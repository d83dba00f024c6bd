"""Uncertainty for every headline number: bootstrap intervals, paired tests, rank correlations.

Items that share a prompt are not independent (RewardBench has several pairs per prompt, a
candidate set several responses per problem), so `bootstrap_ci` takes `clusters`: the prompt of
each item. It then resamples whole prompts with replacement and recomputes the mean over the
items drawn (the cluster bootstrap; Field & Welsh 2007, "Bootstrapping clustered data"), which
widens the interval when items of a prompt move together. The runs pass the prompt by default.

All resampling is seeded (`seed=0` by default) so that the same inputs always give the same
interval; the seed is written into every report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, as_binary, non_empty, same_length

__all__ = [
    "Interval",
    "PairedComparison",
    "bootstrap_ci",
    "cluster_bootstrap_ci",
    "compare_paired",
    "kendall",
    "mcnemar_exact",
    "mean_intervals",
    "paired_permutation_test",
    "spearman",
]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a bootstrap confidence interval.

    Attributes:
        estimate: the statistic on the full data.
        low, high: interval bounds (NaN when fewer than two items make resampling meaningless).
        confidence: e.g. 0.95.
        n: number of items the statistic was computed on.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n: int
    clusters: int | None = None  # prompts resampled (cluster bootstrap), None for items

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def __str__(self) -> str:
        if np.isnan(self.low):
            return f"{self.estimate:.4f} (n={self.n}, no CI)"
        return f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"


def _cluster_ids(clusters: Sequence[object], n: int) -> np.ndarray:
    if len(clusters) != n:
        raise InputError(f"{len(clusters)} cluster ids for {n} values", source="bootstrap_ci")
    _, ids = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    return np.asarray(ids, dtype=np.int64)


def cluster_bootstrap_ci(
    values: Numbers,
    clusters: Sequence[object],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """Percentile interval of the mean, resampling whole clusters (e.g. prompts) with replacement.

    Each resample draws as many clusters as there are, with replacement, and takes the mean of
    all items of the drawn clusters (sum of their totals over sum of their sizes).

    Examples:
        >>> ci = cluster_bootstrap_ci([1, 1, 0, 0], ["p1", "p1", "p2", "p2"], seed=0)
        >>> ci.estimate, ci.clusters
        (0.5, 2)
    """
    data = as_1d(values, "values", where="bootstrap_ci")
    non_empty(len(data), "bootstrap_ci")
    ids = _cluster_ids(clusters, len(data))
    k = int(ids.max()) + 1
    estimate = float(data.mean())
    if k < 2 or np.all(data == data[0]):
        bound = estimate if k >= 2 else float("nan")
        return Interval(estimate, bound, bound, confidence, len(data), k)
    totals = np.bincount(ids, weights=data, minlength=k)
    sizes = np.bincount(ids, minlength=k).astype(float)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    step = max(1, 20_000_000 // k)  # resamples per batch: memory stays ~160 MB
    for start in range(0, n_resamples, step):
        draw = rng.integers(0, k, size=(min(step, n_resamples - start), k))
        means[start:start + len(draw)] = totals[draw].sum(axis=1) / sizes[draw].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(estimate, float(low), float(high), confidence, len(data), k)


def bootstrap_ci(
    values: Numbers,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of `statistic` over items (scipy.stats.bootstrap; for the
    mean, `mean_intervals`, the same interval from the same draws).

    The percentile method is used because it is defined for degenerate data (all items equal,
    e.g. 100 % accuracy), where BCa returns NaN.

    Args:
        values: one number per item (e.g. 1/0 correctness, or a per-item score).
        statistic: maps a 1-D array to a number; default the mean.
        clusters: the cluster (prompt) of each item; when given, whole clusters are resampled
            (`cluster_bootstrap_ci`; the statistic must then be the mean).
        confidence: interval coverage.
        n_resamples: bootstrap resamples.
        seed: random seed; the same seed gives the same interval.

    Raises:
        InputError: empty or non-finite input.
    """
    from scipy import stats

    if clusters is not None:
        if statistic is not np.mean:
            raise InputError("a cluster bootstrap is defined here for the mean only", source="bootstrap_ci")
        return cluster_bootstrap_ci(values, clusters, confidence=confidence, n_resamples=n_resamples, seed=seed)
    data = as_1d(values, "values", where="bootstrap_ci")
    non_empty(len(data), "bootstrap_ci")
    estimate = float(statistic(data))
    if len(data) < 2 or np.all(data == data[0]):
        # Nothing to resample: the interval is the point (or undefined for one item).
        bound = estimate if len(data) >= 2 else float("nan")
        return Interval(estimate, bound, bound, confidence, len(data))
    if statistic is np.mean:  # the common case: scipy's interval from its own draws, by counts
        return mean_intervals(data[:, None], confidence=confidence, n_resamples=n_resamples, seed=seed, where="bootstrap_ci")[0]
    vectorised = lambda x, axis: np.apply_along_axis(statistic, axis, x)  # noqa: E731
    result = stats.bootstrap(
        (data,),
        vectorised,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
        vectorized=True,
        # resamples per batch, so memory stays ~160 MB (2e7 floats) however many items there are
        batch=max(1, min(n_resamples, 20_000_000 // len(data))),
    )
    ci = result.confidence_interval
    return Interval(estimate, float(ci.low), float(ci.high), confidence, len(data))


def mean_intervals(
    columns: Any,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    where: str = "mean_intervals",
) -> list[Interval]:
    """Percentile bootstrap intervals of the mean of every column of an `(items, series)` array,
    all from the same resamples of the items.

    The resamples are shared, so series measured on the same items (methods on the same
    problems) are compared on the same draws, and one resample's means of every series are one
    matrix product: its counts of each item times the array (Efron & Tibshirani 1993, ch. 6:
    a resample is a multinomial weighting of the items). Each column's interval is the
    percentile interval `scipy.stats.bootstrap` gives for its mean with the same seed (the
    draws are the same stream of `Generator.integers`), to rounding.

    Examples:
        >>> a, b = mean_intervals([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]], seed=0)
        >>> round(a.estimate, 4), (b.low, b.high)
        (0.6667, (0.0, 0.0))

    Raises:
        InputError: not a 2-D array of finite numbers, or no items.
    """
    data = np.asarray(columns, dtype=np.float64)
    if data.ndim != 2:
        raise InputError(f"expected an (items, series) array, got shape {data.shape}", source=where)
    items, series = data.shape
    non_empty(items, where)
    if not np.isfinite(data).all():
        raise InputError("values must be finite numbers", source=where)
    estimates = data.mean(axis=0)
    if items < 2:
        return [Interval(float(e), float("nan"), float("nan"), confidence, items) for e in estimates]
    rng = np.random.default_rng(seed)
    means = np.empty((n_resamples, series))
    step = max(1, min(n_resamples, 4_000_000 // items))  # resamples per batch: ~64 MB of draws and counts
    for start in range(0, n_resamples, step):
        r = min(step, n_resamples - start)
        draw = rng.integers(0, items, size=(r, items))
        draw += np.arange(0, r * items, items)[:, None]  # resample k counts into its own row of bins
        counts = np.bincount(draw.ravel(), minlength=r * items).reshape(r, items).astype(np.float64)
        np.matmul(counts, data, out=means[start:start + r])
    means /= items
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=0)
    constant = (data == data[0]).all(axis=0)  # nothing to resample: the interval is the point
    low, high = np.where(constant, estimates, low), np.where(constant, estimates, high)
    return [Interval(float(e), float(lo), float(hi), confidence, items) for e, lo, hi in zip(estimates, low, high, strict=True)]


def paired_permutation_test(
    a: Numbers,
    b: Numbers,
    *,
    n_resamples: int = 10000,
    seed: int = 0,
) -> float:
    """Two-sided p-value that mean(a − b) = 0, by randomly swapping each pair (sign flips).

    The paired permutation test of `scipy.stats.permutation_test(permutation_type="samples")`,
    with its conventions: every one of the 2^n swaps when there are at most `n_resamples` (exact),
    else `n_resamples` random ones with p = (hits + 1) / (n_resamples + 1); two-sided is twice
    the smaller one-sided p, at most 1; a relative tolerance of 1e-14 counts near-equal
    statistics as equal. Swapping pair i flips the sign of d_i = a_i − b_i, so each resample is
    a row of random signs times d: one matrix product per batch of resamples, where scipy
    permutes the data of every resample (100,000 pairs × 10,000 resamples: a few seconds here,
    over twenty minutes and 16 GB there). The random draws differ from scipy's, so a randomized
    p-value agrees with scipy's to Monte-Carlo error; an exact one agrees exactly.
    """
    x = as_1d(a, "a", where="paired_permutation_test")
    y = as_1d(b, "b", where="paired_permutation_test")
    non_empty(same_length("paired_permutation_test", a=x, b=y), "paired_permutation_test")
    if np.allclose(x, y):
        return 1.0
    d = x - y
    observed = float(np.mean(d))
    exact = d.size < 63 and 2**d.size <= n_resamples
    null = _all_sign_flips(d) if exact else _random_sign_flips(d, n_resamples, np.random.default_rng(seed))
    tolerance = abs(1e-14 * observed)
    adjustment = 0 if exact else 1
    count = null.size
    less = (np.count_nonzero(null <= observed + tolerance) + adjustment) / (count + adjustment)
    greater = (np.count_nonzero(null >= observed - tolerance) + adjustment) / (count + adjustment)
    return float(min(1.0, 2 * min(less, greater)))


def _all_sign_flips(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """mean(s * d) for every sign vector s in {-1, 1}^n."""
    bits = (np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1
    flipped: NDArray[np.float64] = ((1 - 2 * bits) @ d) / d.size
    return flipped


def _random_sign_flips(d: NDArray[np.float64], resamples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """mean(s * d) for `resamples` random sign vectors, ~4M signs at a time (bounded memory)."""
    null = np.empty(resamples)
    batch = max(1, _SIGN_BATCH // d.size)
    for start in range(0, resamples, batch):
        rows = min(batch, resamples - start)
        signs = rng.integers(0, 2, size=(rows, d.size), dtype=np.int8).astype(np.float64)
        null[start : start + rows] = (d.sum() - 2 * (signs @ d)) / d.size  # s = 1 - 2 * bit
    return null


_SIGN_BATCH = 1 << 22


def mcnemar_exact(correct_a: Numbers, correct_b: Numbers) -> float:
    """Exact McNemar p-value for two classifiers judged on the same items.

    Only discordant items count: b01 = a right and b wrong, b10 = the reverse; under the null
    each discordant item is a fair coin, so p = two-sided binomial test of b01 out of b01 + b10
    (McNemar 1947; exact form as in statsmodels `mcnemar(exact=True)`).
    """
    from scipy import stats

    x = as_binary(correct_a, "correct_a", where="mcnemar_exact")
    y = as_binary(correct_b, "correct_b", where="mcnemar_exact")
    non_empty(same_length("mcnemar_exact", correct_a=x, correct_b=y), "mcnemar_exact")
    b01 = int(np.sum(x & ~y))
    b10 = int(np.sum(~x & y))
    if b01 + b10 == 0:
        return 1.0
    return float(stats.binomtest(b01, b01 + b10, 0.5).pvalue)


@dataclass(frozen=True)
class PairedComparison:
    """Reward A versus reward B on the same items."""

    mean_a: float
    mean_b: float
    difference: Interval  # mean(a - b) with its paired bootstrap interval
    p_value: float
    test: str  # "mcnemar-exact" for 0/1 outcomes, "paired-permutation" otherwise

    def to_dict(self) -> dict[str, object]:
        return {
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "difference": self.difference.to_dict(),
            "p_value": self.p_value,
            "test": self.test,
        }


def compare_paired(
    a: Numbers,
    b: Numbers,
    *,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare two rewards item by item: difference of means, its CI and a significance test.

    For 0/1 per-item outcomes (accuracy) the test is exact McNemar; otherwise a paired
    permutation test. The interval is the bootstrap of the per-item differences (pairs are
    resampled together, which keeps the correlation between the two rewards); with `clusters`,
    whole prompts are resampled. The p-value's test treats items as independent.
    """
    x = as_1d(a, "a", where="compare_paired")
    y = as_1d(b, "b", where="compare_paired")
    non_empty(same_length("compare_paired", a=x, b=y), "compare_paired")
    binary = bool(np.all(np.isin(x, (0.0, 1.0))) and np.all(np.isin(y, (0.0, 1.0))))
    if binary:
        p, test = mcnemar_exact(x, y), "mcnemar-exact"
    else:
        p, test = paired_permutation_test(x, y, seed=seed), "paired-permutation"
    diff = bootstrap_ci(x - y, clusters=clusters, confidence=confidence, seed=seed)
    return PairedComparison(float(x.mean()), float(y.mean()), diff, p, test)


def _correlation(name: str, a: Numbers, b: Numbers) -> tuple[float, float]:
    from scipy import stats

    x = as_1d(a, "a", where=name)
    y = as_1d(b, "b", where=name)
    n = same_length(name, a=x, b=y)
    if n < 2:
        raise InputError(f"a correlation needs at least 2 items, got {n}", source=name)
    if np.all(x == x[0]) or np.all(y == y[0]):
        # Undefined for a constant input; say so with NaN rather than a made-up 0.
        return float("nan"), float("nan")
    func = stats.spearmanr if name == "spearman" else stats.kendalltau
    result = func(x, y)
    return float(result.statistic), float(result.pvalue)


def spearman(a: Numbers, b: Numbers) -> tuple[float, float]:
    """Spearman rank correlation and its p-value (NaN, NaN if either input is constant)."""
    return _correlation("spearman", a, b)


def kendall(a: Numbers, b: Numbers) -> tuple[float, float]:
    """Kendall's tau-b and its p-value (NaN, NaN if either input is constant)."""
    return _correlation("kendall", a, b)
