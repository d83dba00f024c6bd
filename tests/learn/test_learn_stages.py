"""DrS stage rewards: stages are ordered, and within a stage demonstrations look better than failures."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ConfigError, TrainingError
from rewardlab.learn.planners import random_rollouts
from rewardlab.learn.stages import DrSStageReward


@pytest.fixture(scope="module")
def failures(coffee_mail):
    return random_rollouts(coffee_mail, 120, steps=30, seed=1, every_stage=True)


@pytest.fixture(scope="module")
def drs(office_split, failures):
    return DrSStageReward.fit(office_split[0], failures, epochs=30, seed=0)


def test_every_state_of_a_later_stage_earns_more(drs, office_split, failures):
    held = office_split[1]
    obs = np.concatenate([d.observations for d in held.demos] + [d.observations for d in failures.demos])
    stages = np.concatenate([d.stages for d in held.demos] + [d.stages for d in failures.demos])
    r = drs.state_reward(obs)
    for k in range(3):
        assert r[stages == k].max() < r[stages == k + 1].min()


def test_within_a_stage_held_out_demonstrations_score_above_failures(drs, office_split, failures):
    held = office_split[1]
    for k in range(3):
        demo_states = np.concatenate([d.observations[np.asarray(d.stages) == k] for d in held.demos])
        stuck = [d for d in failures.demos if int(np.max(d.stages)) == k]
        fail_states = np.concatenate([d.observations[np.asarray(d.stages) == k] for d in stuck])
        a, b = drs.state_reward(demo_states), drs.state_reward(fail_states)
        auc = (a[:, None] > b[None, :]).mean() + 0.5 * (a[:, None] == b[None, :]).mean()
        assert auc > 0.6, f"stage {k}: AUC {auc:.2f}"


def test_drs_needs_runs_that_stop_in_each_stage(office_split):
    with pytest.raises(TrainingError, match="stopped in it"):
        DrSStageReward.fit(office_split[0], office_split[1], epochs=2)


def test_a_band_wider_than_half_a_stage_is_refused(drs):
    with pytest.raises(ConfigError, match="alpha"):
        DrSStageReward(drs.classifier, drs.discriminators, alpha=0.6, dim=drs.dim)
