"""A group reward behind OpenRLHF's `/get_reward`: refused at start-up when the server is set up
for OpenRLHF, a clear per-request error when it is not; the batch endpoint keeps serving it.

OpenRLHF's requests never hold whole groups (0.11.2 posts each sample alone), so a group reward
there would answer every row as an error or vote on a part of its group.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rewardlab.cli.main import main
from rewardlab.compose import build
from rewardlab.errors import GroupSplitError
from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer, free_port
from ._rewards import EXACT_SPEC

VOTE_SPEC = """
[reward]
name = "ttrl"
[[reward.components]]
name = "vote"
use = "labelfree.majority_vote"
params = { min_group = 3, answer_key = "ans" }
"""
# One request of OpenRLHF: a query (prompt + response) per sample, the prompt and the label.
OPENRLHF_BODY = {"query": ["2+2? 4", "3+3? 7"], "prompts": ["2+2? ", "3+3? "], "labels": ["4", "6"]}
GROUP = [{"group": "g", "response": a, "meta": {"ans": a}} for a in ("1", "1", "1", "2")]


def _specs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "vote.toml").write_text(VOTE_SPEC)
    (tmp_path / "exact.toml").write_text(EXACT_SPEC)
    return tmp_path / "vote.toml", tmp_path / "exact.toml"


def test_group_reward_first_with_an_error_reward_does_not_start(make_app):
    with pytest.raises(GroupSplitError, match=r"'ttrl' is a group reward .*--openrlhf-reward NAME.*/v1/rewards/ttrl:score"):
        make_app({"ttrl": build(VOTE_SPEC), "exact": build(EXACT_SPEC)}, None, ServeSettings(workers=0, openrlhf_error_reward=0.0))


def test_group_reward_named_for_get_reward_does_not_start(make_app):
    settings = ServeSettings(workers=0, openrlhf_reward="ttrl")
    with pytest.raises(GroupSplitError, match="'ttrl' is a group reward"):
        make_app({"exact": build(EXACT_SPEC), "ttrl": build(VOTE_SPEC)}, None, settings)


def test_group_reward_beside_a_per_sample_get_reward_serves_both_over_a_socket(make_app):
    settings = ServeSettings(workers=0, openrlhf_error_reward=-1.0, openrlhf_reward="exact")
    app = make_app({"ttrl": build(VOTE_SPEC), "exact": build(EXACT_SPEC)}, None, settings)
    with LiveServer(app) as server, Client(server.url) as client:
        reply = httpx.post(f"{server.url}/get_reward", json=OPENRLHF_BODY, timeout=30)
        votes = client.score("ttrl", GROUP, group_keys={"group"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["rewards"] == [1.0, 0.0]
    assert [r.score for r in votes] == [1.0, 1.0, 1.0, 0.0]


def test_get_reward_of_a_batch_only_group_server_is_a_clear_error_over_a_socket(make_app):
    # Not set up for OpenRLHF: the server starts (the batch endpoint is right for a group
    # reward), and /get_reward refuses each request, saying why, instead of answering errors.
    app = make_app({"ttrl": build(VOTE_SPEC)}, None, ServeSettings(workers=0))
    with LiveServer(app) as server, Client(server.url) as client:
        reply = httpx.post(f"{server.url}/get_reward", json=OPENRLHF_BODY, timeout=30)
        votes = client.score("ttrl", GROUP, group_keys={"group"})
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert error["code"] == "openrlhf_group_reward"
    assert "'ttrl' is a group reward" in error["message"] and "--openrlhf-reward NAME" in error["message"]
    assert [r.score for r in votes] == [1.0, 1.0, 1.0, 0.0]


@pytest.mark.timeout(60)  # without the refusal, main() would serve until killed
def test_cli_serve_refuses_a_group_reward_for_openrlhf_with_exit_1(tmp_path, capsys):
    vote, exact = _specs(tmp_path)
    code = main(["serve", str(vote), str(exact), "--openrlhf-error-reward", "0", "--no-cache", "--port", str(free_port())])
    assert code == 1
    err = capsys.readouterr().err
    assert "'ttrl' is a group reward" in err and "--openrlhf-reward" in err


@pytest.mark.network
def test_rewardlab_serve_process_exits_before_listening(tmp_path):
    """`rewardlab serve` in a process of its own, as a trainer's launcher runs it: exit 1, the
    reason on stderr, and nothing ever listens on the port."""
    vote, _ = _specs(tmp_path)
    port = free_port()
    argv = ["serve", str(vote), "--port", str(port), "--no-cache", "--openrlhf-reward", "ttrl"]
    code = f"import sys; from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "'ttrl' is a group reward" in done.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
