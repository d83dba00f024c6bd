"""Test payloads built to expand: each is refused as `invalid_input` before it costs the host
memory (peak growth of this process and of the host's kernel memory under 64 MiB), and nothing
in a pickle runs."""

from __future__ import annotations

import base64
import json
import os
import pickle
import struct
import zlib
from pathlib import Path

import pytest

from host_memory import MIB, peak_growth
from rewardlab.core import Sample, Status
from rewardlab.errors import ScoringError
from rewardlab.verify.code import CodeTests
from rewardlab.verify.code.formats import read_reference
from rewardlab.verify.code.payloads import MAX_CASES, MAX_DECOMPRESSED_BYTES, inflate

PROGRAM = "```python\nprint(input())\n```"


def _zlib_of_pickled_spaces(size: int) -> bytes:
    """zlib(pickle(str of `size` spaces)), produced a MiB at a time (the test never holds the str)."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"\x80\x04\x8d" + struct.pack("<Q", size))]  # PROTO 4, BINUNICODE8
    block = b" " * MIB
    for _ in range(size // MIB):
        parts.append(packer.compress(block))
    parts.append(packer.compress(b"\x94."))  # MEMOIZE, STOP
    parts.append(packer.flush())
    return b"".join(parts)


def _lcb(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(language="python", workers=1)


def _invalid(reward: CodeTests, reference: object) -> str:
    result = reward.score(Sample(response=PROGRAM, reference=reference))
    assert result.status is Status.ERROR and result.error is not None, result
    assert result.error.kind == "invalid_input", result.error
    return result.error.message


def test_zlib_bomb_in_private_tests_is_invalid_input(reward: CodeTests) -> None:
    bomb = _lcb(_zlib_of_pickled_spaces(2 * MAX_DECOMPRESSED_BYTES))
    assert len(bomb) < 2 * MIB  # a small row...
    with peak_growth() as growth:
        message = _invalid(reward, {"public_test_cases": "[]", "private_test_cases": bomb})
    assert "private_test_cases expands to more than" in message
    assert growth.rss < 64 * MIB, f"the host process grew by {growth.rss / MIB:.0f} MiB"
    healthy = reward.score(Sample(response=PROGRAM, reference={"cases": [{"input": "hi\n", "output": "hi\n"}]}))
    assert healthy.score == 1.0, healthy  # the reward (and its sandbox pool) keeps working


def test_decompression_within_the_limit_is_kept_whole() -> None:
    data = b"x" * (3 * MIB + 17)
    assert inflate(zlib.compress(data), "field") == data
    with pytest.raises(ScoringError, match="expands to more than 1048576 bytes"):
        inflate(zlib.compress(data), "field", limit=MIB)
    with pytest.raises(ScoringError, match="truncated zlib stream"):
        inflate(zlib.compress(data)[:-8], "field")


def test_small_row_expanding_into_a_million_tests_is_invalid_input(reward: CodeTests) -> None:
    # A test is an object: `{}` (3 bytes with its comma) would cost ~100 bytes parsed and a case
    # each. (A payload within the byte limit costs the host ~3x its decompressed size to read.)
    flood = "[" + ",".join(["{}"] * 1_000_000) + "]"
    row = _lcb(zlib.compress(pickle.dumps(flood), 9))
    del flood
    assert len(row) < 1 * MIB
    with peak_growth() as growth:
        message = _invalid(reward, {"public_test_cases": "[]", "private_test_cases": row})
    assert f"more than {2 * MAX_CASES + 1} JSON arrays and objects" in message
    assert growth.rss < 64 * MIB, f"the host process grew by {growth.rss / MIB:.0f} MiB"


def test_tests_past_the_case_cap_are_invalid_input() -> None:
    cases = [{"input": "", "output": ""}] * (MAX_CASES + 1)
    with pytest.raises(ScoringError, match=f"more than the {MAX_CASES}") as caught:
        read_reference({"cases": cases})
    assert caught.value.kind == "invalid_input"
    with pytest.raises(ScoringError, match=f"more than the {MAX_CASES}"):
        read_reference({"public_tests": {"input": [""] * (MAX_CASES + 1), "output": [""] * (MAX_CASES + 1)}})


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_deep_json_in_public_test_cases_is_invalid_input(reward: CodeTests, depth: int) -> None:
    # Deep enough for the JSON parser's recursion limit, or past the container budget.
    message = _invalid(reward, {"public_test_cases": "[" * depth + "]" * depth})
    assert "public_test_cases" in message


def test_deep_json_in_a_functional_test_input_is_invalid_input(reward: CodeTests) -> None:
    tests = [{"input": "[" * 5000 + "]" * 5000, "output": "1", "testtype": "functional"}]
    message = _invalid(reward, {"public_test_cases": json.dumps(tests), "metadata": json.dumps({"func_name": "f"})})
    assert "public_test_cases[0].input is nested too deeply" in message


def test_deep_json_reference_string_is_invalid_input(reward: CodeTests) -> None:
    assert "nested too deeply" in _invalid(reward, "[" * 5000 + "]" * 5000)


def test_pickle_that_would_write_a_marker_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"

    class Plant:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    row = {"public_test_cases": "[]", "private_test_cases": _lcb(zlib.compress(pickle.dumps([Plant()])))}
    with pytest.raises(ScoringError, match="a pickle of something other than one string") as caught:
        read_reference(row)
    assert caught.value.kind == "invalid_input" and not marker.exists()
