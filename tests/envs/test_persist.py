"""Save/load of learned rewards and bonuses: a loaded object scores exactly as the saved one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rewardlab.envs.intrinsic import (
    CountBonus,
    CuriosityCriticBonus,
    DisagreementBonus,
    HashedCountBonus,
    ICMBonus,
    RNDBonus,
)
from rewardlab.envs.preferences import PreferenceDataset, PreferenceRewardModel
from rewardlab.errors import InputError

RNG = np.random.default_rng(0)
OBS, ACT, NXT = RNG.normal(size=(32, 6)), RNG.integers(0, 3, 32), RNG.normal(size=(32, 6))


def _trained_preference_model(hidden: int) -> PreferenceRewardModel:
    f1, f2 = RNG.normal(size=(40, 5, 4)), RNG.normal(size=(40, 5, 4))
    labels = (f1[..., 0].sum(1) > f2[..., 0].sum(1)).astype(float)
    model = PreferenceRewardModel(4, hidden=hidden, ensemble=2, seed=1)
    model.fit(PreferenceDataset(f1, f2, labels), epochs=30)
    return model


@pytest.mark.parametrize("hidden", [0, 8])
def test_a_loaded_preference_model_predicts_what_the_saved_one_did(tmp_path: Path, hidden: int) -> None:
    model = _trained_preference_model(hidden)
    model.save(tmp_path / "pref.npz")
    loaded = PreferenceRewardModel.load(tmp_path / "pref.npz")
    feats = RNG.normal(size=(10, 4)).astype(np.float32)
    np.testing.assert_allclose(loaded.reward(feats), model.reward(feats), rtol=1e-6)
    assert (loaded.hidden, loaded.ensemble) == (hidden, 2)


def _bonuses() -> list[object]:
    return [
        RNDBonus(6, hidden=16, seed=2),
        ICMBonus(6, 3, hidden=16, seed=2),
        CuriosityCriticBonus(6, 3, hidden=16, seed=2),
        DisagreementBonus(6, 3, hidden=16, members=2, seed=2),
        HashedCountBonus(6, bits=8, seed=2),
    ]


@pytest.mark.parametrize("bonus", _bonuses(), ids=lambda b: type(b).__name__)
def test_a_loaded_bonus_scores_what_the_saved_one_did(tmp_path: Path, bonus) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        bonus.update(OBS, ACT, NXT)
    before = bonus.reward(OBS, ACT, NXT)
    bonus.save(tmp_path / "b.npz")
    loaded = type(bonus).load(tmp_path / "b.npz")
    np.testing.assert_allclose(loaded.reward(OBS, ACT, NXT), before, rtol=1e-5)
    loaded.update(OBS, ACT, NXT)  # and it keeps learning


def test_a_loaded_count_bonus_keeps_its_counts(tmp_path: Path) -> None:
    bonus = CountBonus(10, scale=0.5)
    bonus.update(None, None, np.array([3, 3, 3, 3, 7]))  # type: ignore[arg-type]
    bonus.save(tmp_path / "c.npz")
    loaded = CountBonus.load(tmp_path / "c.npz")
    assert loaded.reward(None, None, np.array([3, 7, 0])).tolist() == [0.25, 0.5, 0.5]  # type: ignore[arg-type]


def test_loading_another_kind_of_file_names_what_it_holds(tmp_path: Path) -> None:
    CountBonus(4).save(tmp_path / "c.npz")
    with pytest.raises(InputError, match="holds a 'CountBonus', not a 'RNDBonus'"):
        RNDBonus.load(tmp_path / "c.npz")


def test_loading_a_file_that_is_not_a_state_file_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"junk\.npz"):
        PreferenceRewardModel.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "plain.npz", weights=np.zeros(3))
    with pytest.raises(InputError, match="not a rewardlab state file"):
        PreferenceRewardModel.load(tmp_path / "plain.npz")


def test_count_bonus_refuses_vector_observations() -> None:
    bonus = CountBonus(12)
    with pytest.raises(InputError, match="HashedCountBonus"):
        bonus.reward(None, None, np.array([[1, 2], [3, 4]]))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="HashedCountBonus"):
        bonus.update(None, None, np.array([[1, 2]]))  # type: ignore[arg-type]
    assert bonus.counts.sum() == 0  # nothing was counted under a wrong index


def test_count_bonus_refuses_out_of_range_and_fractional_indices() -> None:
    bonus = CountBonus(5)
    for bad in (np.array([5]), np.array([-1]), np.array([1.5])):
        with pytest.raises(InputError, match=r"\[0, 5\)"):
            bonus.update(None, None, bad)  # type: ignore[arg-type]
    bonus.update(None, None, np.array([[2], [2]]))  # type: ignore[arg-type]  # (B, 1) is fine
    assert bonus.counts.tolist() == [0, 0, 2, 0, 0]


def test_rnd_normalisation_makes_the_bonus_scale_free() -> None:
    """Scaling every observation by 1000 changes a raw RND error, not the normalised one much."""
    x = RNG.normal(size=(64, 6))
    rewards = {}
    for scale in (1.0, 1000.0):
        for normalize in (False, True):
            rnd = RNDBonus(6, hidden=16, seed=0, normalize=normalize)
            for _ in range(5):
                rnd.update(None, None, scale * x)  # type: ignore[arg-type]
            rewards[scale, normalize] = float(rnd.reward(None, None, scale * x).mean())  # type: ignore[arg-type]
    assert rewards[1000.0, False] > 100 * rewards[1.0, False]  # raw error grows with the input scale
    assert 0.5 < rewards[1000.0, True] / rewards[1.0, True] < 2.0


def test_rnd_statistics_are_updated_by_update_only() -> None:
    rnd = RNDBonus(6, hidden=16, seed=0)
    rnd.reward(None, None, OBS)  # type: ignore[arg-type]
    assert rnd.obs_rms.count == 0 and rnd.ret_rms.count == 0
    rnd.update(None, None, OBS)  # type: ignore[arg-type]
    assert rnd.obs_rms.count == 32 and rnd.ret_rms.count == 32
