"""The server logs each computed batch's reward statistics (`--log`), under the served name:
in process, over a real socket, and from `rewardlab serve --log` in a process of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

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
from rewardlab.compose import build
from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer, free_port

pytest.importorskip("tensorboard")

# The server's keys: the served name first (one server hosts several rewards).
SERVED = {"capital/" + key: value for key, value in EXPECTED.items()}


def test_each_computed_batch_is_logged_under_the_served_name(make_app, tmp_path):
    from rewardlab.runner.reward_log import TensorBoardLogger

    logger = TensorBoardLogger(tmp_path / "tb")
    app = make_app({"capital": build(SPEC)}, None, ServeSettings(workers=0), logger=logger)
    with LiveServer(app) as server, Client(server.url) as client:
        results = client.score("capital", ROWS)
    assert [r.score for r in results] == [2.0, 1.0, None]
    logger.close()
    steps = tensorboard_steps(tmp_path / "tb")
    assert_step({tag: values[0] for tag, values in steps.items()}, SERVED)
    assert histogram_values(steps["capital/reward/hist"][0]) == (2, 1.0, 2.0)


@pytest.mark.slow
def test_a_served_batch_reaches_an_offline_wandb_run(make_app, tmp_path):
    pytest.importorskip("wandb")
    from rewardlab.runner.reward_log import WandbLogger

    logger = WandbLogger("rewardlab-test", dir=tmp_path, mode="offline")
    app = make_app({"capital": build(SPEC)}, None, ServeSettings(workers=0), logger=logger)
    with LiveServer(app) as server, Client(server.url) as client:
        client.score("capital", ROWS)
    logger.close()
    (run,) = offline_runs(tmp_path)
    (row,) = wandb_history(run)
    assert_step(row, SERVED)


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.timeout(120)
def test_rewardlab_serve_log_writes_tensorboard_events(tmp_path):
    spec = tmp_path / "capital.toml"
    spec.write_text(SPEC)
    logdir, port = tmp_path / "tb", free_port()
    argv = ["serve", str(spec), "--port", str(port), "--no-cache", "-w", "0", "--log", f"tensorboard:{logdir}",
            "--log-level", "warning"]  # fmt: skip
    # Python's own SIGINT handler, even when this run inherited SIGINT ignored (a job started
    # in the background by a shell): uvicorn re-raises the signal to whatever handler it found
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"from rewardlab.cli.main import main; sys.exit(main({argv!r}))")
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # wait for the server to answer
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        with Client(url) as client:
            assert [r.score for r in client.score("capital", ROWS)] == [2.0, 1.0, None]
    finally:
        # uvicorn drains, run_server closes the logger, then the signal ends the process as
        # an interrupt (the CLI's exit code 130), not as a success
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    steps = tensorboard_steps(Path(logdir))
    assert_step({tag: values[0] for tag, values in steps.items()}, SERVED)
