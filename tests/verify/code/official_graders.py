"""The data sets' own graders, run from their published source for differential tests.

CodeContests' `OutputsMatch` is C++ in a file that also holds its sandbox2 harness: its three
comparison functions are cut out of that file and built against Debian's abseil
(`libabsl-dev`), skipped where abseil or g++ is missing.

Nothing of theirs is vendored: the source is read from local git mirrors of the repositories
(`REWARDLAB_GRADER_MIRRORS`, default /work/.mirror, laid out `owner+name/repo`), at the
commits docs/code.md cites, and run in a child Python process (APPS' harness disables `os`
functions in the process it runs in). Without the mirrors the differential tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
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
    "code_contests": ("google-deepmind+code_contests", "fa7a4f8139aab08362503f3344778eb86901709a", ["execution/tester_sandboxer.cc"]),
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


_CC_MAIN = r"""
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace {
%(helpers)s
}  // namespace

%(outputs_match)s

int main() {
  size_t a, b;
  while (std::cin >> a >> b) {
    std::cin.get();
    std::string expected(a, '\0'), actual(b, '\0');
    std::cin.read(&expected[0], a);
    std::cin.read(&actual[0], b);
    std::cout << (OutputsMatch(actual, expected) ? 1 : 0) << "\n";
  }
}
"""


def code_contests_verdicts(pairs: list[tuple[str, str]], tmp_path: Path) -> list[bool]:
    """`OutputsMatch(output, expected)` from deepmind/code_contests, built from its source."""
    if not Path("/usr/include/absl/strings/numbers.h").is_file() or not shutil.which("g++") or not shutil.which("pkg-config"):
        pytest.skip("building CodeContests' OutputsMatch needs g++ and abseil (apt-get install libabsl-dev)")
    source = official_files("code_contests", tmp_path)["tester_sandboxer.cc"].read_text()
    helpers = source[source.index("std::vector<std::string> SplitAndLowercase("): source.index("}  // namespace", source.index("bool ValuesMatch("))]
    start = source.index("bool OutputsMatch(")
    outputs_match = source[start : source.index("\n}\n", start) + 3]
    program = tmp_path / "outputs_match.cc"
    program.write_text(_CC_MAIN % {"helpers": helpers, "outputs_match": outputs_match})
    libs = subprocess.run(["pkg-config", "--libs", "absl_strings"], capture_output=True, text=True, check=True).stdout.split()
    binary = tmp_path / "outputs_match"
    built = subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(binary), str(program), *libs], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    feed = b"".join(b"%d %d\n%s%s" % (len(e.encode()), len(a.encode()), e.encode(), a.encode()) for e, a in pairs)
    done = subprocess.run([str(binary)], input=feed, capture_output=True, timeout=120, check=True)
    verdicts = [line == "1" for line in done.stdout.decode().split()]
    assert len(verdicts) == len(pairs)
    return verdicts
