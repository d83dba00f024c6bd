"""bench/bench_hf_rm_gpu.py skips cleanly (exit 0, says why) where there is no GPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_hf_rm_gpu.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the script measures instead")
def test_the_gpu_bench_skips_without_a_gpu():
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")}
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "no CUDA device" in done.stdout and "skipping" in done.stdout
