"""rewardlab's estimators against verl 0.9.1's own advantage functions (`core_algos`).

Every test calls the real `verl.trainer.ppo.core_algos` function on torch tensors and compares
with rewardlab on the same inputs. The batch is the hard case verl itself sees: groups of
different sizes, rows of a prompt scattered through the batch (verl's `index` = prompt uid),
one group of a single response, one all-equal group, right-padded responses of different
lengths, the outcome reward on each response's last token. Where verl deliberately differs
(a singleton group's fallback, whitening eps), the test asserts the relation docs/credit.md
states ("Checked against the trainers' own code").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from rewardlab.credit import dr_grpo, gae, gdpo, grpo, pack, reinforce_pp, rloo

torch = pytest.importorskip("torch")
core_algos = pytest.importorskip("verl.trainer.ppo.core_algos", reason="verl is installed by make (verl==0.9.1 --no-deps)")
from verl.trainer.config import AlgoConfig  # noqa: E402

TOKENS = 7
SINGLETON = "solo"
FLAT = "flat"


@dataclass
class Batch:
    """A verl-shaped batch: one row per response, uids in shuffled order."""

    scores: np.ndarray  # (bs,) outcome reward per response
    uid: np.ndarray  # (bs,) object array of prompt ids
    lengths: np.ndarray  # (bs,) response tokens

    @property
    def response_mask(self) -> np.ndarray:
        return np.arange(TOKENS)[None, :] < self.lengths[:, None]

    def token_level_rewards(self, dtype=None):
        out = torch.zeros(len(self.scores), TOKENS, dtype=dtype or torch.float64)
        out[torch.arange(len(self.scores)), torch.as_tensor(self.lengths - 1)] = torch.as_tensor(self.scores, dtype=out.dtype)
        return out

    def mask_tensor(self, dtype=torch.float64):
        return torch.as_tensor(self.response_mask, dtype=dtype)

    def in_groups(self, *, exclude=()):
        keep = ~np.isin(self.uid.astype(str), list(exclude))
        return Batch(self.scores[keep], self.uid[keep], self.lengths[keep])


def ragged_batch(seed: int = 0) -> Batch:
    """Groups of 5, 4, 3, 2 random rewards, a singleton and an all-0.9 group, rows shuffled."""
    rng = np.random.default_rng(seed)
    sizes = {"p0": 5, "p1": 4, "p2": 3, "p3": 2, SINGLETON: 1, FLAT: 3}
    uid = np.array([k for k, n in sizes.items() for _ in range(n)], dtype=object)
    scores = np.round(rng.random(len(uid)), 3)
    scores[uid == FLAT] = 0.9  # not a binary fraction: the float32 mean of 3 copies is not 0.9
    order = rng.permutation(len(uid))
    lengths = rng.integers(1, TOKENS + 1, len(uid))
    return Batch(scores[order], uid[order], lengths)


def per_row(estimator, batch: Batch, **kwargs) -> np.ndarray:
    """rewardlab's outcome estimator on verl's flat batch, back in verl's row order."""
    groups = pack(batch.scores, batch.uid)
    return np.asarray(groups.unpack(estimator(groups.values, groups.mask, **kwargs)))


def verl_rows(advantages, batch: Batch) -> np.ndarray:
    """verl's `(bs, T)` outcome advantages as one value per row (checked constant on the mask)."""
    adv = advantages.detach().double().numpy()
    mask = batch.response_mask
    first = adv[:, 0]
    np.testing.assert_array_equal(np.where(mask, adv, first[:, None]), np.repeat(first[:, None], TOKENS, 1))
    assert np.all(adv[~mask] == 0.0)
    return first


def rows(batch: Batch, uid: str) -> np.ndarray:
    return batch.uid.astype(str) == uid


def whiten_over_tokens(adv: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """verl's `masked_whiten` as docs/credit.md states it: token mean, unbiased token var, +1e-8."""
    n = mask.sum()
    mean = adv[mask].mean()
    var = ((adv[mask] - mean) ** 2).sum() / (n - 1)
    return (adv - mean) / np.sqrt(var + 1e-8)


@pytest.mark.parametrize("vectorized", [False, True], ids=["loop", "vectorized"])
@pytest.mark.parametrize("norm_by_std", [True, False], ids=["grpo", "dr_grpo"])
def test_grpo_matches_verl_on_a_ragged_shuffled_batch(norm_by_std, vectorized):
    batch = ragged_batch()
    fn = core_algos.compute_grpo_vectorized_outcome_advantage if vectorized else core_algos.compute_grpo_outcome_advantage
    adv, returns = fn(batch.token_level_rewards(), batch.mask_tensor(), batch.uid, norm_adv_by_std_in_grpo=norm_by_std)
    theirs = verl_rows(adv, batch)
    ours = per_row(grpo, batch, eps=1e-6) if norm_by_std else per_row(dr_grpo, batch)
    grouped = ~rows(batch, SINGLETON) & ~rows(batch, FLAT)
    # the vectorised path computes group statistics in float32 (verl.utils.groupwise)
    tol = {"rtol": 1e-6, "atol": 1e-6} if vectorized else {"rtol": 1e-12, "atol": 1e-15}
    np.testing.assert_allclose(ours[grouped], theirs[grouped], **tol)
    if vectorized and norm_by_std:
        # float32 statistics of float64 scores: 0.9 − float32(mean) is 2e-8, over (0 + 1e-6)
        assert np.abs(theirs[rows(batch, FLAT)]).min() > 1e-2
    else:
        np.testing.assert_allclose(theirs[rows(batch, FLAT)], 0.0, atol=1e-7)  # rounding (/ eps)
    assert np.all(ours[rows(batch, FLAT)] == 0.0)
    assert torch.equal(adv, returns)


@pytest.mark.parametrize("norm_by_std", [True, False], ids=["grpo", "dr_grpo"])
def test_grpo_singleton_group_verl_passes_the_raw_reward_rewardlab_gives_zero(norm_by_std):
    batch = ragged_batch()
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        batch.token_level_rewards(), batch.mask_tensor(), batch.uid, norm_adv_by_std_in_grpo=norm_by_std
    )
    solo = rows(batch, SINGLETON)
    # verl's fallback for a group of one is mean 0, std 1: the reward itself is the advantage
    # (the fallback std is a float32 1.0, so 1 + 1e-6 is rounded to float32)
    expected = batch.scores[solo] / (1 + 1e-6) if norm_by_std else batch.scores[solo]
    np.testing.assert_allclose(verl_rows(adv, batch)[solo], expected, rtol=1e-7)
    ours = per_row(grpo, batch) if norm_by_std else per_row(dr_grpo, batch)
    assert np.all(ours[solo] == 0.0)  # r − mean(r) = 0: no baseline, no signal


def test_grpo_zero_variance_group_float32_verl_divides_rounding_noise_by_eps():
    batch = ragged_batch()
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        batch.token_level_rewards(torch.float32), batch.mask_tensor(torch.float32), batch.uid
    )
    flat = rows(batch, FLAT)
    theirs = verl_rows(adv, batch)[flat]
    # three float32 copies of 0.9: the std is 0 but torch's mean is off by one rounding, and
    # rounding / (0 + 1e-6) is a 0.06 advantage for every response of a group with no signal
    assert np.abs(theirs).min() > 1e-2
    groups = pack(batch.scores, batch.uid)
    ours = grpo(torch.as_tensor(groups.values, dtype=torch.float32), torch.as_tensor(groups.mask), eps=1e-6)
    assert ours.dtype == torch.float32
    assert torch.count_nonzero(ours[groups.keys.index(FLAT)]) == 0  # max == min: exactly no signal


def test_grpo_float32_agrees_with_verl_to_float32_precision():
    batch = ragged_batch(seed=1)
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        batch.token_level_rewards(torch.float32), batch.mask_tensor(torch.float32), batch.uid
    )
    grouped = ~rows(batch, SINGLETON) & ~rows(batch, FLAT)
    np.testing.assert_allclose(per_row(grpo, batch)[grouped], verl_rows(adv, batch)[grouped], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("vectorized", [False, True], ids=["loop", "vectorized"])
def test_rloo_matches_verl_and_only_verls_loop_keeps_a_singletons_reward(vectorized):
    batch = ragged_batch()
    fn = core_algos.compute_rloo_vectorized_outcome_advantage if vectorized else core_algos.compute_rloo_outcome_advantage
    adv, _ = fn(batch.token_level_rewards(), batch.mask_tensor(), batch.uid)
    theirs, ours = verl_rows(adv, batch), per_row(rloo, batch)
    solo, flat = rows(batch, SINGLETON), rows(batch, FLAT)
    np.testing.assert_allclose(ours[~solo & ~flat], theirs[~solo & ~flat], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(theirs[flat], 0.0, atol=1e-12)
    assert np.all(ours[solo | flat] == 0.0)
    # verl's two RLOO implementations disagree on a group of one: the loop leaves the raw
    # reward in place, the vectorised one (and rewardlab) give 0 (no leave-one-out baseline).
    expected_solo = 0.0 if vectorized else batch.scores[solo]
    np.testing.assert_allclose(theirs[solo], expected_solo, rtol=1e-12)


def test_reinforce_pp_baseline_matches_verl_token_whitening():
    batch = ragged_batch().in_groups(exclude=[SINGLETON])
    adv, _ = core_algos.compute_reinforce_plus_plus_baseline_outcome_advantage(
        batch.token_level_rewards(), batch.mask_tensor(), batch.uid
    )
    groups = pack(batch.scores, batch.uid)
    ours = reinforce_pp(groups.values, groups.mask, token_mask=groups.pack_tokens(batch.response_mask), eps=0.0, ddof=1)
    # verl divides by sqrt(var + 1e-8), rewardlab by std + eps: equal up to that term
    np.testing.assert_allclose(groups.unpack(ours), verl_rows(adv, batch), rtol=1e-6, atol=1e-9)
    # per response (no token_mask) the statistic differs when lengths differ
    assert not np.allclose(groups.unpack(reinforce_pp(groups.values, groups.mask, eps=0.0)), verl_rows(adv, batch))


def test_reinforce_pp_baseline_singleton_verl_keeps_its_raw_reward_rewardlab_centres_it():
    batch = ragged_batch()
    adv, _ = core_algos.compute_reinforce_plus_plus_baseline_outcome_advantage(
        batch.token_level_rewards(), batch.mask_tensor(), batch.uid
    )
    groups = pack(batch.scores, batch.uid)
    ours = groups.unpack(
        reinforce_pp(groups.values, groups.mask, token_mask=groups.pack_tokens(batch.response_mask), eps=0.0)
    )
    solo, mask = rows(batch, SINGLETON), batch.response_mask
    centred = per_row(_centred, batch)  # r − mean of its group; 0 for the singleton
    # Both whiten centred rewards over tokens; verl's singleton enters with its raw reward
    # (its mean fallback is 0), rewardlab's with r − mean(r) = 0.
    with_raw = np.where(solo, batch.scores, centred)
    np.testing.assert_allclose(verl_rows(adv, batch), whiten_over_tokens(with_raw[:, None] * mask, mask)[:, 0], rtol=1e-9)
    np.testing.assert_allclose(ours, whiten_over_tokens(centred[:, None] * mask, mask)[:, 0], rtol=1e-6, atol=1e-9)


def _centred(values, mask):
    return np.where(mask, values - np.nanmean(np.where(mask, values, np.nan), axis=1, keepdims=True), 0.0)


def test_reinforce_pp_without_baseline_matches_verl_at_gamma_one():
    batch = ragged_batch(seed=2)
    config = AlgoConfig(gamma=1.0)
    adv, returns = core_algos.compute_reinforce_plus_plus_outcome_advantage(
        batch.token_level_rewards(), batch.mask_tensor(), config=config
    )
    groups = pack(batch.scores, batch.uid)
    ours = reinforce_pp(
        groups.values, groups.mask, baseline="none", token_mask=groups.pack_tokens(batch.response_mask), eps=0.0, ddof=1
    )
    np.testing.assert_allclose(groups.unpack(ours), verl_rows(adv, batch), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(returns.numpy(), batch.scores[:, None] * batch.response_mask, rtol=1e-12)


def test_discounted_returns_match_verl_reinforce_pp_returns():
    """γ < 1: verl's REINFORCE++ returns are `gae` with V = 0 and λ = 1 (Σ_l γ^l r_{t+l})."""
    rng = np.random.default_rng(3)
    mask = np.ones((4, TOKENS), dtype=bool)
    mask[0, 5:] = False  # right padding
    mask[1, 2:4] = False  # observation tokens inside the response (multi-turn)
    rewards = np.where(mask, rng.normal(size=mask.shape), 0.0)
    _, returns = core_algos.compute_reinforce_plus_plus_outcome_advantage(
        torch.as_tensor(rewards), torch.as_tensor(mask, dtype=torch.float64), config=AlgoConfig(gamma=0.9)
    )
    ours, _ = gae(rewards, np.zeros_like(rewards), mask, gamma=0.9, lam=1.0)
    np.testing.assert_allclose(ours[mask], returns.numpy()[mask], rtol=1e-12, atol=1e-14)


def test_gae_matches_verl_before_its_whitening():
    rng = np.random.default_rng(4)
    mask = np.ones((5, TOKENS), dtype=bool)
    mask[0, 4:] = False
    mask[2, 1:3] = False  # interleaved observation tokens: verl skips them, so does rewardlab
    mask[3, 6:] = False
    rewards = np.where(mask, rng.normal(size=mask.shape), 0.0)
    values = rng.normal(size=mask.shape)
    adv, returns = core_algos.compute_gae_advantage_return(
        torch.as_tensor(rewards), torch.as_tensor(values), torch.as_tensor(mask, dtype=torch.float64), gamma=0.95, lam=0.9
    )
    ours_adv, ours_returns = gae(rewards, values, mask, gamma=0.95, lam=0.9)
    np.testing.assert_allclose(ours_returns[mask], returns.numpy()[mask], rtol=1e-12, atol=1e-12)
    # verl whitens the GAE advantages over the batch's tokens (a PPO convention; Schulman et
    # al. 2016 define Â without it): verl's advantages are rewardlab's, whitened.
    np.testing.assert_allclose(adv.numpy()[mask], whiten_over_tokens(ours_adv, mask)[mask], rtol=1e-9, atol=1e-12)


def test_gdpo_matches_verl_with_two_reward_components():
    batch = ragged_batch(seed=5).in_groups(exclude=[SINGLETON])
    rng = np.random.default_rng(5)
    correct = (rng.random(len(batch.scores)) < 0.5).astype(np.float64)
    fmt = np.round(rng.random(len(batch.scores)), 2)
    prompt_len = 3
    response_mask = batch.mask_tensor(torch.int64)
    tensors = {
        "prompts": torch.zeros(len(batch.scores), prompt_len, dtype=torch.int64),
        "attention_mask": torch.cat([torch.ones(len(batch.scores), prompt_len, dtype=torch.int64), response_mask], 1),
    }
    config = AlgoConfig(gdpo_reward_keys=["correct", "format"], gdpo_reward_weights=[1.0, 0.5])
    adv, _ = core_algos.compute_gdpo_outcome_advantage(
        batch.token_level_rewards(torch.float32), response_mask.float(), batch.uid,
        config=config, non_tensor_batch={"correct": correct, "format": fmt}, batch=tensors,
    )  # fmt: skip
    groups = pack(batch.scores, batch.uid)
    components = np.stack([pack(correct, batch.uid).values, pack(fmt, batch.uid).values], axis=2)
    ours = gdpo(components, [1.0, 0.5], groups.mask, token_mask=groups.pack_tokens(batch.response_mask), eps=1e-6)
    # verl: float32, per-group (std + 1e-6), then token whitening with sqrt(var + 1e-8);
    # rewardlab: float64, (std + 1e-6) at both stages. Equal up to those terms.
    np.testing.assert_allclose(groups.unpack(ours), verl_rows(adv, batch), rtol=2e-5, atol=2e-6)
    per_response = groups.unpack(gdpo(components, [1.0, 0.5], groups.mask, eps=1e-6))
    assert not np.allclose(per_response, verl_rows(adv, batch), rtol=1e-3)  # lengths differ: not the same statistic
