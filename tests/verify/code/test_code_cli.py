"""End to end: a TOML spec gates `code.tests` on a format check and scores a JSONL through
`rewardlab score` (in-process CLI, real worker processes, real sandboxes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab.cli.main import main
from rewardlab.sandbox.config import find_bwrap

pytestmark = [
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it"),
    pytest.mark.slow,
]

SPEC = """
[reward]
name = "code-rlvr"

[[reward.components]]
name = "format"
use = "text.regex"
weight = 0.1
params = { pattern = "```python\\n" }

[[reward.components]]
name = "tests"
use = "code.tests"
weight = 1.0
requires = ["format"]
on_error = "zero"
params = { score = "pass_fraction", workers = 1, cpu_seconds = 2.0, wall_seconds = 6.0 }
"""

CASES = {"cases": [{"input": "2 3", "output": "5"}, {"input": "7 -7", "output": "0"}]}
ROWS = [
    ("```python\na, b = map(int, input().split())\nprint(a + b)\n```", CASES),  # right
    ("```python\nprint(5)\n```", CASES),  # half right
    ("a, b = map(int, input().split())\nprint(a + b)", CASES),  # right, but no code block: gated
    ("```python\nimport sys\nsys.exit(0)\n```", {"entry_point": "f", "tests": "def check(c):\n    assert c(1) == 1\n"}),
]


def test_score_command_gates_code_tests_on_format(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    data = tmp_path / "responses.jsonl"
    data.write_text("".join(json.dumps({"response": r, "reference": ref}) + "\n" for r, ref in ROWS))
    out = tmp_path / "scored.jsonl"
    code = main(["score", str(spec), str(data), "-o", str(out), "--workers", "1", "--no-progress"])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(ROWS)
    assert [row["reward"] for row in rows] == pytest.approx([1.1, 0.6, 0.0, 0.1])
    assert [row["reward/tests"] for row in rows] == pytest.approx([1.0, 0.5, None, 0.0])
    info = [row["reward_info"]["tests"] for row in rows]
    assert info[2]["status"] == "skipped"  # no code block: the gate keeps code.tests from running
    assert [t["verdict"] for t in info[1]["tests"]] == ["pass", "wrong_answer"]
    assert info[3]["program"]["exit_code"] == 0 and "ended before the tests ran" in info[3]["load_error"]
    assert all(i.get("isolation", "bubblewrap") == "bubblewrap" for i in info)
    assert all(row["spec_hash"] == rows[0]["spec_hash"] for row in rows)
