"""docs/integrations.md stays true: its Python blocks run, in order, in one namespace."""

from __future__ import annotations

from pathlib import Path

from doc_examples import ROOT, fenced_blocks, run_blocks_in_order

PAGE = "integrations.md"


def test_python_blocks_run_in_order(monkeypatch):
    # from the project root: the README snippet names examples/quickstart.toml
    assert run_blocks_in_order(PAGE, monkeypatch) >= 9


def test_cli_block_runs_as_written(tmp_path):
    """The `rewardlab score` block, run by bash with the installed entry point, in a directory
    that has the repository's examples."""
    import json
    import os
    import subprocess
    import sys

    block = next(b for b in fenced_blocks(PAGE, "bash") if b.startswith("rewardlab score"))
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(["bash", "-c", block], cwd=tmp_path, env=env, check=True, timeout=300, capture_output=True)
    rows = [json.loads(line) for line in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert rows and all(r["reward_status"] == "ok" for r in rows)
