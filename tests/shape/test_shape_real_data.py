"""Group transforms on real model output: 100 MATH problems × 8 Qwen2.5-Math responses.

The file carries, per response, the grader's verdict (`score`) and a reward model's score
(`pred_score`): exactly HERO's setting (a sparse verifier plus a dense RM). Read in place from
../shared/data (never copied into the repo); skipped when absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rewardlab.credit import gdpo, grpo, tree_advantages
from rewardlab.shape import Rerank, hero, rescue, zero_variance

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="module")
def math_groups():
    path = SHARED_DATA / "qwen25-math-cot-100.jsonl"
    if not path.exists():
        pytest.skip(f"real data not found at {path}; see /work/shared/data/SOURCES.md")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    correct = np.array([[bool(s) for s in row["score"]] for row in rows])
    rm = np.array([[float(s[0]) for s in row["pred_score"]] for row in rows])
    responses = [row["response"] for row in rows]
    return correct, rm, responses


def test_verifier_alone_leaves_most_real_groups_without_signal(math_groups):
    correct, _, _ = math_groups
    flat = zero_variance(correct.astype(float))
    assert flat.sum() >= 50  # Qwen2.5-Math solves most of these: all-correct groups dominate
    assert np.all(grpo(correct.astype(float))[flat] == 0.0)


def test_hero_on_real_scores_keeps_verifier_order_and_restores_signal(math_groups):
    correct, rm, _ = math_groups
    shaped = hero(correct, rm, alpha=0.1, beta=0.1)
    for g in range(len(correct)):
        good, bad = shaped[g][correct[g]], shaped[g][~correct[g]]
        if good.size and bad.size:
            assert good.min() > bad.max()
    before = int(zero_variance(correct.astype(float)).sum())
    after = int(zero_variance(shaped).sum())
    assert after < before / 5  # the RM separates responses the verifier cannot
    adv = grpo(shaped)
    assert np.count_nonzero(adv.any(axis=1)) >= len(correct) - after


def test_rerank_rescue_orders_flat_real_groups_by_reward_model(math_groups):
    correct, rm, _ = math_groups
    out = rescue(correct.astype(float), strategy=Rerank(rm, width=0.1))
    flat = out.zero_variance
    for g in np.flatnonzero(flat)[:20]:
        order_rm = np.argsort(rm[g], kind="stable")
        assert np.all(np.diff(out.rewards[g][order_rm]) >= -1e-12)
    assert np.abs(out.rewards - correct).max() <= 0.05 + 1e-12


def test_gdpo_on_verifier_and_rm_components_is_finite_and_normalised(math_groups):
    correct, rm, _ = math_groups
    adv = gdpo(np.stack([correct.astype(float), rm], axis=2), weights=[1.0, 0.5], eps=0.0)
    assert np.all(np.isfinite(adv))
    assert adv.mean() == pytest.approx(0.0, abs=1e-9)
    assert adv.std(ddof=1) == pytest.approx(1.0)


def test_tree_advantages_on_real_responses_share_credit_only_after_forks(math_groups):
    _, rm, responses = math_groups
    for g in range(5):
        words = [text.split() for text in responses[g]]  # whitespace "tokens": real shared openings
        adv = tree_advantages(words, rm[g])
        common = 0
        while all(len(w) > common for w in words) and len({w[common] for w in words}) == 1:
            common += 1
        for a in adv:
            assert np.all(a[:common] == 0.0)  # an opening shared by all 8 answers earns nothing
        # the last token sits on the response's private branch: credit = r_i - V(last fork)
        for i, w in enumerate(words):
            shared = max(_common(w, v) for j, v in enumerate(words) if j != i)
            if shared == len(w):
                continue  # a duplicate or a prefix of another answer: no private branch
            sharers = [j for j, v in enumerate(words) if v[:shared] == w[:shared]]
            assert adv[i][-1] == pytest.approx(rm[g][i] - rm[g][sharers].mean(), abs=1e-9)


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
