"""The paired permutation test against scipy's own `permutation_test`: the same p-value where
both enumerate every swap, agreement to Monte-Carlo error where both sample, and a size scipy
cannot hold (it keeps every resample of every pair at once) in bounded memory and seconds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from rewardlab.evaluate.stats import paired_permutation_test


def scipy_p(a: np.ndarray, b: np.ndarray, n_resamples: int) -> float:
    return float(
        stats.permutation_test(
            (a, b), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
            n_resamples=n_resamples, alternative="two-sided", random_state=np.random.default_rng(0), vectorized=True,
        ).pvalue
    )  # fmt: skip


@pytest.mark.parametrize("size", [2, 5, 9, 13])
def test_an_exact_test_is_scipys_to_the_last_bit(size):
    rng = np.random.default_rng(size)
    for _ in range(20):
        a = rng.integers(0, 2, size).astype(np.float64)  # 0/1 credits: many tied statistics
        b = rng.choice([0.0, 0.5, 1.0], size)
        if not np.allclose(a, b):
            assert paired_permutation_test(a, b) == scipy_p(a, b, 10000)


def test_a_sampled_test_agrees_with_scipy_to_monte_carlo_error():
    rng = np.random.default_rng(4)
    for size, shift in ((40, 0.0), (300, 0.01), (2000, 0.005)):
        a = rng.random(size)
        b = a + rng.normal(shift, 0.1, size)
        ours, theirs = paired_permutation_test(a, b, n_resamples=4000), scipy_p(a, b, 4000)
        # two independent estimates of p, each with standard error <= sqrt(p(1-p)/R) x 2
        error = 2 * np.sqrt(max(ours * (1 - ours), 1e-4) / 4000)
        assert abs(ours - theirs) <= 4 * np.sqrt(2) * error, (size, ours, theirs)


def test_the_same_seed_gives_the_same_p_and_another_seed_another_draw():
    rng = np.random.default_rng(5)
    a, b = rng.random(500), rng.random(500)
    assert paired_permutation_test(a, b, seed=3) == paired_permutation_test(a, b, seed=3)
    assert paired_permutation_test(a, b, seed=3, n_resamples=999) != paired_permutation_test(a, b, seed=4, n_resamples=999)


@pytest.mark.slow
def test_a_hundred_thousand_pairs_fit_in_two_gigabytes():
    # 100,000 pairs x 10,000 resamples: scipy needs ~16 GB per array and over twenty minutes
    script = textwrap.dedent("""
        import resource
        import numpy as np
        from rewardlab.evaluate.stats import paired_permutation_test
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        rng = np.random.default_rng(0)
        a = rng.random(100_000)
        print(paired_permutation_test(a, a + rng.normal(0, 0.01, a.size)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 0.0 < float(done.stdout) <= 1.0
