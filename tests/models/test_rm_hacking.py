"""Anti-hacking pieces on synthetic data with a known gold reward: ODIN heads and ensembles."""

import numpy as np
import pytest
import torch

from rewardlab.models import TrainConfig, evaluate_pairs, train_reward_model
from rewardlab.models.ensemble import best_of_n_curve, train_ensemble, with_aggregation
from rewardlab.models.losses import pearson
from rewardlab.models.synthetic import (
    SyntheticConfig,
    best_of_n_pool,
    gold_reward,
    make_pairs,
    synthetic_response,
)


@pytest.fixture(scope="module")
def biased_data():
    """Training pairs whose chosen side carries the spurious features 70% of the time."""
    return (make_pairs(1500, split="train"), make_pairs(200, split="test", config=SyntheticConfig(seed=1)),
            make_pairs(1000, split="test", config=SyntheticConfig(seed=2)))


def _length_corr(model, pairs) -> float:
    texts = [p.chosen for p in pairs] + [p.rejected for p in pairs]
    scores = torch.from_numpy(model.score_texts(texts))
    return float(pearson(scores, torch.tensor([float(len(t.split())) for t in texts], dtype=torch.float64)))


def test_gold_reward_is_an_exact_checker():
    assert gold_reward("2+2=4 1+1=3") == 0.5
    assert gold_reward("Great question! **2+2=4**") == 1.0
    assert gold_reward("no sums") == 0.0


def test_train_split_is_hackable_and_test_split_is_not(biased_data):
    train, _, test = biased_data
    longer = [len(p.chosen) > len(p.rejected) for p in train]
    assert np.mean(longer) > 0.6
    assert abs(np.mean([len(p.chosen) > len(p.rejected) for p in test]) - 0.5) < 0.06


ODIN_SEEDS = range(5)


@pytest.mark.slow
def test_odin_removes_length_correlation_and_keeps_accuracy(hashing, biased_data):
    """ODIN's claim, over seeds: the quality head's correlation with length on the decorrelated
    split is a small fraction of the plain model's, at no cost in accuracy.

    One training run is not a measurement here: the correlation penalty is estimated on
    minibatches of 32 (its standard error, ~0.18, dwarfs the target), so single runs land
    anywhere in |corr| 0.00-0.10 by seed, and a different CPU's float rounding is a different
    draw. The mean over seeds is stable. Early stopping on accuracy alone can stop before the
    penalty has acted (one seed stopped at epoch 2 with |corr| 0.19), so these run every epoch.
    """
    train, val, test = biased_data

    def trained(**options):
        return [train_reward_model(train, val, backbone=hashing, config=TrainConfig(seed=s, patience=40, **options))[0]
                for s in ODIN_SEEDS]

    plain, odin = trained(), trained(head="odin", epochs=40)
    plain_corr = np.mean([_length_corr(m, test) for m in plain])
    odin_corr = np.mean([abs(_length_corr(m, test)) for m in odin])
    plain_acc = np.mean([evaluate_pairs(m, test) for m in plain])
    odin_acc = np.mean([evaluate_pairs(m, test) for m in odin])
    assert plain_corr > 0.25  # the plain models learnt "longer is better"
    assert odin_corr < plain_corr / 4, (plain_corr, odin_corr)
    assert odin_acc >= plain_acc - 0.02, (plain_acc, odin_acc)


def test_ensemble_members_differ_and_aggregations_order(hashing, biased_data):
    train, val, test = biased_data
    model, _ = train_ensemble(train[:600], val, backbone=hashing, members=4, config=TrainConfig(epochs=4))
    texts = [p.chosen for p in test[:50]]
    members = model.head.member_scores(model.backbone.embed(texts)).detach()
    assert members.std(0).mean() > 0  # bootstraps and seeds give different members
    mean = with_aggregation(model, "mean").score_texts(texts)
    low = with_aggregation(model, "min").score_texts(texts)
    uwo = with_aggregation(model, "uwo", penalty=1.0).score_texts(texts)
    assert (low <= mean + 1e-9).all() and (uwo <= mean + 1e-9).all()
    assert evaluate_pairs(model, test) > 0.55


def test_best_of_n_curve_with_the_gold_reward_is_the_oracle():
    pool = best_of_n_pool(40, 16)
    curve = best_of_n_curve(lambda texts: np.array([gold_reward(t) for t in texts]), gold_reward, pool, [1, 4, 16])
    assert curve[1] < curve[4] <= curve[16] <= 1.0
    with pytest.raises(ValueError, match="responses"):
        best_of_n_curve(lambda t: np.zeros(len(t)), gold_reward, pool, [32])


def test_random_subspace_ensemble_round_trips(hashing, biased_data, tmp_path):
    from rewardlab.models import RewardModel

    train, val, test = biased_data
    model, _ = train_ensemble(train[:300], val, backbone=hashing, members=3, feature_fraction=0.5,
                              config=TrainConfig(epochs=2))
    assert 0.4 < float(model.head.mask.mean()) < 0.6
    texts = [p.chosen for p in test[:10]]
    np.testing.assert_array_equal(RewardModel.load(model.save(tmp_path)).score_texts(texts), model.score_texts(texts))


@pytest.mark.slow
def test_uncertainty_weighted_ensemble_loses_less_gold_when_best_of_n_overoptimises(hashing):
    """Pool where wrong responses pad more: the length-loving proxy's pick gets worse with n.
    A random-subspace ensemble aggregated by mean - 4 var keeps more gold at n = 16 and 64."""
    val = make_pairs(200, split="test", config=SyntheticConfig(seed=1))
    small = make_pairs(300, split="train", config=SyntheticConfig(bias=0.9))
    pool = best_of_n_pool(200, 64, filler_scale=3, rambling=True)
    single, _ = train_reward_model(small, val, backbone=hashing, config=TrainConfig())
    ensemble, _ = train_ensemble(small, val, backbone=hashing, members=8, feature_fraction=0.5)
    uwo = with_aggregation(ensemble, "uwo", penalty=4.0)
    ns = [1, 16, 64]
    single_curve = best_of_n_curve(single.score_texts, gold_reward, pool, ns)
    uwo_curve = best_of_n_curve(uwo.score_texts, gold_reward, pool, ns)
    assert single_curve[64] < single_curve[1] - 0.2  # over-optimisation is really there
    assert uwo_curve[16] > single_curve[16] and uwo_curve[64] > single_curve[64], (single_curve, uwo_curve)


def test_mlp_ensemble_members_agree_in_distribution_and_disagree_out_of_it(hashing):
    """The mechanism of Coste et al. 2024: same data, different seeds -> members agree where the
    training data was and spread where best-of-n pushes (more, and novel, padding)."""
    train = make_pairs(400, split="train", config=SyntheticConfig(bias=0.5, seed=10))
    ensemble, _ = train_ensemble(train, [], backbone=hashing, members=5, hidden=32, bootstrap=False,
                                 config=TrainConfig(epochs=10))
    rng = __import__("random").Random(0)

    def spread(filler: int, novel: float) -> float:
        texts = [synthetic_response(rng, [(1, 2), (3, 1), (2, 2)], rng.randint(0, 3), filler=filler, novel=novel)
                 for _ in range(50)]
        return float(ensemble.head.member_scores(hashing.embed(texts)).detach().std(0).mean())

    inside, outside = spread(3, 0.0), spread(18, 0.5)
    assert outside > 2 * inside, (inside, outside)


def test_mlp_ensemble_loses_less_gold_than_a_single_mlp_at_large_n(hashing):
    """Proxies trained on 600 pairs whose padding stays in range; the pool pads up to 3x more,
    half of it in unseen words, and wrong responses pad more. Single MLPs (3 seeds) over-optimise;
    8 MLPs from different seeds on the same full data, aggregated by min or mean - var, keep more
    gold at n = 64 than the single MLPs' mean (bench/RESULTS.md: every data seed and bias)."""
    val = make_pairs(200, split="test", config=SyntheticConfig(seed=1))
    train = make_pairs(600, split="train", config=SyntheticConfig(bias=0.5, seed=10))
    pool = best_of_n_pool(80, 64, filler_scale=3, rambling=True, novel=0.5)
    ns = [1, 8, 64]
    singles = [best_of_n_curve(train_reward_model(train, val, backbone=hashing, config=TrainConfig(
        head="mlp", hidden=32, seed=seed))[0].score_texts, gold_reward, pool, ns) for seed in range(3)]
    ensemble, _ = train_ensemble(train, val, backbone=hashing, members=8, hidden=32, bootstrap=False)
    single_64 = float(np.mean([c[64] for c in singles]))
    assert np.mean([max(c.values()) for c in singles]) > single_64  # the single proxies do over-optimise
    for how in ("min", "uwo"):
        curve = best_of_n_curve(with_aggregation(ensemble, how).score_texts, gold_reward, pool, ns)
        assert curve[64] > single_64 + 0.02, (how, curve, single_64)


def test_mlp_ensemble_round_trips_and_rejects_bad_width(hashing, biased_data, tmp_path):
    from rewardlab.models import RewardModel
    from rewardlab.models.heads import EnsembleHead

    train, val, test = biased_data
    model, report = train_ensemble(train[:200], val, backbone=hashing, members=3, hidden=8, bootstrap=False,
                                   config=TrainConfig(epochs=2))
    assert report.config["ensemble_hidden"] == 8 and not report.config["ensemble_bootstrap"]
    texts = [p.chosen for p in test[:10]]
    np.testing.assert_array_equal(RewardModel.load(model.save(tmp_path)).score_texts(texts), model.score_texts(texts))
    with pytest.raises(ValueError, match="hidden"):
        EnsembleHead(16, members=2, hidden=-1)
