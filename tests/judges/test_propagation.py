"""Free-form consensus and label spreading over a group."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab import Sample, Status
from rewardlab.judges.propagation import Consensus, spread_labels


def group(texts, labels=None, gid="g"):
    labels = labels or [None] * len(texts)
    return [Sample(response=t, group=gid, meta={} if y is None else {"label": y}) for t, y in zip(texts, labels, strict=True)]


def test_consensus_is_mean_similarity_to_the_others():
    texts = ["the capital is paris", "paris is the capital", "it is paris", "lyon"]
    results = Consensus().score_batch(group(texts))
    scores = [r.score for r in results]
    assert scores[0] == scores[1] > scores[2] > scores[3] == 0.0
    # SQuAD normalisation drops "the": F1 1 with "paris is capital", 2/3 with "it is paris", 0 with "lyon"
    assert scores[0] == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)


def test_labels_spread_to_similar_unlabelled_answers():
    texts = ["paris is the capital", "the capital is paris", "capital paris", "lyon is the capital", "lyon capital"]
    results = Consensus().score_batch(group(texts, [1, None, None, 0, None]))
    assert results[0].score == 1.0 and results[3].score == 0.0  # labelled members keep their label
    assert results[1].score > 0.5 > results[4].score and results[1].info["propagated"]


def test_spread_labels_matches_the_closed_form():
    s = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)
    d = np.diag(1 / np.sqrt(s.sum(axis=1)))
    expected = np.linalg.solve(np.eye(3) - 0.5 * d @ s @ d, np.array([1.0, 0.0, -1.0]))
    assert spread_labels(s, [1, None, 0], alpha=0.5) == pytest.approx(expected)


def test_group_where_nothing_agrees_is_skipped():
    results = Consensus().score_batch(group(["alpha", "beta", "gamma", "delta"]))
    assert all(r.status is Status.SKIPPED for r in results) and "too split" in results[0].info["skip_reason"]


def test_small_group_is_skipped_and_missing_group_is_an_error():
    small = Consensus(min_group=4).score_batch(group(["a b", "a b", "a b"]))
    assert all(r.status is Status.SKIPPED and "too small" in r.info["skip_reason"] for r in small)
    assert Consensus().score(Sample(response="x")).error.kind == "invalid_input"
