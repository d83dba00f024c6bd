"""README.md stays true to the code: its Python blocks run, its spec is the example file, and
its CLI lines work."""

import re
import shlex
from pathlib import Path

import pytest

from rewardlab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


@pytest.mark.parametrize("code", blocks("python"), ids=lambda c: c.splitlines()[0][:40])
def test_python_blocks_run(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})


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


SPEC_DOC = (ROOT / "docs" / "spec.md").read_text()
FOUNDATION_DOCS = ["spec.md", "runner.md"]


@pytest.mark.parametrize(
    ("page", "code"),
    [(page, code) for page in FOUNDATION_DOCS for code in re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), flags=re.DOTALL)],
)
def test_foundation_doc_python_blocks_run(page, code):
    exec(compile(code, f"docs/{page}", "exec"), {})


def test_spec_doc_formula_example_builds():
    from rewardlab.compose import FormulaCombine, build

    toml = re.findall(r"```toml\n(.*?)```", SPEC_DOC, flags=re.DOTALL)[0]
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
