"""Process reward models and step-label estimators."""

import numpy as np
import pytest

from rewardlab.core import Sample, Status, registry
from rewardlab.errors import InputError, TrainingError
from rewardlab.models.prm import PRMConfig, ProcessRewardModel, train_prm
from rewardlab.models.step_labels import (
    BUFFER,
    beta_binomial_belief,
    consensus_filter,
    mc_hard_labels,
    mc_soft_labels,
    outcome_pseudo_labels,
    progress_labels,
    soft_values,
    td_lambda_targets,
)
from rewardlab.models.synthetic import make_step_samples


def test_mc_hard_and_soft_labels():
    assert mc_hard_labels([3, 0, 1], 4).tolist() == [1.0, 0.0, 1.0]
    assert mc_soft_labels([3, 0, 1], 4).tolist() == [0.75, 0.0, 0.25]
    with pytest.raises(ValueError, match="successes <= totals"):
        mc_soft_labels([5], 4)


def test_beta_binomial_reliability_grows_with_evidence():
    mean_few, rel_few = beta_binomial_belief([1], [2])
    mean_many, rel_many = beta_binomial_belief([50], [100])
    assert mean_few[0] == pytest.approx(0.5) and mean_many[0] == pytest.approx(0.5)
    assert 0 < rel_few[0] < rel_many[0] < 1
    assert beta_binomial_belief([0], [1], prior=(1, 1))[0][0] == pytest.approx(1 / 3)


def test_td_lambda_interpolates_between_bootstrap_and_monte_carlo():
    values = [0.2, 0.4, 0.6]
    assert td_lambda_targets(values, 1.0, lam=1.0).tolist() == [1.0, 1.0, 1.0]
    assert td_lambda_targets(values, 1.0, lam=0.0).tolist() == [0.4, 0.6, 1.0]
    assert td_lambda_targets(values, 1.0, lam=0.5).tolist() == pytest.approx([0.6, 0.8, 1.0])


def test_soft_values_go_from_max_to_mean():
    outcomes = np.array([[0.0, 0.0, 1.0, 1.0]])
    assert soft_values(outcomes, beta=1e-3)[0] == pytest.approx(1.0, abs=1e-2)
    assert soft_values(outcomes, beta=1e3)[0] == pytest.approx(0.5, abs=1e-3)
    assert soft_values(outcomes, beta=1.0)[0] == pytest.approx(np.log((2 + 2 * np.e) / 4))


def test_progress_labels_are_value_differences():
    assert progress_labels([0.5, 0.75, 0.25], initial=0.5).tolist() == [0.0, 0.25, -0.5]


def test_outcome_pseudo_labels_buffer_contradicted_steps():
    assert outcome_pseudo_labels(False, 3).tolist() == [0.0, 0.0, 0.0]
    labels = outcome_pseudo_labels(False, 3, values=[0.9, 0.6, 0.1], margin=0.5)
    assert labels.tolist() == [BUFFER, BUFFER, 0.0]


def test_consensus_filter_keeps_agreeing_steps():
    mask = consensus_filter([1.0, 0.0, 0.7, BUFFER], [1.0, 1.0, 0.9, 1.0])
    assert mask.tolist() == [True, False, True, False]


@pytest.fixture(scope="module")
def step_data():
    return make_step_samples(500, seed=0), make_step_samples(100, seed=1), make_step_samples(300, seed=2)


@pytest.mark.parametrize(("labelling", "min_auc"), [("gold", 0.85), ("mc_soft", 0.8), ("mc_hard", 0.8)])
def test_prm_learns_step_correctness(hashing, step_data, labelling, min_auc):
    """Ranking AUC of step scores against the gold prefix labels of held-out solutions; MC
    labels are noisy estimates of those (8 rollouts), so they get a lower bar than gold."""
    (train, gold, succ), (val, val_gold, _), (test, test_gold, _) = step_data
    labels = {"gold": gold, "mc_soft": [mc_soft_labels(s, 8).tolist() for s in succ],
              "mc_hard": [mc_hard_labels(s, 8).tolist() for s in succ]}[labelling]
    prm, report = train_prm(train, labels, val=(val, val_gold), backbone=hashing, config=PRMConfig(epochs=15))
    probs = np.concatenate(prm.score_many([(s.prompt_text, s.steps) for s in test]))
    truth = np.concatenate(test_gold)
    auc_pairs = probs[truth == 1][:, None] > probs[truth == 0][None, :]
    assert auc_pairs.mean() > min_auc, report["epochs"][-1]
    if labelling == "gold":
        assert ((probs > 0.5) == (truth > 0.5)).mean() > 0.8


def test_model_prm_returns_step_scores_and_aggregate(hashing, step_data, tmp_path):
    (train, gold, _), _, (test, _, _) = step_data
    prm, _ = train_prm(train, gold, backbone=hashing, config=PRMConfig(epochs=3))
    prm.save(tmp_path)
    reward = registry.create("model.prm", {"path": str(tmp_path), "aggregate": "min"})
    results = reward.score_batch([test[0], Sample(prompt="p", response="no steps")])
    assert results[0].status is Status.OK and len(results[0].steps) == len(test[0].steps)
    assert results[0].score == pytest.approx(min(results[0].steps))
    assert results[1].status is Status.ERROR and results[1].error.kind == "invalid_input"
    assert isinstance(ProcessRewardModel.load(tmp_path), ProcessRewardModel)


def test_prm_rejects_samples_without_steps_and_bad_labels(hashing):
    with pytest.raises(InputError, match="no steps"):
        train_prm([Sample(response="x")], [[1.0]], backbone=hashing)
    with pytest.raises(InputError, match="labels must be in"):
        train_prm([Sample(response="x", steps=("a",))], [[2.0]], backbone=hashing)
    with pytest.raises(InputError, match="1 labels for 2 steps"):
        train_prm([Sample(response="x", steps=("a", "b"))], [[1.0]], backbone=hashing)
    with pytest.raises(TrainingError, match="no training steps"):
        train_prm([], [], backbone=hashing)


def test_outcome_model_checkpoint_is_not_a_prm(tmp_path, hashing):
    from rewardlab.models import RewardModel
    from rewardlab.models.heads import ScalarHead

    RewardModel(hashing, ScalarHead(hashing.dim)).save(tmp_path)
    with pytest.raises(InputError, match=r"use `model\.rm`"):
        ProcessRewardModel.load(tmp_path)
