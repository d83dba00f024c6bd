"""Finding the program in a response: (response, pick, expected code, expected source) table."""

from __future__ import annotations

import pytest

from rewardlab.verify.code import extract_code

FENCE = "```"
CASES = [
    ("print(1)", "last", "print(1)", "whole response"),
    (f"Sure:\n{FENCE}python\nprint(1)\n{FENCE}\n", "last", "print(1)\n", "block 1 of 1"),
    (f"{FENCE}py\na = 1\n{FENCE}\ntext\n{FENCE}python3\nb = 2\n{FENCE}", "last", "b = 2\n", "block 2 of 2"),
    (f"{FENCE}py\na = 1\n{FENCE}\ntext\n{FENCE}python3\nb = 2\n{FENCE}", "first", "a = 1\n", "block 1 of 2"),
    (f"{FENCE}py\na = 1\n{FENCE}\n{FENCE}\nb = 2\n{FENCE}", "all", "a = 1\n\nb = 2\n", "2 blocks joined"),
    (f"{FENCE}bash\nrm -rf /\n{FENCE}\n{FENCE}python\nx = 1\n{FENCE}", "last", "x = 1\n", "block 1 of 1"),
    (f"{FENCE}text\nonly prose\n{FENCE}", "last", f"{FENCE}text\nonly prose\n{FENCE}", "whole response"),
    ("~~~python\nx = 3\n~~~", "last", "x = 3\n", "block 1 of 1"),
    (f"{FENCE}python\nx = 1\n{FENCE}", "none", f"{FENCE}python\nx = 1\n{FENCE}", "whole response"),
]


@pytest.mark.parametrize(("response", "pick", "code", "source"), CASES)
def test_extract_code(response: str, pick: str, code: str, source: str) -> None:
    got = extract_code(response, pick=pick)  # type: ignore[arg-type]
    assert (got.code, got.source) == (code, source)
