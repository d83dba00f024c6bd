"""`rewardlab author run` and `rewardlab author check`, in-process."""

from __future__ import annotations

import json

import pytest

from rewardlab.cli.main import main
from rewardlab.sandbox.config import find_bwrap

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")

SMALL = ["--task", "grid/maze", "--steps", "3000", "--seeds", "2"]


def test_run_writes_reward_spec_and_records_and_resumes(tmp_path, capsys):
    out, store = tmp_path / "out", tmp_path / "runs.sqlite"
    args = ["author", "run", *SMALL, "-k", "2", "-r", "1", "--out", str(out), "--store", str(store)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "round 0 candidate 0: scored" in printed and "best: round 0" in printed
    assert (out / "reward.py").read_text().startswith("GAMMA")
    assert 'task = "grid/maze"' in (out / "author.toml").read_text()
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["fate"] for r in records] == ["scored", "scored"]
    assert main(args) == 0  # resumed from the store: same records
    assert [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()] == records


def test_check_reports_probes_and_training(tmp_path, capsys):
    code = tmp_path / "r.py"
    code.write_text("def reward(obs, action, next_obs, info):\n    return 1.0 * info['success'] + 0.5\n")
    assert main(["author", "check", str(code), *SMALL]) == 0
    printed = capsys.readouterr().out
    assert "probe idle: HACKABLE" in printed and "trained (q): optimality" in printed


def test_check_of_hostile_code_exits_1_with_its_kind(tmp_path, capsys):
    code = tmp_path / "r.py"
    code.write_text("import subprocess\ndef reward(obs, action, next_obs, info):\n    return 0.0\n")
    assert main(["author", "check", str(code), *SMALL, "--no-train"]) == 1
    assert "forbidden_import" in capsys.readouterr().out


def test_llm_author_without_endpoint_is_a_usage_error(tmp_path):
    assert main(["author", "run", *SMALL, "--author", "llm", "--out", str(tmp_path)]) == 2


def test_unknown_task_is_an_error(tmp_path):
    assert main(["author", "run", "--task", "office/tea", "--out", str(tmp_path)]) == 1


@pytest.mark.slow
def test_run_with_the_dqn_learner_records_it(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    out = tmp_path / "out"
    args = ["author", "run", "--task", "grid/maze", "--learner", "dqn", "--steps", "400", "--seeds", "1", "-k", "1", "-r", "1",
            "--validation-seeds", "1"]  # fmt: skip
    assert main([*args, "--out", str(out)]) == 0
    assert "dqn optimality" in capsys.readouterr().out
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["fitness"]["learner"] for r in records] == ["dqn"]
    assert records[0]["validation"]["learner"] == "dqn" and len(records[0]["validation"]["per_seed"]) == 1
    assert 'learner = "dqn"' in (out / "author.toml").read_text()


def test_an_unknown_learner_is_a_usage_error(tmp_path, capsys):
    assert main(["author", "run", *SMALL, "--learner", "sac", "--out", str(tmp_path)]) == 2
    assert "learner" in capsys.readouterr().err


def test_a_missed_target_exits_1_and_says_so(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["author", "run", "--task", "grid/maze", "--steps", "30", "--seeds", "1", "-k", "1", "-r", "1", "--target", "0.9"]
    assert main([*args, "--out", str(out)]) == 1
    assert "TARGET MISSED" in capsys.readouterr().out
    assert (out / "reward.py").exists()  # still written, for inspection


def test_run_on_a_gym_task_asks_for_its_goal(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["author", "run", "--task", "gym/FrozenLake-v1", "--steps", "3000", "--seeds", "1", "-k", "1", "-r", "1",
                 "--out", str(out)]) in (0, 1)  # fmt: skip
    assert "without falling into a hole" in (out / "author.toml").read_text()


def test_task_help_lists_the_gym_tasks():
    from typer.testing import CliRunner

    from rewardlab.cli.main import app

    text = CliRunner().invoke(app, ["author", "run", "--help"], terminal_width=200).output
    assert "gym/FrozenLake-v1" in text and "gym/CliffWalking-v1" in text
