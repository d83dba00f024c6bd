"""Test references as the common data sets ship them, read into one shape (`Problem`).

Accepted as they are (the whole row, or its test fields):

* rewardlab: `{"cases": [{"input": ..., "output": ...}], "checker"?, "time_limit"?, "memory_mb"?,
  "standard"?}` (`standard`: the C or C++ standard the problem is compiled as, e.g. "c++17")
* CodeContests (deepmind/code_contests): `public_tests`, `private_tests`, `generated_tests`,
  each `{"input": [...], "output": [...]}`; `time_limit` `{"seconds", "nanos"}`,
  `memory_limit_bytes`.
* LiveCodeBench (code_generation_lite): `public_test_cases` and `private_test_cases`, JSON
  lists of `{"input", "output", "testtype"}`; the private ones usually compressed as
  base64(zlib(pickle(json))). "stdin" tests run as stdin/stdout cases; "functional" tests
  (LeetCode problems) call `metadata.func_name`, a method of one `Solution()` (or a function),
  with each input line read as JSON, as `lcb_runner/evaluation/testing_util.py` does: its
  imports run before the program, a returned tuple compares as a list, nothing else is relaxed.
* TACO / APPS: `input_output`, a JSON string `{"inputs": [...], "outputs": [...]}`; an output
  given as a list of lines is joined with newlines (a row with TACO's own fields, such as
  `source` or `skill_types`, is "taco", else "apps": their graders differ). Rows with
  `fn_name` are call-based (Python functions): they become `check(candidate)` tests.

A field that is present but malformed is a ScoringError("invalid_input") naming it; so is one
that would expand past the bounds of `payloads.py` (decompressed bytes, JSON containers, tests).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardlab.core.numbers import json_float
from rewardlab.errors import ScoringError
from rewardlab.verify.code.payloads import (
    MAX_CASES,
    bounded_json,
    check_case_count,
    lcb_compressed,
)

HINT = ("code.tests needs reference = {'cases': [{'input', 'output'}, ...]} or {'entry_point', 'tests'}, "
        "or a CodeContests / LiveCodeBench / TACO row")  # fmt: skip
CODE_CONTESTS_SPLITS = ("public_tests", "private_tests", "generated_tests")


@dataclass(frozen=True)
class Problem:
    """stdin/stdout cases with the problem's own limits and checker, if it states them."""

    cases: list[dict[str, str]]
    time_limit: float | None = None  # seconds, as the data set states it
    memory_mb: int | None = None
    checker: dict[str, Any] | None = None  # {"source", "language", "files"}
    source_format: str = "rewardlab"
    counts: dict[str, int] = field(default_factory=dict)  # cases per split
    python_prelude: str = ""  # what the data set's grader runs before a Python program
    standard: str | None = None  # the language standard the problem asks for ("c++17"), checked by the reward

    def python_source(self, code: str) -> str:
        """A Python program as the data set's grader runs it: its prelude first (LiveCodeBench
        `make_function`, APPS `run_test`), or for TACO (`synthesize_std_code`) before the first
        line that is not an import, so a leading `from __future__` line still comes first."""
        if not self.python_prelude:
            return code
        if self.source_format != "taco":
            return self.python_prelude + code
        lines = code.split("\n")
        first = next((i for i, line in enumerate(lines) if "import *" not in line and not line.startswith(("from ", "import "))), len(lines))
        return "\n".join([*lines[:first], self.python_prelude + "\n".join(lines[first:])])


def _bad(what: str) -> ScoringError:
    return ScoringError("invalid_input", f"{HINT}; {what}")


def _case(inp: Any, out: Any, where: str) -> dict[str, str]:
    if isinstance(out, list) and all(isinstance(x, str) for x in out):
        out = "\n".join(out)  # APPS/TACO: expected output as a list of lines
    if isinstance(inp, list) and all(isinstance(x, str) for x in inp):
        inp = "\n".join(inp)
    if not isinstance(inp, str) or not isinstance(out, str):
        raise _bad(f"{where} needs string input and output, got {type(inp).__name__} and {type(out).__name__}")
    return {"input": inp, "output": out}


def _json_field(value: Any, where: str) -> Any:
    return bounded_json(value, where) if isinstance(value, str) else value


def native_cases(ref: Mapping[str, Any]) -> Problem:
    cases = ref["cases"]
    if not isinstance(cases, list) or not cases:
        raise _bad("'cases' must be a non-empty list")
    check_case_count(len(cases), "cases")
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, Mapping):
            raise _bad(f"cases[{i}] must be an object")
        out.append(_case(case.get("input", ""), case.get("output"), f"cases[{i}]"))
    standard = ref.get("standard")
    if standard is not None and not isinstance(standard, str):
        raise _bad(f"'standard' must be a language standard such as 'c++17', got {_shown(standard)}")
    return Problem(out, _seconds(ref.get("time_limit"), "time_limit"), _megabytes(ref.get("memory_mb"), "memory_mb"),
                   _checker(ref.get("checker")), "rewardlab", {"cases": len(out)}, standard=standard)  # fmt: skip


def _seconds(value: Any, where: str) -> float | None:
    """A time limit: seconds as a number, or CodeContests' {"seconds", "nanos"}."""
    if value is None:
        return None
    seconds = json_float(value)
    if isinstance(value, Mapping):
        whole, nanos = json_float(value.get("seconds") or 0), json_float(value.get("nanos") or 0)
        seconds = None if whole is None or nanos is None else whole + nanos / 1e9
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        raise _bad(f"{where} must be seconds (a finite number >= 0) or {{'seconds', 'nanos'}}, got {_shown(value)}")
    return seconds or None  # CodeContests uses 0 for "not stated"


_MAX_MEGABYTES = 1 << 30  # 1 PiB: more than any machine; beyond it a stated limit is an error, not a limit


def _megabytes(value: Any, where: str) -> int | None:
    """A memory limit in MB (a number, or a string of one); 0 or null: not stated."""
    if value is None or value == 0:
        return None
    number = json_float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value)
    if number is None or not math.isfinite(number) or not 1 <= number <= _MAX_MEGABYTES:
        raise _bad(f"{where} must be a memory limit in MB (from 1 to {_MAX_MEGABYTES}), got {_shown(value)}")
    return int(number)


def _shown(value: Any) -> str:
    """A value for an error message, cut short (a hostile file may hold a number of 4,000 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _checker(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = {"source": value, "language": "cpp"}
    if not isinstance(value, Mapping) or not isinstance(value.get("source"), str):
        raise _bad("'checker' must be the checker's source, or {'source', 'language', 'files'?}")
    files = value.get("files") or {}
    if not isinstance(files, Mapping) or not all(isinstance(k, str) and "/" not in k and isinstance(v, str) for k, v in files.items()):
        raise _bad("checker 'files' must map plain file names to their text (e.g. {'testlib.h': ...})")
    return {"source": value["source"], "language": str(value.get("language", "cpp")), "files": dict(files)}


def code_contests(ref: Mapping[str, Any], splits: tuple[str, ...] = CODE_CONTESTS_SPLITS) -> Problem:
    cases: list[dict[str, str]] = []
    counts: dict[str, int] = {}
    for split in splits:
        tests = ref.get(split)
        if tests is None:
            continue
        if not isinstance(tests, Mapping) or not isinstance(tests.get("input"), list) or not isinstance(tests.get("output"), list):
            raise _bad(f"{split} must be {{'input': [...], 'output': [...]}}")
        if len(tests["input"]) != len(tests["output"]):
            raise _bad(f"{split} has {len(tests['input'])} inputs but {len(tests['output'])} outputs")
        counts[split] = len(tests["input"])
        check_case_count(sum(counts.values()), ", ".join(counts))
        cases += [_case(i, o, f"{split}[{n}]") for n, (i, o) in enumerate(zip(tests["input"], tests["output"], strict=True))]
    if not cases:
        raise _bad(f"no tests in {', '.join(splits)}")
    memory = ref.get("memory_limit_bytes")
    memory_mb = _megabytes(memory >> 20, "memory_limit_bytes") if isinstance(memory, int) and not isinstance(memory, bool) and memory > 0 else None
    return Problem(cases, _seconds(ref.get("time_limit"), "time_limit"), memory_mb, None, "code_contests", counts)


def _lcb_tests(value: Any, where: str) -> list[Any]:
    if isinstance(value, str) and not value.lstrip().startswith("["):
        value = lcb_compressed(value, where)
    # a list of objects of strings: one container per test (two, leaving room for a nested
    # object of metadata), and the list itself; refused before parsing when it opens more
    tests = bounded_json(value, where, 2 * MAX_CASES + 1) if isinstance(value, str) else value
    if not isinstance(tests, list):
        raise _bad(f"{where} must be a list of tests")
    return tests


def live_code_bench(ref: Mapping[str, Any]) -> Problem | dict[str, str]:
    tests: list[tuple[str, int, Mapping[str, Any]]] = []
    counts: dict[str, int] = {}
    for split in ("public_test_cases", "private_test_cases"):
        if ref.get(split) in (None, ""):
            continue
        found = _lcb_tests(ref[split], split)
        for n, test in enumerate(found):
            if not isinstance(test, Mapping):
                raise _bad(f"{split}[{n}] must be an object")
            tests.append((split, n, test))
        counts[split] = len(found)
        check_case_count(len(tests), ", ".join(counts))
    if not tests:
        raise _bad("no tests in public_test_cases or private_test_cases")
    kinds = {test.get("testtype", "stdin") for _, _, test in tests}
    if kinds == {"functional"}:
        return _lcb_functional(ref, tests)
    if kinds != {"stdin"}:
        raise ScoringError("invalid_input", f"LiveCodeBench tests of types {sorted(map(str, kinds))}: a problem's tests must be all 'stdin' or all 'functional'")
    cases = [_case(test.get("input", ""), test.get("output"), f"{split}[{n}]") for split, n, test in tests]
    return Problem(cases, None, None, None, "live_code_bench", counts, python_prelude=LCB_PRELUDE)


#: run before a LiveCodeBench functional program, as lcb_runner's `import_string` (solutions
#: written against LeetCode's environment use `List`, `defaultdict`, `heappush`... unimported)
_LCB_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
                "itertools", "functools", "operator", "io", "sys", "json")  # fmt: skip
LCB_PRELUDE = "\n".join(
    [f"from {m} import *" for m in (*_LCB_MODULES, "builtins", "typing")]
    + [f"import {m}" for m in _LCB_MODULES]
    + ["sys.setrecursionlimit(50000)", "", ""]
)
#: the name the tests call: the method of one `Solution()`, or the function itself
LCB_ENTRY = "_rewardlab_lcb_entry"


def _lcb_functional(ref: Mapping[str, Any], tests: list[tuple[str, int, Mapping[str, Any]]]) -> dict[str, str]:
    metadata = _json_field(ref.get("metadata", "{}"), "metadata")
    name = metadata.get("func_name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name.isidentifier():
        raise _bad("functional LiveCodeBench tests need metadata.func_name, the method to call")
    lines = ["def _same(got, want):",
             "    return (list(got) if isinstance(got, tuple) else got) == want",
             "", "def check(candidate):"]  # fmt: skip
    for split, n, test in tests:
        where = f"{split}[{n}]"
        if not isinstance(test.get("input"), str) or not isinstance(test.get("output"), str):
            raise _bad(f"{where} needs string input and output")
        args = [_json_literal(line, f"{where}.input") for line in test["input"].split("\n")]
        lines.append(f"    assert _same(candidate({', '.join(args)}), {_json_literal(test['output'], f'{where}.output')})")
    postlude = (f"\n\n{LCB_ENTRY} = Solution().{name} if 'Solution' in globals() else {name}\n")
    return {"entry_point": LCB_ENTRY, "tests": "\n".join(lines) + "\n", "prelude": LCB_PRELUDE, "postlude": postlude}


def _json_literal(text: str, where: str) -> str:
    """A JSON value as Python source; NaN and infinities (JSON extensions) are refused. Each
    literal is parsed on its own within `MAX_CONTAINERS` (real inputs, e.g. 10^5 edges as pairs,
    stay far below it); all of them together are bounded by the field's decompressed size."""
    return repr(bounded_json(text, where))


#: fields only TACO rows carry (BAAI/TACO on the Hub); a row without them is read as APPS
TACO_FIELDS = ("source", "skill_types", "tags", "raw_tags", "Expected Time Complexity", "Expected Auxiliary Space")
#: run before a call-based APPS/TACO program, as both graders prepend it (`run_test` in APPS,
#: `synthesize_cb_code` in TACO); numpy only where the sandbox's Python has it
APPS_PRELUDE = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, combinations\n"
    "import collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, ChainMap\n"
    "from functools import lru_cache\nimport math\nfrom math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\n"
    "import fractions\nfrom typing import List, Tuple\ntry:\n    import numpy as np\nexcept ImportError:\n    pass\n"
    "import random\nimport heapq\nfrom heapq import *\n"
)
#: the name the tests call: the method of one `Solution()` (LeetCode and GeeksforGeeks rows), or the function
TACO_ENTRY = "_rewardlab_taco_entry"


def apps_or_taco(ref: Mapping[str, Any]) -> str:
    return "taco" if any(name in ref for name in TACO_FIELDS) else "apps"


def taco_stdio(io_spec: Mapping[str, Any], source_format: str = "taco") -> Problem:
    inputs, outputs = io_spec.get("inputs"), io_spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs) or not inputs:
        raise _bad("input_output needs equally long, non-empty 'inputs' and 'outputs' lists")
    check_case_count(len(inputs), "input_output")
    cases = [_case(i, o, f"input_output[{n}]") for n, (i, o) in enumerate(zip(inputs, outputs, strict=True))]
    prelude = f"{APPS_PRELUDE}stdin = sys.stdin\nstdout = sys.stdout\n"  # both graders alias them
    return Problem(cases, None, None, None, source_format, {"input_output": len(cases)}, python_prelude=prelude)


def _int_keys(value: Any) -> Any:
    """The graders' undoing of JSON's string keys: {int(k): v}, unless a key is no integer."""
    try:
        return {int(k): v for k, v in value.items()}
    except (TypeError, ValueError):
        return value


def _official_case(args: Any, want: Any) -> tuple[Any, Any]:
    """`process_input_output` (TACO) / the same lines of APPS' `run_test`: a dict as the first
    argument, or as the expected value (or its first element), gets integer keys and becomes
    the only element of a one-element list (the graders drop the rest)."""
    if isinstance(args, list) and args and isinstance(args[0], dict):
        converted = _int_keys(args[0])
        args = [converted] if converted is not args[0] else args
    if isinstance(want, dict):
        converted = _int_keys(want)
        want = [converted] if converted is not want else want
    if isinstance(want, list) and want and isinstance(want[0], dict):
        converted = _int_keys(want[0])
        want = [converted] if converted is not want[0] else want
    return args, want


def taco_check(io_spec: Mapping[str, Any]) -> dict[str, str]:
    """Call-based TACO/APPS tests as `check(candidate)` source, judged as both graders judge
    (`execute_cb_code` in TACO, `run_test` in APPS): a returned tuple is a list; the answer
    counts when it equals the expected value, or the expected value's first element (the data
    sets wrap most return values in a list), or, when it is a sequence of tuples, when its
    tuples as lists equal that first element. `fn_name` is a method of one `Solution()` when
    the program defines a class `Solution` (TACO's LeetCode and GeeksforGeeks rows), else a
    function; the graders' imports (`APPS_PRELUDE`) run before the program."""
    name, inputs, outputs = io_spec.get("fn_name"), io_spec.get("inputs"), io_spec.get("outputs")
    if not isinstance(name, str) or not name.isidentifier() or not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs) or not inputs:
        raise _bad("call-based input_output needs an identifier 'fn_name' and equally long 'inputs'/'outputs' lists")
    check_case_count(len(inputs), "input_output")
    lines = ["def _same(got, want):",
             "    got = list(got) if isinstance(got, tuple) else got",
             "    if got == want or (isinstance(want, list) and want and got == want[0]):",
             "        return True",
             "    try:",
             "        return isinstance(got[0], tuple) and [list(x) for x in got] == want[0]",
             "    except Exception:",
             "        return False",
             "", "def check(candidate):"]  # fmt: skip
    for args, want in zip(inputs, outputs, strict=True):
        args, want = _official_case(args, want)
        args = args if isinstance(args, list) else [args]
        lines.append(f"    assert _same(candidate(*{args!r}), {want!r})")
    postlude = f"\n\n{TACO_ENTRY} = Solution().{name} if 'Solution' in globals() else {name}\n"
    return {"entry_point": TACO_ENTRY, "tests": "\n".join(lines) + "\n", "prelude": APPS_PRELUDE, "postlude": postlude}


def read_reference(ref: Any) -> Problem | dict[str, str]:
    """A `Problem` (stdin/stdout cases) or `{"entry_point", "tests"}` (check(candidate)), the
    latter with an optional `prelude` and `postlude`: source run before and after the program.
    A JSON string holding either is accepted. Raises ScoringError("invalid_input")."""
    if isinstance(ref, str):
        ref = bounded_json(ref, "the reference (a string)")
    if not isinstance(ref, Mapping):
        raise _bad(f"got {type(ref).__name__}")
    if "cases" in ref:
        return native_cases(ref)
    if any(split in ref for split in CODE_CONTESTS_SPLITS):
        return code_contests(ref)
    if "public_test_cases" in ref or "private_test_cases" in ref:
        return live_code_bench(ref)
    if "input_output" in ref:
        spec = _json_field(ref["input_output"], "input_output")
        if not isinstance(spec, Mapping):
            raise _bad("input_output must be an object")
        return taco_check(spec) if spec.get("fn_name") else taco_stdio(spec, apps_or_taco(ref))
    tests = ref.get("tests", ref.get("test"))
    entry = ref.get("entry_point")
    if isinstance(tests, str) and isinstance(entry, str) and entry.isidentifier():
        wrap = {k: ref[k] for k in ("prelude", "postlude") if k in ref}
        if not all(isinstance(v, str) for v in wrap.values()):
            raise _bad("prelude and postlude must be source strings")
        return {"tests": tests, "entry_point": entry, **wrap}
    raise _bad(f"got keys {sorted(ref)[:12]}")
