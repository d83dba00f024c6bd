"""Rebuild the external cases (cases.jsonl) from public graders' own test files.

Reads the labelled `(gold, pred, expected)` tables of:

- Math-Verify 0.9.0's tests (the PyPI source distribution: `pip download --no-binary :all:
  --no-deps math-verify==0.9.0`, unpacked), Apache-2.0;

by parsing the files with `ast` (nothing of them is imported or run), and writes one JSON object
per case. Entries that are not literals (`f"{math.sqrt(17):.15f}"`) are skipped and counted.
Labels judged wrong are kept, with `disputed` set, from DISPUTED below.

Run:  python tests/verify/math/external/build.py MATH_VERIFY_DIR
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MV_SOURCE = "huggingface/Math-Verify (PyPI sdist math-verify==0.9.0)"
MV_LICENCE = "Apache-2.0"
MV_FILES = (
    "tests/test_all.py",
    "tests/test_boxed.py",
    "tests/test_numina_cases.py",
    "tests/test_open_thoughts.py",
    "tests/test_strict.py",
    "tests/test_yujianll.py",
)

# (source path, gold, pred, label) -> why the label is believed wrong. Kept in the set, reported apart.
DISPUTED: dict[tuple[str, str, str, int], str] = {
    ("tests/test_yujianll.py", "$1 - \\frac{1}{\\mathrm{e}}$", "$1 + \\frac{1}{\\mathrm{e}}$", 1): (
        "1 - 1/e and 1 + 1/e are different numbers (0.632 vs 1.368); the label 1 is a typo"
    ),
    ("tests/test_all.py", "$9$", "Answer $ \n 9 \n $", 0): (
        "the response does answer 9; the label records that Math-Verify does not read a $...$ span "
        "across line breaks, not that 9 is wrong"
    ),
    ("tests/test_all.py", "$9$", "Answer \\( \n 9 \n \\)", 0): (
        "the response does answer 9; the label records that Math-Verify does not read a \\(...\\) span "
        "across line breaks, not that 9 is wrong"
    ),
    ("tests/test_all.py", "$x \\in [-2,7]$", "$-2 \\\\le x \\\\le 7$", 0): (
        "x in [-2, 7] and -2 <= x <= 7 are the same set; Math-Verify labels this pair 1 with "
        "allow_set_relation_comp=True and 0 without it: the 0 records an option, not the mathematics"
    ),
}


def _kwargs_of_call(fn: ast.FunctionDef) -> dict[str, Any]:
    """Literal keyword arguments of the `compare_strings(...)`/`verify(...)` call in a test."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "compare_strings":
            out: dict[str, Any] = {}
            for kw in node.keywords:
                try:
                    out[kw.arg or ""] = ast.literal_eval(kw.value)
                except ValueError:
                    out[kw.arg or ""] = ast.unparse(kw.value)
            return out
    return {}


def math_verify_cases(root: Path) -> tuple[list[dict[str, Any]], int]:
    cases: list[dict[str, Any]] = []
    skipped = 0
    for rel in MV_FILES:
        tree = ast.parse((root / rel).read_text())
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            for deco in fn.decorator_list:
                if not (isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize")):
                    continue
                names = [n.strip() for n in ast.literal_eval(deco.args[0]).split(",")]
                call_kwargs = _kwargs_of_call(fn)
                for element in deco.args[1].elts:  # type: ignore[attr-defined]
                    try:
                        values = ast.literal_eval(element)
                    except ValueError:
                        skipped += 1
                        continue
                    row = dict(zip(names, values, strict=True))
                    label = row.pop("expected", row.pop("result", None))
                    options = {**call_kwargs, **{k: v for k, v in row.items() if k not in ("gold", "pred")}}
                    cases.append(_case(row["gold"], row["pred"], int(label), MV_SOURCE, rel, "", MV_LICENCE, fn.name, options))
    return cases, skipped


def _case(gold: str, pred: str, label: int, repo: str, path: str, commit: str, licence: str, test: str, options: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = {
        "reference": gold,
        "candidate": pred,
        "expected": bool(label),
        "source": {"repo": repo, "path": path, "commit": commit, "test": test, "licence": licence},
        "peer_options": options,
    }
    reason = DISPUTED.get((path, gold, pred, label))
    if reason is not None:
        case["disputed"] = reason
    return case


def main(argv: list[str]) -> None:
    mv_root = Path(argv[0])
    cases, skipped = math_verify_cases(mv_root)
    with (HERE / "cases.jsonl").open("w") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} Math-Verify cases; {skipped} non-literal entries skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
