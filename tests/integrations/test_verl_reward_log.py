"""verl 0.9.1's own reward loop with `log` in `reward_kwargs`: the statistics of the rows it
scores reach TensorBoard, through verl's config composition, `compute_score` and
`RewardlabBatchManager`, whatever number `error_score` gives verl for an error row."""

from __future__ import annotations

import pytest
from integration_spec import GOOD, SPEC

from reward_logs import tensorboard_steps

pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
pytest.importorskip("hydra", reason="hydra-core is not installed (dev extra)")
pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow


@pytest.fixture
def run_dir(tmp_path):
    from integration_spec import tiny_tokenizer

    (tmp_path / "reward.toml").write_text(SPEC)  # `exact` fails the total when it cannot compare
    tiny_tokenizer().save_pretrained(tmp_path / "tokenizer")
    return tmp_path


@pytest.mark.parametrize("marker", ["name=compute_score", "RewardlabBatchManager"])
def test_reward_kwargs_log_reaches_tensorboard_from_verls_reward_loop(run_dir, marker):
    from test_verl_reward_loop import reward_loop_worker, rollout_batch

    from rewardlab.integrations.verl import _cached

    logdir = run_dir / "tb"
    extra = [f"+reward.custom_reward_function.reward_kwargs.log=tensorboard:{logdir}",
             "+reward.custom_reward_function.reward_kwargs.log_every=2"]  # fmt: skip
    worker = reward_loop_worker(run_dir, extra, marker=marker)
    data = rollout_batch(worker.input_tokenizer, [GOOD, GOOD], ["Paris", None])
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    assert [o["reward_score"] for o in outputs] == pytest.approx([1.3, 0.0])  # verl gets error_score
    scorer = getattr(worker.reward_manager, "scorer", None) or _cached(str(run_dir / "reward.toml"), 0.0, f"tensorboard:{logdir}", 2)
    assert scorer.log is not None
    scorer.flush_log()
    steps = tensorboard_steps(logdir)
    assert steps["reward/rows"] == {0: 2.0}
    assert steps["reward/mean"][0] == pytest.approx(1.3)  # the error row is not a 0 here
    assert steps["reward/error_rate"][0] == 0.5 and steps["reward/exact/errors/invalid_input"][0] == 1.0
