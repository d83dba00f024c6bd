"""Every python snippet in docs/hf_models.md runs (offline: the models are config-built)."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "hf_models.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_doc_has_snippets():
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index):
    exec(compile(SNIPPETS[index], f"{DOC}:snippet{index}", "exec"), {})
