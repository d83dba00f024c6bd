"""Rebuild the external cases (cases.jsonl) from public graders' own test files.

Reads the labelled `(gold, pred, expected)` tables of:

- Math-Verify 0.9.0's tests (the PyPI source distribution: `pip download --no-binary :all:
  --no-deps math-verify==0.9.0`, unpacked), Apache-2.0;
- hendrycks/math `modeling/math_equivalence_test.py` (`is_equiv` unit tests), MIT;

by parsing the files with `ast` (nothing of them is imported or run), and writes one JSON object
per case. Entries that are not literals (`f"{math.sqrt(17):.15f}"`) are skipped and counted.
Labels judged wrong are kept, with `disputed` set, from DISPUTED below.

Run:  python tests/verify/math/external/build.py MATH_VERIFY_DIR HENDRYCKS_TEST_FILE HENDRYCKS_COMMIT
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
HENDRYCKS_SOURCE = "hendrycks/math"
HENDRYCKS_PATH = "modeling/math_equivalence_test.py"
HENDRYCKS_LICENCE = "MIT"

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
    (HENDRYCKS_PATH, "10, 4, -2", "4, 10, -2", 0): (
        "MATH's list answers ('enter all the solutions, separated by commas') are unordered; is_equiv "
        "compares strings, so this test pins the string order, not the mathematics (docs/math.md)"
    ),
    (HENDRYCKS_PATH, "0.1, 4, 2", "4, .1, 2", 0): (
        "as above: the same three solutions in another order; is_equiv's string comparison, not MATH's "
        "convention for 'separated by commas' answers (docs/math.md)"
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


def hendrycks_cases(path: Path, commit: str) -> list[dict[str, Any]]:
    """`self.assertTrue/False(is_equiv(test_in, test_out))` after `test_in = ...; test_out = ...`."""
    tree = ast.parse(path.read_text().replace("\t", "    "))
    cases = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        values: dict[str, str] = {}
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                values[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                method = ast.unparse(stmt.value.func)
                label = 1 if method.endswith("assertTrue") else 0
                gold, pred = values["test_in"], values["test_out"]
                cases.append(_case(gold, pred, label, HENDRYCKS_SOURCE, HENDRYCKS_PATH, commit, HENDRYCKS_LICENCE, fn.name, {}))
    return cases


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
    mv_root, hendrycks_file, hendrycks_commit = Path(argv[0]), Path(argv[1]), argv[2]
    mv, skipped = math_verify_cases(mv_root)
    cases = mv + hendrycks_cases(hendrycks_file, hendrycks_commit)
    with (HERE / "cases.jsonl").open("w") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases ({len(mv)} Math-Verify, {len(cases) - len(mv)} hendrycks); {skipped} non-literal entries skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
