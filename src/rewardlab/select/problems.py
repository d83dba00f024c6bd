"""Problems read from a file for search (`rewardlab select search`), and the rows of the lines
that could not be read. Importing this module imports no numpy: the CLI reads `load_problems`'
options at start-up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rewardlab.errors import InputError
from rewardlab.select.generate import Problem

__all__ = ["load_problems", "unreadable_rows"]


def load_problems(
    path: str | Path,
    *,
    prompt: str = "question",
    reference: str | None = "gt",
    on_error: Callable[[InputError], None] | None = None,
) -> list[Problem]:
    """Problems from a JSONL/Parquet file. Each problem's `meta["line"]` is its line in the file.
    Rows are read like every other data file (`evaluate.datasets.read_parsed`).

    Args:
        path: the JSONL/Parquet file, one row per problem.
        prompt: column of the problem text.
        reference: column of the gold answer (None, or absent from a row: no gold answer for it).
        on_error: takes each row that cannot be read as a problem, which is then left out.

    Raises:
        InputError: naming the file and line of a row without a text prompt (or that is not a
            JSON object); with `on_error`, such a row is handed to it and left out instead;
            and naming the file when no row is left.
    """
    from rewardlab.evaluate.datasets import read_parsed

    def problem(line: int, row: dict[str, Any]) -> Problem:
        text = row.get(prompt)
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"column {prompt!r} must hold the problem text, got {text!r}", source=str(path), line=line)
        gold = row.get(reference) if reference else None
        return Problem(prompt=text, reference=None if gold is None else str(gold), id=str(row.get("id", line)), meta={"line": line})

    return read_parsed(path, problem, on_error=on_error)


def unreadable_rows(errors: Sequence[InputError], method: str) -> list[dict[str, Any]]:
    """One error row per line `load_problems(..., on_error=...)` could not read."""
    return [{"problem": None, "line": exc.line, "method": method, "answer": None, "error": exc.reason} for exc in errors]
