"""`rewardlab init --examples` writes the README's example files, byte for byte."""

from __future__ import annotations

from pathlib import Path

from rewardlab.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_init_examples_writes_the_readmes_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--examples"]) == 0
    for name in ("quickstart.toml", "quickstart.jsonl"):
        assert (tmp_path / "examples" / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
    assert main(["score", "examples/quickstart.toml", "examples/quickstart.jsonl", "-o", "out.jsonl", "-w", "0"]) == 0


def test_init_examples_does_not_overwrite_without_force(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "quickstart.toml").write_text("mine")
    assert main(["init", "--examples"]) == 1
    assert "exists already" in capsys.readouterr().err
    assert (tmp_path / "examples" / "quickstart.toml").read_text() == "mine"
    assert main(["init", "--examples", "--force"]) == 0
    assert (tmp_path / "examples" / "quickstart.toml").read_text() != "mine"
