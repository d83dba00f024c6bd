"""Per-turn credit: turn advantages against a hand computation, mapped onto assistant-turn tokens."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.credit.turns import turn_advantages, turn_index, turn_returns, turns_to_tokens
from rewardlab.errors import ArrayError, ConfigError

# One group of three trajectories: 2, 3 and 1 assistant turns.
REWARDS = np.array([[[0.0, 1.0, 0.0], [0.5, 0.0, 1.0], [0.0, 0.0, 0.0]]])
MASK = np.array([[[True, True, False], [True, True, True], [True, False, False]]])


def test_returns_by_hand() -> None:
    g = turn_returns(REWARDS, MASK, gamma=0.5)
    # a: G1 = 1, G0 = 0 + .5*1 = .5 ; b: G2 = 1, G1 = 0 + .5 = .5, G0 = .5 + .25 = .75 ; c: G0 = 0
    assert np.allclose(g, [[[0.5, 1.0, 0.0], [0.75, 0.5, 1.0], [0.0, 0.0, 0.0]]])


def test_turn_baseline_by_hand() -> None:
    adv = turn_advantages(REWARDS, MASK, gamma=0.5)
    # turn 0: mean(.5, .75, 0) = 5/12 ; turn 1: mean(1, .5) = .75 ; turn 2: mean(1) = 1
    expected = [[[0.5 - 5 / 12, 0.25, 0.0], [0.75 - 5 / 12, -0.25, 0.0], [-5 / 12, 0.0, 0.0]]]
    assert np.allclose(adv, expected)


def test_episode_baseline_and_scale_by_hand() -> None:
    adv = turn_advantages(REWARDS, MASK, gamma=0.5, baseline="episode", scale=True, eps=0.0)
    mean = 5 / 12
    std = np.sqrt(((0.5 - mean) ** 2 + (0.75 - mean) ** 2 + (0 - mean) ** 2) / 3)
    expected = np.array([[[0.5 - mean, 1.0 - mean, 0.0], [0.75 - mean, 0.5 - mean, 1.0 - mean], [0.0 - mean, 0.0, 0.0]]]) / std
    assert np.allclose(adv, np.where(MASK, expected, 0.0))


def test_two_axis_input_is_one_group() -> None:
    assert np.allclose(turn_advantages(REWARDS[0], MASK[0]), turn_advantages(REWARDS, MASK)[0])


def test_tokens_of_each_assistant_turn_get_its_advantage_and_tool_tokens_are_masked() -> None:
    # Trajectory b, as a verl/OpenRLHF response mask: 2 tokens turn 0, 3 tool tokens, 1 token
    # turn 1, 2 tool tokens, 2 tokens turn 2, 1 padding.
    response_mask = np.array([[1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0]], dtype=bool)
    index = turn_index(response_mask)
    assert index.tolist() == [[0, 0, -1, -1, -1, 1, -1, -1, 2, 2, -1]]
    adv = turn_advantages(REWARDS, MASK, gamma=0.5)[0, 1:2]  # (1, turns)
    tokens, mask = turns_to_tokens(adv, index)
    a0, a1 = 0.75 - 5 / 12, -0.25
    assert np.allclose(tokens, [[a0, a0, 0, 0, 0, a1, 0, 0, 0, 0, 0]])
    assert mask.tolist() == response_mask.tolist()


def test_a_token_naming_a_missing_turn_is_refused() -> None:
    with pytest.raises(ArrayError, match="token_turn"):
        turns_to_tokens(np.zeros((1, 2)), np.array([[0, 2]]))
    with pytest.raises(ArrayError, match="token_turn"):
        turns_to_tokens(np.zeros((1, 2)), np.array([[0.0, 1.0]]))


def test_bad_options_and_gaps() -> None:
    with pytest.raises(ConfigError):
        turn_advantages(REWARDS, MASK, baseline="median")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        turn_returns(REWARDS, MASK, gamma=1.5)
    with pytest.raises(ArrayError, match="prefix"):
        turn_advantages(REWARDS, np.array([[[True, False, True], [True, True, True], [True, False, False]]]))
