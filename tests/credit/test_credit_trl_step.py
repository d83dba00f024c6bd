"""The documented TRL hook in a real `trl.GRPOTrainer` run: two steps on a tiny random Llama.

No downloads: the tokenizer is a byte-level BPE trained here, the model is randomly initialised.
The `RewardlabGRPOTrainer` class is taken verbatim from docs/credit.md; the test checks that the
advantages TRL trained on are rewardlab's RLOO of TRL's own rewards (unscorable rows masked to
0), and that the policy changed.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from doc_examples import python_blocks, run_block
from rewardlab.credit import rloo

pytestmark = pytest.mark.slow


def documented_trl_hook(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The module docs/credit.md's `RewardlabGRPOTrainer` block defines, run as written."""
    code = next(b for b in python_blocks("credit.md") if "class RewardlabGRPOTrainer" in b)
    return run_block(code, "credit.md", monkeypatch)


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<pad>", "<eos>", "<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(["Count the letters in banana. The answer is 3."] * 20, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def letter_reward(completions, **kwargs):
    """Varied scores, and None (unscorable) for some completions to exercise the mask."""
    return [None if len(c) % 4 == 0 else float(c.count("a") + len(c) % 3) for c in completions]


def test_documented_hook_trains_on_rewardlab_advantages(tmp_path, monkeypatch):
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig

    hook = documented_trl_hook(monkeypatch)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    class Recording(hook.RewardlabGRPOTrainer):
        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            rewards = self._rewards_per_func.detach().cpu().double().numpy()
            seen.append((rewards, output["advantages"].detach().cpu().double().numpy()))
            return output

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    before = [p.detach().clone() for p in model.parameters()]
    dataset = Dataset.from_dict({"prompt": ["Count the letters in banana."] * 8})
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=12,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0, learning_rate=1e-2,
    )  # fmt: skip
    trainer = Recording(model=model, reward_funcs=letter_reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()

    assert seen, "the hook never ran"
    for rewards, advantages in seen:
        scorable = ~np.isnan(rewards).all(axis=1)
        expected = rloo(np.nan_to_num(rewards[:, 0]).reshape(-1, 4), scorable.reshape(-1, 4)).reshape(-1)
        np.testing.assert_allclose(advantages, expected[: len(advantages)], rtol=1e-6, atol=1e-6)
        assert np.all(advantages[~scorable[: len(advantages)]] == 0.0)
    assert any(np.any(adv != 0) for _, adv in seen), "no step carried a learning signal"
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True)), "policy did not change"
