"""The trainer adapters log reward statistics to TensorBoard and W&B themselves (`logger=`), so
they reach a dashboard without the trainer's own logging."""

from __future__ import annotations

import pickle

import pytest

from reward_logs import (
    ROWS,
    SPEC,
    assert_step,
    histogram_values,
    offline_runs,
    tensorboard_steps,
    wandb_history,
)
from rewardlab.runner.reward_log import TensorBoardLogger, WandbLogger

pytest.importorskip("tensorboard")

PROMPTS = ["Capital of France?"] * 3
COMPLETIONS = [r["response"] for r in ROWS]
SOLUTIONS = [r.get("reference") for r in ROWS]


def _first_step(logdir) -> dict[str, object]:
    return {tag: values[0] for tag, values in tensorboard_steps(logdir).items() if 0 in values}


def test_trl_reward_logs_each_call_to_tensorboard(tmp_path):
    from rewardlab.integrations.trl import as_trl_reward

    f = as_trl_reward(SPEC, logger=f"tensorboard:{tmp_path / 'tb'}")
    assert f(prompts=PROMPTS, completions=COMPLETIONS, solution=SOLUTIONS) == [2.0, 1.0, None]
    assert f(prompts=PROMPTS[:2], completions=COMPLETIONS[:2], solution=SOLUTIONS[:2]) == [2.0, 1.0]
    f.close()  # flushes the event file
    steps = tensorboard_steps(tmp_path / "tb")
    assert_step(_first_step(tmp_path / "tb"))
    assert steps["reward/rows"][1] == 2.0 and steps["reward/error_rate"][1] == 0.0
    assert histogram_values(steps["reward/exact/hist"][0]) == (2, 0.0, 1.0)
    assert pickle.loads(pickle.dumps(f)).log is None  # a copy in another process logs nothing of its own


@pytest.mark.slow
def test_trl_reward_logs_to_an_offline_wandb_run(tmp_path):
    pytest.importorskip("wandb")
    from rewardlab.integrations.trl import as_trl_reward

    logger = WandbLogger("rewardlab-test", dir=tmp_path, mode="offline")
    f = as_trl_reward(SPEC, logger=logger)
    f(prompts=PROMPTS, completions=COMPLETIONS, solution=SOLUTIONS)
    logger.close()
    (run,) = offline_runs(tmp_path)
    (row,) = wandb_history(run)
    assert_step(row)


def test_verl_compute_score_logs_a_step_per_log_every_responses(tmp_path):
    from rewardlab.integrations.verl import make_compute_score

    logger = TensorBoardLogger(tmp_path / "tb")
    compute_score = make_compute_score(SPEC, error_score=0.0, logger=logger, log_every=3)
    scores = [compute_score("capitals", c, s, {"prompt": p})["score"] for p, c, s in zip(PROMPTS, COMPLETIONS, SOLUTIONS, strict=True)]
    assert scores == [2.0, 1.0, 0.0]  # verl gets error_score; the log counts the error instead
    rows = compute_score.batch(["capitals"] * 2, COMPLETIONS[:2], SOLUTIONS[:2])
    compute_score.flush_log()
    logger.close()
    assert [r["score"] for r in rows] == [2.0, 1.0]
    steps = tensorboard_steps(tmp_path / "tb")
    assert_step(_first_step(tmp_path / "tb"))
    assert steps["reward/rows"] == {0: 3.0, 1: 2.0}


def test_verl_compute_score_reads_the_log_from_reward_kwargs(tmp_path):
    from rewardlab.integrations.verl import _cached, compute_score

    spec = tmp_path / "capital.toml"
    spec.write_text(SPEC)
    kwargs = {"spec": str(spec), "error_score": 0.0, "log": f"tensorboard:{tmp_path / 'tb'}", "log_every": 3}
    for p, c, s in zip(PROMPTS, COMPLETIONS, SOLUTIONS, strict=True):
        compute_score("capitals", c, s, {"prompt": p}, **kwargs)
    scorer = _cached(str(spec), 0.0, kwargs["log"], 3)
    assert scorer.log is not None
    scorer.log.logger.flush()
    assert_step(_first_step(tmp_path / "tb"))


def test_openrlhf_reward_func_logs_a_step_per_log_every_samples(tmp_path):
    pytest.importorskip("torch")
    from rewardlab.integrations.openrlhf import make_reward_func

    logger = TensorBoardLogger(tmp_path / "tb")
    reward_func = make_reward_func(SPEC, error_reward=0.0, logger=logger, log_every=3)
    rewards = []
    for p, c, s in zip(PROMPTS, COMPLETIONS, SOLUTIONS, strict=True):  # OpenRLHF sends one sample per call
        rewards.append(float(reward_func([p + c], [p], [s])["rewards"][0]))
    logger.close()
    assert rewards == [2.0, 1.0, 0.0]
    assert_step(_first_step(tmp_path / "tb"))


@pytest.mark.slow
def test_a_real_grpo_run_reaches_tensorboard_without_trl_logging(tmp_path):
    """GRPOTrainer with `report_to=[]`: TRL logs nowhere, and each generation batch's reward
    statistics are in the event files, equal to what TRL computed."""
    import torch
    from datasets import Dataset
    from integration_spec import tiny_tokenizer
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
    dataset = Dataset.from_dict({"prompt": ["Capital of France?"] * 8, "solution": ["Paris"] * 8})
    reward = as_trl_reward(SPEC, logger=f"tensorboard:{tmp_path / 'tb'}")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0,
    )  # fmt: skip
    trainer = GRPOTrainer(model=LlamaForCausalLM(config), reward_funcs=reward, args=args, train_dataset=dataset,
                          processing_class=tokenizer)  # fmt: skip
    trainer.train()
    reward.close()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    steps = tensorboard_steps(tmp_path / "tb")
    assert sorted(steps["reward/rows"]) == [0, 1] and set(steps["reward/rows"].values()) == {4.0}
    for step, history in enumerate(logged):
        assert steps["reward/mean"][step] == pytest.approx(history["reward"], abs=1e-6)
        assert steps["reward/exact/mean"][step] == pytest.approx(history["rewardlab/exact/mean"], abs=1e-6)
        assert steps["reward/error_rate"][step] == history["rewardlab/error_rate"] == 0.0
