"""A real `trl.GRPOTrainer` run of two steps on a tiny Llama built from a config.

No downloads: the tokenizer is a byte-level BPE trained here with `tokenizers`, the model is
randomly initialised. The reward is a rewardlab spec through `as_trl_reward`; the test checks
that TRL logged the spec's total and its components, and that the policy was updated.
"""

from __future__ import annotations

import pytest
from integration_spec import SPEC, tiny_tokenizer

pytestmark = pytest.mark.slow

# The adapter test spec plus a continuous term, so random completions get different rewards
# (GRPO's advantages are zero when every completion in a group scores the same).
SPEC_WITH_SIMILARITY = SPEC + """
[[reward.components]]
name = "close"
use = "similarity.fuzzy"
weight = 1.0
params = { method = "partial_ratio" }
"""


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_grpo_trainer_runs_with_a_rewardlab_spec(tmp_path, asynchronous):
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from rewardlab.integrations.trl import as_trl_reward

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    before = [p.detach().clone() for p in model.parameters()]
    dataset = Dataset.from_dict({"prompt": ["What is the capital of France?"] * 8, "solution": ["Paris"] * 8})
    reward = as_trl_reward(SPEC_WITH_SIMILARITY, asynchronous=asynchronous)
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=12,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0, learning_rate=1e-2,
    )  # fmt: skip
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()

    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert len(steps) == 2
    for logged in steps:
        assert logged["rewards/qa/mean"] == pytest.approx(logged["reward"])
        assert logged["rewardlab/error_rate"] == 0.0
        assert logged["rewardlab/length/mean"] == 1.0  # 12 tokens never exceed 50 words
        assert 0.0 <= logged["rewardlab/close/mean"] <= 1.0
        # The total TRL saw is the spec's weighted sum of the logged component means.
        weighted = sum(w * logged[f"rewardlab/{n}/mean"] for n, w in [("format", 0.2), ("exact", 1.0), ("length", 0.1), ("close", 1.0)])
        assert logged["reward"] == pytest.approx(weighted, abs=1e-5)
    assert any(h["reward_std"] > 0 for h in steps)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True)), "policy did not change"


def test_grpo_trainer_surfaces_completions_without_a_reference(tmp_path):
    """Half the dataset has no solution; `exact` lets its error pass (on_error = "skip"), so the
    totals look like wrong answers. A real GRPOTrainer run must show it: the warning, and
    `rewardlab/missing_reference_rate` in TRL's logs."""
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from rewardlab.integrations.trl import MissingReferenceWarning, as_trl_reward

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    spec = SPEC.replace('params = { extract = "<answer>', 'on_error = "skip"\nparams = { extract = "<answer>')
    assert spec != SPEC
    # GRPO groups completions by prompt: every prompt is repeated num_generations times, so a
    # group is all with or all without a solution; 4 prompts, 2 of each.
    dataset = Dataset.from_dict({"prompt": [f"Capital number {i}?" for i in range(4)], "solution": ["Paris", None, "Paris", None]})
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0,
    )  # fmt: skip
    trainer = GRPOTrainer(model=LlamaForCausalLM(config), reward_funcs=as_trl_reward(spec), args=args, train_dataset=dataset, processing_class=tokenizer)
    with pytest.warns(MissingReferenceWarning, match="no reference, so 'exact' could not compare"):
        trainer.train()
    rates = [h["rewardlab/missing_reference_rate"] for h in trainer.state.log_history if "rewardlab/missing_reference_rate" in h]
    assert len(rates) == 2 and sum(rates) > 0


def test_grpo_trainer_gives_a_group_reward_whole_groups(tmp_path):
    """labelfree.consensus (a group reward) in a real GRPOTrainer: every call holds whole
    groups of num_generations completions of one prompt, and the reward saw each group whole."""
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from rewardlab.integrations.trl import as_trl_reward

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    spec = {"reward": {"name": "agree", "components": [
        {"name": "consensus", "use": "labelfree.consensus", "params": {"min_group": 4, "min_consensus": 0.0}},
    ]}}  # fmt: skip
    reward = as_trl_reward(spec, num_generations=4)
    seen: list[list[tuple[str, int]]] = []
    original = reward._score

    def recording(samples):
        results = original(samples)
        seen.append([(s.group, r.components["consensus"].info["group_size"]) for s, r in zip(samples, results, strict=True)])
        return results

    reward._score = recording  # type: ignore[method-assign]
    dataset = Dataset.from_dict({"prompt": [f"Capital number {i}?" for i in range(4)]})
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=4, max_completion_length=8,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0,
    )  # fmt: skip
    trainer = GRPOTrainer(model=LlamaForCausalLM(config), reward_funcs=reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    assert len(seen) == 2
    for call in seen:
        assert [g for g, _ in call] == ["0"] * 4 + ["1"] * 4
        assert {size for _, size in call} == {4}
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert all(h["rewardlab/error_rate"] == 0.0 and h["rewardlab/skipped_rate"] == 0.0 for h in logged)


def test_grpo_reward_call_with_a_label_too_deep_for_the_worker_pool_goes_on(tmp_path):
    """TRL's own reward call (`GRPOTrainer._calculate_rewards`) with the pool mode
    (`workers=2`): a row whose solution is nested too deep to pickle is NaN for TRL (the
    adapter's None), the rest are scored, and the trainer's next reward call is scored too."""
    import math

    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from deadlines import nested, within_deadline
    from rewardlab.integrations.trl import as_trl_reward

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    reward = as_trl_reward(SPEC, workers=2, timeout=30)
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0,
    )  # fmt: skip
    dataset = Dataset.from_dict({"prompt": ["What is the capital of France?"] * 4, "solution": ["Paris"] * 4})
    trainer = GRPOTrainer(model=LlamaForCausalLM(config), reward_funcs=reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    good, wrong = "<think>easy</think><answer>Paris</answer>", "<think>hmm</think><answer>Rome</answer>"
    completions = [good, good, wrong, good]
    ids = [tokenizer(c)["input_ids"] for c in completions]
    prompts = ["What is the capital of France?"] * 4
    try:
        solutions = ["Paris", nested(500, "Paris"), "Paris", "Paris"]
        inputs = [{"prompt": p, "solution": s} for p, s in zip(prompts, solutions, strict=True)]
        first = within_deadline(trainer._calculate_rewards, inputs, prompts, completions, ids)[:, 0].tolist()
        assert first[0] == pytest.approx(1.3) and math.isnan(first[1]) and first[2:] == pytest.approx([0.3, 1.3])
        inputs = [{"prompt": p, "solution": "Paris"} for p in prompts]
        second = within_deadline(trainer._calculate_rewards, inputs, prompts, completions, ids)[:, 0].tolist()
        assert second == pytest.approx([1.3, 1.3, 0.3, 1.3])
    finally:
        reward.close()
    assert torch.isfinite(torch.tensor(second)).all()
