"""rewardlab's estimators against TRL's own advantage code (`GRPOTrainer`, `RLOOTrainer`).

TRL computes advantages inline in `_generate_and_score_completions`; there is no function to
call. So each test builds a real trainer (tiny random Llama, tokenizer trained in
test_credit_trl_step.py, no downloads) and runs that method on a batch of 4 prompts x 4
generations. The reward functions hand TRL chosen rewards for the completions it generated,
including `None` (TRL: unscorable, left out of the baselines), so the batch holds a normal
group, an all-equal group, a group with 2 scorable completions and one with a single one.
The advantages TRL returns are compared with rewardlab's on the same rewards.
"""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.credit import dr_grpo, gdpo, grpo, rloo

pytest.importorskip("trl")
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

G = 4
NAN = float("nan")
# (prompts, G, reward functions); NaN = the reward function returned None
REWARDS = np.array(
    [
        [[1.0, 0.2], [0.0, 0.9], [0.5, 0.4], [0.25, 0.0]],  # an ordinary group
        [[1.0, 0.3], [1.0, 0.3], [1.0, 0.3], [1.0, 0.3]],  # all equal: no signal
        [[0.0, 1.0], [NAN, NAN], [1.0, 0.5], [NAN, NAN]],  # 2 scorable completions
        [[NAN, NAN], [0.7, 0.1], [NAN, NAN], [NAN, NAN]],  # a group of one
    ]
)
WEIGHTS = [1.0, 0.5]


def reward_function(column: int):
    def reward(completions, **kwargs):
        assert len(completions) == REWARDS.shape[0] * G
        return [None if np.isnan(x) else float(x) for x in REWARDS[:, :, column].reshape(-1)]

    reward.__name__ = f"preset_{column}"
    return reward


def trainer(tmp_path, trainer_cls, config_cls, **config):
    from datasets import Dataset
    from test_credit_trl_step import tiny_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
            pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
        )
    )  # fmt: skip
    args = config_cls(
        output_dir=str(tmp_path), per_device_train_batch_size=REWARDS.shape[0] * G, num_generations=G,
        max_completion_length=4, report_to=[], use_cpu=True, save_strategy="no", seed=0, reward_weights=WEIGHTS, **config,
    )  # fmt: skip
    prompts = [f"Count the letters in banana {i}." for i in range(REWARDS.shape[0])]
    out = trainer_cls(
        model=model, reward_funcs=[reward_function(0), reward_function(1)], args=args,
        train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=tokenizer,
    )  # fmt: skip
    out.model.train()
    return out, [{"prompt": p} for p in prompts for _ in range(G)]


def trl_advantages(tmp_path, trainer_cls, config_cls, **config) -> np.ndarray:
    t, inputs = trainer(tmp_path, trainer_cls, config_cls, **config)
    advantages = t._generate_and_score_completions(inputs)["advantages"]
    assert advantages.dtype == torch.float32
    return advantages.detach().double().numpy().reshape(-1, G)


def weighted_sum() -> tuple[np.ndarray, np.ndarray]:
    scorable = ~np.isnan(REWARDS).all(axis=2)
    return np.nansum(REWARDS * np.array(WEIGHTS), axis=2), scorable


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_grpo_matches_trl_grpo_trainer(tmp_path, scale):
    from trl import GRPOConfig, GRPOTrainer

    theirs = trl_advantages(tmp_path, GRPOTrainer, GRPOConfig, scale_rewards=scale)
    total, scorable = weighted_sum()
    ours = dr_grpo(total, scorable) if scale == "none" else grpo(total, scorable, scale=scale, eps=1e-4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)  # TRL works in float32
    assert np.all(theirs[~scorable] == 0.0) and np.all(ours[~scorable] == 0.0)
    assert np.all(theirs[1] == 0.0) and np.all(ours[1] == 0.0)  # all-equal group
    assert np.all(theirs[3] == 0.0) and np.all(ours[3] == 0.0)  # group of one
    assert np.count_nonzero(theirs[0]) == G and np.count_nonzero(theirs[2]) == 2  # the signal is there


def test_gdpo_matches_trl_normalize_then_sum(tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    theirs = trl_advantages(tmp_path, GRPOTrainer, GRPOConfig, multi_objective_aggregation="normalize_then_sum")
    _, scorable = weighted_sum()
    ours = gdpo(np.nan_to_num(REWARDS), WEIGHTS, scorable, eps=1e-4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    summed_first = grpo(*weighted_sum(), scale="batch", eps=1e-4)
    assert not np.allclose(summed_first, theirs, rtol=1e-3)  # decoupling changes the numbers


def test_rloo_matches_trl_rloo_trainer(tmp_path):
    from trl import RLOOConfig, RLOOTrainer

    theirs = trl_advantages(tmp_path, RLOOTrainer, RLOOConfig, beta=0.0)
    total, scorable = weighted_sum()
    np.testing.assert_allclose(rloo(total, scorable), theirs, rtol=1e-6, atol=1e-6)
    assert np.all(theirs[3] == 0.0)  # TRL: a single scorable completion's 0/0 baseline -> 0
