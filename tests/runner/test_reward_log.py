"""Reward logging: the statistics of a batch, TensorBoard event files and W&B offline runs read
back with the tools' own readers, and file scoring logging a step per `log_every` rows."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

import rewardlab
from reward_logs import (
    EXPECTED,
    ROWS,
    SPEC,
    assert_step,
    histogram_values,
    offline_runs,
    tensorboard_steps,
    wandb_history,
)
from rewardlab.core import RewardResult
from rewardlab.errors import ConfigError, UsageError
from rewardlab.runner import ScoreFileOptions, score_file
from rewardlab.runner.reward_log import (
    BatchStats,
    RowBuffer,
    TensorBoardLogger,
    WandbLogger,
    open_logger,
)

pytest.importorskip("tensorboard")


def _results() -> list[RewardResult]:
    return rewardlab.score(SPEC, ROWS)


def test_batch_stats_count_errors_and_average_only_ok_scores():
    stats = BatchStats.of(_results())
    assert_step(stats.scalars())
    assert stats.total.scores == [2.0, 1.0] and stats.components["exact"].scores == [1.0, 0.0]
    assert set(stats.histograms()) == {"reward/hist", "reward/exact/hist", "reward/len/hist"}


def test_a_batch_without_ok_scores_logs_no_mean_rather_than_zero():
    stats = BatchStats.of([RewardResult.failure("timeout", "slow"), RewardResult.failure("crash", "boom")])
    scalars = stats.scalars()
    assert "reward/mean" not in scalars and "reward/hist" not in stats.histograms()
    assert scalars["reward/error_rate"] == 1.0
    assert scalars["reward/errors/timeout"] == scalars["reward/errors/crash"] == 1.0


def test_tensorboard_event_files_hold_the_exact_values(tmp_path):
    logger = TensorBoardLogger(tmp_path / "tb")
    logger.log(BatchStats.of(_results()))
    logger.log(BatchStats.of(_results()[:2]))
    logger.close()
    steps = tensorboard_steps(tmp_path / "tb")
    assert_step({tag: values[0] for tag, values in steps.items() if 0 in values})
    assert steps["reward/mean"][1] == 1.5 and steps["reward/error_rate"][1] == 0.0
    assert histogram_values(steps["reward/hist"][0]) == (2, 1.0, 2.0)
    assert histogram_values(steps["reward/exact/hist"][0]) == (2, 0.0, 1.0)


def test_tensorboard_logger_takes_steps_from_several_threads(tmp_path):
    logger = TensorBoardLogger(tmp_path / "tb")
    stats = BatchStats.of(_results())
    threads = [threading.Thread(target=lambda: [logger.log(stats) for _ in range(25)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    logger.close()
    assert sorted(tensorboard_steps(tmp_path / "tb")["reward/rows"]) == list(range(100))


def test_logging_to_a_closed_logger_is_an_error(tmp_path):
    logger = TensorBoardLogger(tmp_path / "tb")
    logger.close()
    with pytest.raises(ConfigError, match="closed"):
        logger.log(BatchStats.of(_results()))


def test_row_buffer_logs_a_step_per_every_rows_and_the_rest_on_flush(tmp_path):
    logger = TensorBoardLogger(tmp_path / "tb")
    buffer = RowBuffer(logger, every=2)
    for result in _results():
        buffer.add([result])
    buffer.flush()
    logger.close()
    steps = tensorboard_steps(tmp_path / "tb")
    assert steps["reward/rows"] == {0: 2.0, 1: 1.0}
    assert steps["reward/error_rate"] == {0: 0.0, 1: 1.0}
    assert 1 not in steps["reward/mean"]  # the last step has no ok score: no mean, not 0


@pytest.mark.parametrize("bad", ["tensorboard", "tensorboard:", "mlflow:runs", "wandb"])
def test_open_logger_refuses_other_forms(bad):
    with pytest.raises(UsageError, match="tensorboard:DIR or wandb:PROJECT"):
        open_logger(bad)


@pytest.mark.parametrize(("target", "package"), [("tensorboard:/tmp/x", "tensorboard"), ("wandb:p", "wandb")])
def test_a_missing_backend_names_the_extra(target, package):
    # A fresh interpreter in which the package cannot be imported (None in sys.modules).
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        "from rewardlab.runner.reward_log import open_logger\n"
        f"open_logger({target!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "DependencyError" in done.stderr and f"needs {package}" in done.stderr
    assert "pip install 'rewardlab[log]'" in done.stderr


def test_score_file_logs_each_log_every_rows_streamed_and_recorded(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS) + "{not json\n")
    for name, extra in (("streamed", {}), ("recorded", {"resume": True, "run_store": tmp_path / "runs.sqlite"})):
        logger = TensorBoardLogger(tmp_path / name)
        options = ScoreFileOptions(workers=0, timeout=None, log_every=3, **extra)  # type: ignore[arg-type]
        summary = score_file(SPEC, data, tmp_path / f"{name}.jsonl", options, logger=logger)
        logger.close()
        assert summary.rows == 4
        steps = tensorboard_steps(tmp_path / name)
        assert_step({tag: values[0] for tag, values in steps.items() if 0 in values})
        # the malformed line: an invalid_input total and no components, so only the total's rate moves
        assert steps["reward/rows"][1] == 1.0 and steps["reward/errors/invalid_input"][1] == 1.0
        assert steps["reward/error_rate"][1] == 1.0 and 1 not in steps.get("reward/exact/error_rate", {})


@pytest.mark.slow
def test_wandb_offline_run_holds_the_exact_values(tmp_path):
    pytest.importorskip("wandb")
    logger = WandbLogger("rewardlab-test", dir=tmp_path, mode="offline")
    logger.log(BatchStats.of(_results()))
    logger.log(BatchStats.of(_results()[:2]))
    logger.close()
    (run,) = offline_runs(tmp_path)
    first, second = wandb_history(run)
    assert first["_step"] == 0 and second["_step"] == 1
    assert_step(first)
    assert second["reward/mean"] == 1.5 and second["reward/error_rate"] == 0.0
    assert first["reward/hist._type"] == "histogram" and sum(first["reward/hist.values"]) == 2
    assert sum(first["reward/exact/hist.values"]) == 2 and set(EXPECTED) <= set(first)


def test_row_buffer_without_every_logs_each_call_as_a_step(tmp_path):
    logger = TensorBoardLogger(tmp_path / "tb")
    buffer = RowBuffer(logger, every=None)
    buffer.add(_results())
    buffer.add(_results()[:1])
    buffer.flush()  # nothing left: no empty step
    logger.close()
    assert tensorboard_steps(tmp_path / "tb")["reward/rows"] == {0: 3.0, 1: 1.0}
    with pytest.raises(ConfigError, match="log_every must be >= 1"):
        RowBuffer(logger, every=0)


@pytest.mark.slow
def test_wandb_logger_logs_into_a_run_it_is_given_and_leaves_it_open(tmp_path):
    wandb = pytest.importorskip("wandb")
    run = wandb.init(project="rewardlab-test", dir=str(tmp_path), mode="offline", reinit="create_new")
    logger = WandbLogger(run=run)
    logger.log(BatchStats.of(_results()))
    logger.close()
    run.log({"train/loss": 0.25})  # the trainer's run goes on
    run.finish()
    ours, trainers = wandb_history(offline_runs(tmp_path)[0])
    assert_step(ours)
    assert ours["rewardlab/step"] == 0 and trainers["train/loss"] == 0.25


def test_a_run_stopped_by_strict_still_logs_the_rows_it_scored(tmp_path):
    from rewardlab.errors import InputError

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps(ROWS[1]) + "\n{not json\n" + json.dumps(ROWS[0]) + "\n")
    logger = TensorBoardLogger(tmp_path / "tb")
    with pytest.raises(InputError, match="--strict"):
        score_file(SPEC, data, tmp_path / "out.jsonl", ScoreFileOptions(workers=0, strict=True, log_every=100), logger=logger)
    logger.close()
    steps = tensorboard_steps(tmp_path / "tb")
    assert steps["reward/rows"] == {0: 2.0} and steps["reward/mean"] == {0: 1.5}


@pytest.mark.slow
def test_wandb_mode_and_dir_set_after_wandb_started_are_honoured(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    first = WandbLogger("rewardlab-test", dir=tmp_path / "first", mode="offline")  # wandb sets itself up here
    first.close()
    monkeypatch.setenv("WANDB_MODE", "offline")  # set later: wandb itself would not read them again
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "later"))
    logger = open_logger("wandb:rewardlab-test")
    logger.log(BatchStats.of(_results()))
    logger.close()
    (run,) = offline_runs(tmp_path / "later")
    (row,) = wandb_history(run)
    assert_step(row)
