"""`rewardlab score --log tensorboard:DIR | wandb:PROJECT`: reward statistics per step, read back
with TensorBoard's and W&B's own readers."""

from __future__ import annotations

import json

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
from rewardlab.cli.main import main

pytest.importorskip("tensorboard")


@pytest.fixture
def files(tmp_path):
    spec = tmp_path / "capital.toml"
    spec.write_text(SPEC)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS * 2))
    return spec, data


def test_score_logs_to_tensorboard_a_step_per_log_every_rows(files, tmp_path):
    spec, data = files
    logdir = tmp_path / "tb"
    argv = ["score", str(spec), str(data), "-o", str(tmp_path / "out.jsonl"), "-w", "0", "--no-progress",
            "--log", f"tensorboard:{logdir}", "--log-every", "3"]  # fmt: skip
    assert main(argv) == 0
    steps = tensorboard_steps(logdir)
    assert sorted(steps["reward/rows"]) == [0, 1]
    for step in (0, 1):
        assert_step({tag: values[step] for tag, values in steps.items()})
        assert histogram_values(steps["reward/exact/hist"][step]) == (2, 0.0, 1.0)


@pytest.mark.slow
def test_score_logs_to_an_offline_wandb_run_under_wandb_mode(files, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    spec, data = files
    monkeypatch.setenv("WANDB_MODE", "offline")  # what a user sets; never online in tests
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    argv = ["score", str(spec), str(data), "-o", str(tmp_path / "out.jsonl"), "-w", "0", "--no-progress",
            "--log", "wandb:rewardlab-test", "--log-every", "3"]  # fmt: skip
    assert main(argv) == 0
    (run,) = offline_runs(tmp_path)
    history = wandb_history(run)
    assert [row["_step"] for row in history] == [0, 1]
    for row in history:
        assert_step(row)


@pytest.mark.parametrize("value", ["tb:logs", "wandb", "tensorboard:"])
def test_score_with_an_unknown_log_target_is_a_usage_error(files, tmp_path, value, capsys):
    spec, data = files
    out = tmp_path / "out.jsonl"
    assert main(["score", str(spec), str(data), "-o", str(out), "--no-progress", "--log", value]) == 2
    assert "tensorboard:DIR or wandb:PROJECT" in capsys.readouterr().err
    assert not out.exists()


def test_score_log_every_below_one_is_a_usage_error(files, tmp_path):
    spec, data = files
    argv = ["score", str(spec), str(data), "-o", str(tmp_path / "o.jsonl"), "--log-every", "0", "--no-progress"]
    assert main(argv) == 2


def test_the_logged_means_of_a_real_file_are_the_run_summary(shared_data, tmp_path):
    """The maths verifier on the real best-of-8 file: each logged step's error counts and means
    add up to what the run summary says about the whole file."""
    pytest.importorskip("sympy")
    spec = tmp_path / "math.toml"
    spec.write_text('[reward]\nname = "math"\n[[reward.components]]\nname = "correct"\nuse = "math.answer"\n')
    logdir, summary_json = tmp_path / "tb", tmp_path / "summary.json"
    argv = ["score", str(spec), str(shared_data / "qwen25-math-cot-100.jsonl"), "--response-field", "code",
            "--reference-field", "gt", "--explode", "code,score,pred_score", "--limit", "12", "-w", "2",
            "-o", str(tmp_path / "out.jsonl"), "--no-progress", "--summary-json", str(summary_json),
            "--log", f"tensorboard:{logdir}", "--log-every", "32"]  # fmt: skip
    assert main(argv) == 0
    summary = json.loads(summary_json.read_text())
    steps = tensorboard_steps(logdir)
    rows = steps["reward/rows"]
    assert sum(rows.values()) == summary["rows"] == 96 and len(rows) == 3
    ok = {step: histogram_values(steps["reward/hist"][step])[0] for step in steps["reward/hist"]}
    assert sum(ok.values()) == summary["total"]["ok"]
    total = sum(steps["reward/mean"][step] * ok[step] for step in ok)
    assert total / sum(ok.values()) == pytest.approx(summary["total"]["mean"], abs=1e-6)
    for kind, count in summary["total"]["errors"].items():
        assert sum(steps[f"reward/errors/{kind}"].values()) == count
