"""verl 0.9.1's own reward path, driven by the command in docs/integrations.md.

The documented `main_ppo` overrides go through verl's config composition (hydra, its
`ppo_trainer.yaml`), `get_custom_reward_fn`, `load_reward_manager` and `RewardLoopWorker` on a
`DataProto` shaped as verl's rollout builds it (left-padded prompts, right-padded responses, an
attention mask over both, `reward_model.ground_truth` per row). What comes out must be
rewardlab's numbers, and verl's validation metrics over them must be finite.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from integration_spec import GATED_SPEC, GOOD, SPEC, UNFORMATTED, WRONG, tiny_tokenizer

from doc_examples import fenced_blocks
from rewardlab import Sample, build
from rewardlab.errors import RewardLabError

verl = pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
pytest.importorskip("hydra", reason="hydra-core is not installed (dev extra)")
pytestmark = pytest.mark.slow

PROMPT = "What is the capital of France?"
RESPONSES = [GOOD, WRONG, UNFORMATTED]


def documented_overrides(workdir: Path, marker: str = "name=compute_score") -> list[str]:
    """The overrides of the documented `main_ppo` command containing `marker`, as bash expands
    them in `workdir` (`python` there is this interpreter, as it is in the user's virtualenv)."""
    blocks = fenced_blocks("integrations.md", "bash")
    block = next(b for b in blocks if "verl.trainer.main_ppo" in b and marker in b)
    # The command's words after `-m verl.trainer.main_ppo`, printed one per line by bash itself.
    script = block.replace("python -m verl.trainer.main_ppo", "printf '%s\\n'", 1)
    shim = f"python() {{ {shlex.quote(sys.executable)} \"$@\"; }}\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(["bash", "-c", shim + script], cwd=workdir, capture_output=True, text=True, env=env, check=True)
    return [line for line in out.stdout.splitlines() if line]


def verl_config(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose("ppo_trainer", overrides=overrides)


def rollout_batch(tokenizer, responses: list[str], ground_truths: list[object]):
    """A `DataProto` the way verl's agent loop hands it to the reward loop."""
    import numpy as np
    import torch

    n = len(responses)
    eos = tokenizer.eos_token  # a generation ends with EOS; verl decodes with skip_special_tokens=True
    p = tokenizer([PROMPT] * n, padding="max_length", max_length=24, return_tensors="pt", padding_side="left")
    r = tokenizer([x + eos for x in responses], padding="max_length", max_length=48, return_tensors="pt", padding_side="right")
    assert p["attention_mask"].sum(1).max() < 24 and r["attention_mask"].sum(1).max() < 48
    return verl.DataProto.from_dict(
        tensors={
            "prompts": p["input_ids"],
            "responses": r["input_ids"],
            "attention_mask": torch.cat([p["attention_mask"], r["attention_mask"]], dim=1),
        },
        non_tensors={
            "data_source": np.array(["qa"] * n, dtype=object),
            "reward_model": np.array([{"ground_truth": g} for g in ground_truths], dtype=object),
            "extra_info": np.array([{"index": i} for i in range(n)], dtype=object),
            "uid": np.array([f"u{i}" for i in range(n)], dtype=object),
        },
    )


@pytest.fixture
def run_dir(tmp_path):
    (tmp_path / "reward.toml").write_text(GATED_SPEC)
    tiny_tokenizer().save_pretrained(tmp_path / "tokenizer")
    return tmp_path


def reward_loop_worker(run_dir: Path, extra: list[str] = (), marker: str = "name=compute_score"):
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    overrides = [*documented_overrides(run_dir, marker), f"actor_rollout_ref.model.path={run_dir / 'tokenizer'}", *extra]
    return RewardLoopWorker(verl_config(overrides))


def test_documented_keys_reach_verls_loader(run_dir):
    from verl.trainer.ppo.reward import get_custom_reward_fn

    config = verl_config(documented_overrides(run_dir))
    fn = get_custom_reward_fn(config)
    assert fn is not None, "verl ignores the documented keys and would run its default scorer"
    out = fn(data_source="qa", solution_str=GOOD, ground_truth="Paris", extra_info={})
    assert out["score"] == pytest.approx(1.1)  # format 0.1 + correct 1.0 + length penalty 0.0


def test_reward_loop_worker_scores_with_rewardlab(run_dir):
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    worker = reward_loop_worker(run_dir)
    assert isinstance(worker.reward_manager, NaiveRewardManager)
    data = rollout_batch(worker.input_tokenizer, RESPONSES, ["Paris"] * 3)
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    reward = build(GATED_SPEC)
    expected = [reward.score(Sample(prompt="", response=r, reference="Paris")).score for r in RESPONSES]
    assert [o["reward_score"] for o in outputs] == pytest.approx(expected)
    assert expected == pytest.approx([1.1, 0.1, 0.0])  # verl's default scorer knows no "qa": it would raise
    rm_scores = NaiveRewardManager.assemble_rm_scores(data, [o["reward_score"] for o in outputs])
    assert rm_scores.sum(dim=1).tolist() == pytest.approx(expected)


def test_gated_component_is_finite_in_verls_validation_metrics(run_dir):
    import numpy as np
    from verl.trainer.ppo.metric_utils import process_validation_metrics

    worker = reward_loop_worker(run_dir)
    data = rollout_batch(worker.input_tokenizer, RESPONSES, ["Paris"] * 3)
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    infos = [o["reward_extra_info"] for o in outputs]
    # RewardLoopManager.compute_rm_score stacks the first row's keys across rows.
    columns = {key: np.array([info[key] for info in infos]).tolist() for key in infos[0]}
    assert columns["correct"] == [1.0, 0.0, 0.0] and columns["correct/scored"] == [1.0, 1.0, 0.0]
    metrics = process_validation_metrics(["qa"] * 3, ["u0", "u1", "u2"], columns)
    values = [v for per_var in metrics["qa"].values() for v in per_var.values()]
    assert values and all(math.isfinite(v) for v in values)


def test_error_score_from_reward_kwargs_is_counted(run_dir):
    (run_dir / "reward.toml").write_text(SPEC)  # `exact` fails the total when it cannot compare
    worker = reward_loop_worker(run_dir)
    data = rollout_batch(worker.input_tokenizer, [GOOD, GOOD], ["Paris", None])
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    # the documented error_score=0.0 arrives through reward_kwargs; the row says it is an error
    assert [o["reward_score"] for o in outputs] == pytest.approx([1.3, 0.0])
    assert [o["reward_extra_info"]["rewardlab_error"] for o in outputs] == [0.0, 1.0]
    assert [o["reward_extra_info"]["exact/scored"] for o in outputs] == [1.0, 0.0]


def test_batch_function_named_in_the_reward_loop_says_what_to_use(run_dir):
    worker = reward_loop_worker(run_dir, ["reward.custom_reward_function.name=compute_score_batch"])
    data = rollout_batch(worker.input_tokenizer, [GOOD], ["Paris"])
    with pytest.raises(RewardLabError, match=r"custom_reward_function\.name=compute_score"):
        worker.loop.run_until_complete(worker.compute_score_batch(data))


def test_documented_batch_manager_scores_a_chunk_in_one_call(run_dir, monkeypatch):
    from rewardlab.integrations.verl_batch import RewardlabBatchManager

    worker = reward_loop_worker(run_dir, marker="RewardlabBatchManager")
    assert isinstance(worker.reward_manager, RewardlabBatchManager)
    calls = []
    real = worker.reward_manager.scorer.batch

    def counted(*columns):  # a spy: the real scorer still scores
        calls.append(len(columns[1]))
        return real(*columns)

    monkeypatch.setattr(worker.reward_manager.scorer, "batch", counted)
    data = rollout_batch(worker.input_tokenizer, RESPONSES * 2, ["Paris"] * 6)
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    assert calls == [6]  # the whole chunk in one score_batch
    assert [o["reward_score"] for o in outputs] == pytest.approx([1.1, 0.1, 0.0] * 2)
    naive = reward_loop_worker(run_dir)
    rows = naive.loop.run_until_complete(naive.compute_score_batch(data))
    assert [o["reward_extra_info"] for o in outputs] == [o["reward_extra_info"] for o in rows]  # same dicts as compute_score


def test_the_pinned_verl_is_the_one_tested():
    from importlib.metadata import version

    assert version("verl") == "0.9.1"  # the Makefile pins it; these paths are 0.9.1's
