"""The data sets' own graders, run from their published source for differential tests.

Nothing of theirs is vendored: the source is read from local git mirrors of the repositories
(`REWARDLAB_GRADER_MIRRORS`, default /work/.mirror, laid out `owner+name/repo`), at the
commits docs/code.md cites, and run in a child Python process (APPS' harness disables `os`
functions in the process it runs in). Without the mirrors the differential tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MIRRORS = Path(os.environ.get("REWARDLAB_GRADER_MIRRORS", "/work/.mirror"))
SOURCES = {
    "live_code_bench": ("LiveCodeBench+LiveCodeBench", "28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24", ["lcb_runner/evaluation/testing_util.py"]),
    "taco": ("FlagOpen+TACO", "245eba3beb2d23a07082307de303de2589e4321a", ["metrics/testing_util.py", "metrics/pyext2.py"]),
    "apps": ("hendrycks+apps", "362aedc3c71cd7d9bd2fc96a6c80e11dbc38c7a5", ["eval/testing_util.py"]),
    "testlib": ("MikeMirzayanov+testlib", "1e4e8a24c79c6bad3becbdb5a332ffc352b7d5dd", ["testlib.h", "checkers/rcmp6.cpp"]),
}


def official_files(grader: str, into: Path) -> dict[str, Path]:
    """The grader's files written under `into` (file name -> path); skips the test when the
    mirror or the commit is not on this machine."""
    repo, commit, paths = SOURCES[grader]
    git_dir = MIRRORS / repo / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no local mirror of {repo} under {MIRRORS} (set REWARDLAB_GRADER_MIRRORS)")
    out = {}
    for path in paths:
        shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, check=False)
        if shown.returncode != 0:
            pytest.skip(f"{repo} mirror lacks {commit}:{path}")
        target = into / Path(path).name
        target.write_bytes(shown.stdout)
        out[Path(path).name] = target
    return out


_APPS_HEAD = """
import json, sys, types
pyext = types.ModuleType("pyext")  # pyext (a 2014 package) does not install on Python 3.11

class RuntimeModule:
    @staticmethod
    def from_string(name, doc, source):
        module = types.ModuleType(name, doc)
        exec(source, module.__dict__)
        return module

pyext.RuntimeModule = RuntimeModule
sys.modules["pyext"] = pyext
sys.path.insert(0, {folder!r})
import testing_util as apps
"""

# Each runner reads [[expected, actual], ...] as JSON on stdin and prints the grader's verdicts.
_RUNNERS = {
    "live_code_bench": """
import json, sys
sys.path.insert(0, {folder!r})
import testing_util as lcb
verdicts = []
for expected, actual in json.load(sys.stdin):
    graded = lcb.grade_stdio("import sys\\nsys.stdout.write(%r)\\n" % actual, [""], [expected], 6)
    verdicts.append(graded is not None and graded[0] == [True])
print(json.dumps(verdicts))
""",
    "taco": """
import inspect, json, sys
inspect.getargspec = inspect.getfullargspec  # pyext2 (imported, never used here) predates Python 3.11
sys.path.insert(0, {parent!r})
from taco_metrics.testing_util import compare_std_results
verdicts = []
for expected, actual in json.load(sys.stdin):
    # what subprocess.run(..., text=True) hands the grader: universal newlines
    stdout = actual.replace("\\r\\n", "\\n").replace("\\r", "\\n")
    verdicts.append(bool(compare_std_results(stdout, expected)))
print(json.dumps(verdicts))
""",
    "apps": _APPS_HEAD + """
pairs = json.load(sys.stdin)
program = "import sys\\nANSWERS = %r\\nsys.stdout.write(ANSWERS[int(input())])\\n" % [a for _, a in pairs]
problem = {{"input_output": {{"inputs": [str(i) for i in range(len(pairs))], "outputs": [e for e, _ in pairs]}}}}
print(json.dumps([str(r) == "True" for r in apps.run_test(problem=problem, test=program)]))  # numpy bools too
""",
}


# Call-based: each runner reads [[expected (JSON, as the row has it), repr(answer)], ...].
_CALL_RUNNERS = {
    "taco": """
import ast, inspect, json, sys
inspect.getargspec = inspect.getfullargspec  # pyext2 (imported, never used here) predates Python 3.11
sys.path.insert(0, {parent!r})
from taco_metrics.testing_util import execute_cb_code, process_input_output
cases = json.load(sys.stdin)
answers = [ast.literal_eval(answer) for _, answer in cases]
outputs = [process_input_output([i], expected)[1] for i, (expected, _) in enumerate(cases)]
results, _ = execute_cb_code(lambda i: answers[i], [[i] for i in range(len(cases))], outputs, timeout=10)
print(json.dumps([bool(passed) for passed, _ in results]))
""",
    "apps": _APPS_HEAD + """
cases = json.load(sys.stdin)
program = "ANSWERS = [%s]\\ndef f(i):\\n    return ANSWERS[i]\\n" % ", ".join(answer for _, answer in cases)
problem = {{"input_output": {{"fn_name": "f", "inputs": [[i] for i in range(len(cases))], "outputs": [e for e, _ in cases]}}}}
print(json.dumps([str(r) == "True" for r in apps.run_test(problem=problem, test=program)]))
""",
}


def official_verdicts(grader: str, pairs: list[tuple[str, str]], tmp_path: Path) -> list[bool]:
    """The grader's pass/fail on each (expected, actual stdout) pair, from its own code."""
    return _run(grader, _RUNNERS[grader], pairs, tmp_path)


def official_call_verdicts(grader: str, cases: list[tuple[object, str]], tmp_path: Path) -> list[bool]:
    """The grader's pass/fail on each (expected value as the row holds it, repr of the
    function's answer) of a call-based row, from its own code."""
    return _run(grader, _CALL_RUNNERS[grader], cases, tmp_path)


def _run(grader: str, runner_source: str, pairs: list[Any], tmp_path: Path) -> list[bool]:
    folder = tmp_path / grader
    if grader == "taco":  # a package: testing_util imports .pyext2
        folder = tmp_path / "taco_metrics"
    folder.mkdir()
    files = official_files(grader, folder)
    if grader == "taco":
        (folder / "__init__.py").write_text("")
    runner = runner_source.format(folder=str(folder), parent=str(folder.parent))
    done = subprocess.run([sys.executable, "-c", runner], input=json.dumps(pairs), capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)
    assert done.returncode == 0, f"{grader}'s grader failed ({sorted(files)}): {done.stderr[-2000:]}"
    verdicts = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(verdicts) == len(pairs)
    return [bool(v) for v in verdicts]
