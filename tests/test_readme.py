"""README.md stays true to the code: its Python blocks run, its spec is the example file, and
its CLI lines work."""

import shlex

import pytest

from doc_examples import ROOT, block_params, fenced_blocks, python_blocks, run_block
from rewardlab.cli.main import main


def blocks(language: str) -> list[str]:
    return fenced_blocks("README.md", language)


def test_readme_has_python_blocks():
    assert len(python_blocks("README.md")) >= 6


@pytest.mark.parametrize("code", block_params("README.md"))
def test_python_blocks_run(code, monkeypatch):
    run_block(code, "README.md", monkeypatch)


def test_toml_block_is_the_example_spec():
    assert blocks("toml")[0] == (ROOT / "examples" / "quickstart.toml").read_text()


def test_cli_lines_of_the_quick_start_work(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    cli_block = next(b for b in blocks("bash") if "rewardlab check" in b)
    for line in cli_block.splitlines():
        command = line.split("#")[0].strip()
        if not command:
            continue
        argv = shlex.split(command)[1:]
        if "-o" in argv:
            argv[argv.index("-o") + 1] = str(tmp_path / "scored.jsonl")
            argv += ["--no-progress", "--workers", "1"]
        assert main(argv) == 0, command
    assert len((tmp_path / "scored.jsonl").read_text().splitlines()) == 4


FOUNDATION_DOCS = ["spec.md", "runner.md"]


def test_foundation_docs_have_python_blocks():
    assert len(python_blocks("spec.md")) >= 1 and len(python_blocks("runner.md")) >= 2


@pytest.mark.parametrize(
    ("page", "code"),
    [
        pytest.param(page, code, id=f"{page}-block{i}")
        for page in FOUNDATION_DOCS
        for i, code in enumerate(python_blocks(page))
    ],
)
def test_foundation_doc_python_blocks_run(page, code, monkeypatch):
    run_block(code, page, monkeypatch)


def test_spec_doc_formula_example_builds():
    from rewardlab.compose import FormulaCombine, build

    toml = fenced_blocks("spec.md", "toml")[0]
    components = """
[[reward.components]]
name = "correct"
use = "text.exact"
[[reward.components]]
name = "format"
use = "format.tags"
[[reward.components]]
name = "length"
use = "length.tokens"
"""
    assert isinstance(build(toml + components), FormulaCombine)
