"""The ready-made launch files (rewardlab.integrations.recipes) run as they say.

The verl config goes through verl 0.9.1's own hydra composition and `get_custom_reward_fn`; the
OpenRLHF launcher starts a real `rewardlab serve` and hands its URL to the training command,
here a stand-in that posts OpenRLHF's `/get_reward` body (vLLM cannot be installed to run the
real trainer; `test_openrlhf_real.py` drives OpenRLHF's own client against the same route).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from integration_spec import GATED_SPEC, GOOD

from rewardlab.errors import ConfigError
from rewardlab.integrations.recipes import RECIPES, recipe

BIN = Path(sys.executable).parent


def test_recipe_names_the_files_and_refuses_unknown_trainers():
    assert recipe("verl").is_file() and recipe("openrlhf").is_file()
    with pytest.raises(ConfigError, match="openrlhf, verl"):
        recipe("trlx")


def test_module_prints_the_folder():
    out = subprocess.run([sys.executable, "-m", "rewardlab.integrations.recipes"], capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == RECIPES


def _verl_config(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(RECIPES), version_base=None):
        return compose("verl_rewardlab", overrides=overrides)


@pytest.mark.slow
def test_verl_yaml_composes_with_verls_config_and_scores_with_rewardlab(tmp_path):
    pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
    from verl.trainer.ppo.reward import get_custom_reward_fn

    (tmp_path / "reward.toml").write_text(GATED_SPEC)
    config = _verl_config([f"reward.custom_reward_function.reward_kwargs.spec={tmp_path / 'reward.toml'}"])
    assert config.actor_rollout_ref.rollout.n >= 1  # the rest is verl's own ppo_trainer.yaml
    fn = get_custom_reward_fn(config)
    assert fn(data_source="qa", solution_str=GOOD, ground_truth="Paris", extra_info={})["score"] == pytest.approx(1.1)


@pytest.mark.slow
def test_verl_yaml_without_a_spec_stops_at_once():
    pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
    from omegaconf.errors import MissingMandatoryValue

    config = _verl_config([])
    with pytest.raises(MissingMandatoryValue, match="spec"):
        _ = config.reward.custom_reward_function.reward_kwargs.spec


STAND_IN = """
import json, sys, httpx
args = sys.argv[1:]
url = args[args.index("--reward.remote_url") + 1]
prompt = "<|im_start|>user\\nCapital of France?<|im_end|>\\n<|im_start|>assistant\\n"
body = {"query": [prompt + sys.argv[-1] + "<|im_end|>"], "prompts": [prompt], "labels": ["Paris"]}
reply = httpx.post(url, json=body, timeout=30).json()
json.dump({"args": args, "reply": reply}, open("train.json", "w"))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.network
def test_openrlhf_launcher_serves_the_spec_to_the_training_command(tmp_path):
    (tmp_path / "reward.toml").write_text(GATED_SPEC)
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "REWARDLAB_PORT": str(_free_port()),
           "OPENRLHF_TRAIN": f"python {tmp_path / 'stand_in.py'}", "REWARDLAB_CACHE": str(tmp_path / "cache.sqlite")}
    done = subprocess.run(["bash", str(recipe("openrlhf")), "reward.toml", "--data.label_key", "answer", GOOD],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "train.json").read_text())
    assert out["args"][2:4] == ["--data.label_key", "answer"]  # the trainer's own flags pass through
    assert out["reply"]["rewards"] == [pytest.approx(1.1)]
    assert "/openrlhf/" in out["args"][1]  # the token in the path: OpenRLHF sends no header


def test_openrlhf_launcher_refuses_a_missing_spec(tmp_path):
    done = subprocess.run(["bash", str(recipe("openrlhf")), "missing.toml"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "SPEC.toml must exist" in done.stderr
