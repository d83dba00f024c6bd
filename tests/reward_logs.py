"""Reading reward logs back with the tools' own readers, for the tests of every shell that logs
(runner, CLI, server, adapters): TensorBoard's `EventAccumulator` and W&B's `wandb leet inspect`
(the reader of a run's `.wandb` transaction log that wandb ships)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

# A spec whose known batch has an ok total, a wrong answer and a component error:
#   {"response": "Paris", "reference": "paris"}  -> total 2.0  exact 1.0  len 1.0
#   {"response": "Rome", "reference": "paris"}   -> total 1.0  exact 0.0  len 1.0
#   {"response": "x"}                            -> total error/component, exact error/invalid_input, len 1.0
SPEC = """
[reward]
name = "capital"
[[reward.components]]
name = "exact"
use = "text.exact"
[[reward.components]]
name = "len"
use = "length.tokens"
params = { budget = 4 }
"""
ROWS: list[dict[str, Any]] = [
    {"response": "Paris", "reference": "paris"},
    {"response": "Rome", "reference": "paris"},
    {"response": "x"},
]
# What one step over ROWS must log: errors counted, never averaged in as 0 (that would make
# the means 1.0 and 1/3).
EXPECTED = {
    "reward/rows": 3.0,
    "reward/mean": 1.5,
    "reward/error_rate": 1 / 3,
    "reward/errors/component": 1.0,
    "reward/skipped": 0.0,
    "reward/exact/mean": 0.5,
    "reward/exact/error_rate": 1 / 3,
    "reward/exact/errors/invalid_input": 1.0,
    "reward/len/mean": 1.0,
    "reward/len/error_rate": 0.0,
}


def tensorboard_steps(logdir: Path) -> dict[str, dict[int, Any]]:
    """tag -> step -> value (a float, or a histogram's (k, 3) array of left, right, count)."""
    from tensorboard.backend.event_processing.event_accumulator import TENSORS, EventAccumulator
    from tensorboard.util import tensor_util

    accumulator = EventAccumulator(str(logdir), size_guidance={TENSORS: 0})
    accumulator.Reload()
    out: dict[str, dict[int, Any]] = {}
    for tag in accumulator.Tags()["tensors"]:
        for event in accumulator.Tensors(tag):
            value = tensor_util.make_ndarray(event.tensor_proto)
            out.setdefault(tag, {})[event.step] = float(value) if value.shape == () else value
    return out


def histogram_values(buckets: np.ndarray) -> tuple[int, float, float]:
    """(count, lowest left edge, highest right edge) of a TensorBoard histogram."""
    return int(buckets[:, 2].sum()), float(buckets[0, 0]), float(buckets[-1, 1])


def wandb_history(run_dir: Path) -> list[dict[str, Any]]:
    """The history rows of an offline run, read from its `.wandb` file by `wandb leet inspect`."""
    wandb_cli = Path(sys.executable).with_name("wandb")
    done = subprocess.run([str(wandb_cli), "leet", "inspect", "--json", str(run_dir)], capture_output=True, text=True,
                          timeout=120, check=True, env={**os.environ, "WANDB_SILENT": "true"})  # fmt: skip
    rows = []
    for line in done.stdout.splitlines():
        record = json.loads(line)
        if record.get("type") == "history":
            rows.append(record["history"]["item"])
    return rows


def offline_runs(wandb_dir: Path) -> list[Path]:
    """The offline run directories wandb wrote under `wandb_dir` (its `dir=` / WANDB_DIR)."""
    return sorted((wandb_dir / "wandb").glob("offline-run-*"))


def assert_step(values: dict[str, Any], expected: dict[str, float] = EXPECTED) -> None:
    """Every expected key has its value (float32 in TensorBoard: compared to 1e-6)."""
    for key, want in expected.items():
        assert key in values, f"{key} not logged; logged: {sorted(values)}"
        assert abs(float(values[key]) - want) < 1e-6, f"{key}: {values[key]} != {want}"
