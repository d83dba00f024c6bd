"""Runs every ```python block of one docs page, in order, in one module, from the current
directory, as a reader of the page would: `python docs_page_runner.py PAGE.md`.

Used by tests/test_docs_from_wheel.py with an interpreter that has rewardlab installed from the
wheel, in an empty directory, so an example that leans on the repository fails there. Prints
one `FAIL <page> block<i>: <error>` line per failing block and exits 1 if there was one.
"""

from __future__ import annotations

import sys
import traceback
import types
from pathlib import Path

FENCE = "```"


def python_blocks(text: str) -> list[str]:
    """The page's ```python blocks (the same fence rules as tests/doc_examples.py)."""
    blocks: list[str] = []
    info: str | None = None
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        if info is None:
            if line.startswith(FENCE):
                info, lines = line[len(FENCE) :].strip(), []
        elif line.rstrip() == FENCE:
            if info == "python":
                blocks.append("".join(lines))
            info = None
        else:
            lines.append(line)
    return blocks


def main(page: Path) -> int:
    module = types.ModuleType(f"{page.stem}_docs_example")
    sys.modules[module.__name__] = module
    failed = 0
    for i, code in enumerate(python_blocks(page.read_text(encoding="utf-8"))):
        try:
            exec(compile(code, f"{page.name}#block{i}", "exec"), module.__dict__)
        except BaseException as exc:  # a reader sees a failure of any kind
            failed += 1
            detail = traceback.format_exception_only(exc)[-1].strip()
            print(f"FAIL {page.name} block{i}: {detail[:400]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
