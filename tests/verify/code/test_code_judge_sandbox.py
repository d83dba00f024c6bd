"""No code that arrives with the data runs in the host process: a reference's `check` tests, the
prompt's helpers, a checker and a python grader each try to create a marker directory on the
host, scored through the library, the CLI and a real `rewardlab serve` on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

import rewardlab
from rewardlab.cli.main import main
from rewardlab.core import Sample
from rewardlab.errors import UsageError
from rewardlab.sandbox.config import find_bwrap
from rewardlab.serve import ServeSettings, create_app
from rewardlab.verify.code import CodeTests

pytestmark = [
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it"),
    pytest.mark.slow,
]

CODE_SPEC = """
[reward]
name = "code"

[[reward.components]]
name = "tests"
use = "code.tests"
params = { score = "pass_fraction", workers = 1, prepend_prompt = true, cpu_seconds = 5.0, wall_seconds = 20.0 }
"""

GRADER_SPEC = """
[reward]
name = "grader"

[[reward.components]]
name = "grade"
use = "graders.python"
params = {{ source = {source}, workers = 1 }}
"""

CHECK = "def check(candidate):\n    assert candidate(2) == 4\n"
RIGHT = "def double(x):\n    return 2 * x\n"


def _mkdir(path: Path) -> str:
    """A Python expression that creates `path` (and its parents), wherever it runs."""
    return f"__import__('os').makedirs({str(path)!r}, exist_ok=True)"


def _checker(path: Path) -> str:
    """A C++ checker (testlib's argument order) that creates `path`'s parent, then `path`, and accepts."""
    return (
        "#include <sys/stat.h>\nint main(int argc, char** argv) {\n"
        f"    mkdir({json.dumps(str(path.parent))}, 0777);\n    mkdir({json.dumps(str(path))}, 0777);\n"
        "    return 0;\n}\n"
    )


def code_rows(markers: Path) -> dict[str, dict[str, Any]]:
    """One sample per place the data can carry code, each creating its own marker."""
    in_check = f"def check(candidate):\n    {_mkdir(markers / 'tests_check')}\n    assert candidate(2) == 4\n"
    checker = {"source": _checker(markers / "checker"), "language": "cpp"}
    return {
        "tests_module": {"response": RIGHT, "reference": {"entry_point": "double", "tests": f"{_mkdir(markers / 'tests_module')}\n{CHECK}"}},
        "tests_check": {"response": RIGHT, "reference": {"entry_point": "double", "tests": in_check}},
        "prompt_helpers": {
            "prompt": f"_marker = {_mkdir(markers / 'prompt_helpers')}\n\n\ndef half(x):\n    return x // 2\n\n\ndef double(x):\n    '''Twice x.'''\n",
            "response": "    return 2 * x\n",
            "reference": {"entry_point": "double", "tests": "def check(candidate):\n    assert half(candidate(2)) == 2\n"},
        },
        "checker": {"response": "print(4)", "reference": {"cases": [{"input": "2", "output": "4"}], "checker": checker}},
    }


def grader_spec(markers: Path) -> str:
    source = f"{_mkdir(markers / 'grader_module')}\n\ndef grade(sample, item):\n    {_mkdir(markers / 'grader_call')}\n    return 1.0\n"
    return GRADER_SPEC.format(source=json.dumps(source))


def _no_markers(markers: Path) -> None:
    assert not markers.exists(), f"code from the data ran on the host: {sorted(p.name for p in markers.iterdir())}"


@pytest.fixture
def specs(tmp_path: Path) -> tuple[Path, Path, Path]:
    markers = tmp_path / "markers"
    code, grader = tmp_path / "code.toml", tmp_path / "grader.toml"
    code.write_text(CODE_SPEC)
    grader.write_text(grader_spec(markers))
    return markers, code, grader


def test_data_code_leaves_no_marker_through_the_library(specs: tuple[Path, Path, Path]) -> None:
    markers, code, grader = specs
    rows = code_rows(markers)
    results = rewardlab.score(str(code), list(rows.values()))
    scores = {name: result.components["tests"].score for name, result in zip(rows, results, strict=True)}
    assert scores == {name: 1.0 for name in rows}, [r.components["tests"].info for r in results]
    (graded,) = rewardlab.score(str(grader), [{"response": "x"}])
    assert graded.score == 1.0
    _no_markers(markers)


def test_data_code_leaves_no_marker_through_the_cli(specs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    markers, code, grader = specs
    rows = code_rows(markers)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows.values()))
    for spec in (code, grader):
        out = tmp_path / f"{spec.stem}.jsonl"
        assert main(["score", str(spec), str(data), "-o", str(out), "--workers", "1", "--no-progress"]) == 0
        scored = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["reward"] for row in scored] == [1.0] * len(rows)
    _no_markers(markers)


@pytest.fixture
def server(specs: tuple[Path, Path, Path]) -> Iterator[str]:
    """`rewardlab serve` in a process of its own, on a free loopback port."""
    _, code, grader = specs
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    argv = ["serve", f"code={code}", f"grader={grader}", "--port", str(port), "--no-cache", "--workers", "1"]
    boot = "import sys; from rewardlab.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", boot, *argv], env=os.environ.copy())
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "rewardlab serve exited"
            assert time.monotonic() < deadline, "rewardlab serve did not start"
            try:
                if httpx.get(f"{url}/v1/rewards", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def test_data_code_leaves_no_marker_through_a_socket_server(specs: tuple[Path, Path, Path], server: str) -> None:
    markers = specs[0]
    rows = code_rows(markers)
    reply = httpx.post(f"{server}/v1/rewards/code:score", json={"samples": list(rows.values())}, timeout=300)
    assert reply.status_code == 200, reply.text
    assert [r["score"] for r in reply.json()["results"]] == [1.0] * len(rows), reply.text
    reply = httpx.post(f"{server}/v1/rewards/grader:score", json={"samples": [{"response": "x"}]}, timeout=300)
    assert reply.status_code == 200 and reply.json()["results"][0]["score"] == 1.0, reply.text
    _no_markers(markers)


# -- the opt-in ---------------------------------------------------------------------------------------
def test_trusted_tests_run_in_this_process_only_when_asked(tmp_path: Path) -> None:
    tests = f"{_mkdir(tmp_path / 'in_process')}\n{CHECK}"
    sample = Sample(response=RIGHT, reference={"entry_point": "double", "tests": tests})
    assert CodeTests(workers=1).score(sample).score == 1.0
    assert not (tmp_path / "in_process").exists()
    assert CodeTests(workers=1, trusted_tests=True).score(sample).score == 1.0
    assert (tmp_path / "in_process").is_dir()  # the opt-in is real: the marker test can fail


@pytest.mark.timeout(120)
def test_a_server_refuses_to_host_trusted_tests(tmp_path: Path) -> None:
    spec = rewardlab.build(CODE_SPEC.replace("workers = 1,", "workers = 1, trusted_tests = true,"))
    with pytest.raises(UsageError, match="trusted_tests"):
        create_app({"code": spec}, settings=ServeSettings(workers=0))
    path = tmp_path / "trusted.toml"
    path.write_text(CODE_SPEC.replace("workers = 1,", "workers = 1, trusted_tests = true,"))
    assert main(["serve", str(path), "--port", "1", "--no-cache"]) == 2


# -- the judge's own failures ---------------------------------------------------------------------
def _judged(tests: str, response: str = RIGHT) -> dict[str, Any]:
    result = CodeTests(workers=1, score="pass_fraction", cpu_seconds=1.0, wall_seconds=10.0).score(
        Sample(response=response, reference={"entry_point": "double", "tests": tests})
    )
    assert result.status.value == "ok", result.error
    return dict(result.info)


@pytest.mark.timeout(120)  # in-process tests would loop here for ever
def test_tests_that_loop_forever_stop_at_the_judges_limits() -> None:
    info = _judged("def check(candidate):\n    assert candidate(2) == 4\n    while True:\n        pass\n    assert candidate(3) == 6\n")
    assert [t["verdict"] for t in info["tests"]] == ["pass", "not_reached"]
    assert "tests' sandbox ended" in info["stopped_by"]


def test_tests_that_write_into_the_judges_channel_end_only_the_judge() -> None:
    info = _judged("import os\ndef check(candidate):\n    assert candidate(2) == 4\n    os.write(4, b'\\xff' * 64)\n    assert candidate(3) == 6\n")
    assert info["passed"] == 0 and "tests' sandbox ended" in info["stopped_by"]
    assert _judged(CHECK)["passed"] == 1  # the pools are still healthy


def test_tests_that_exit_stop_the_tests_only() -> None:
    info = _judged("import sys\ndef check(candidate):\n    assert candidate(2) == 4\n    sys.exit(0)\n")
    assert [t["verdict"] for t in info["tests"]] == ["pass"]
    assert info["stopped_by"].startswith("check stopped: SystemExit")


def test_the_program_cannot_reach_its_judge() -> None:
    # The program looks for the judge's process and namespace: it is in another sandbox.
    response = RIGHT + "import gc\nfor o in gc.get_objects():\n    if isinstance(o, dict) and '__rl_record__' in o:\n        o['__rl_record__'] = lambda *a: None\n"
    info = _judged("def check(candidate):\n    x = 2\n    assert candidate(x) == 5\n", response)  # not only data: judged
    assert [t["verdict"] for t in info["tests"]] == ["fail"]


def test_authored_reward_code_leaves_no_marker(tmp_path: Path) -> None:
    from rewardlab.author import evaluate_candidate, task_by_name
    from rewardlab.sandbox import SandboxPool

    markers = tmp_path / "markers"
    code = f"{_mkdir(markers / 'authored_module')}\n\ndef reward(obs, action, next_obs, info):\n    {_mkdir(markers / 'authored_call')}\n    return 0.0\n"
    maze = task_by_name("grid/maze")
    with SandboxPool(size=1) as pool:
        table = evaluate_candidate(code, maze.transitions, maze.shape, pool)
    assert table.total.shape == maze.shape
    _no_markers(markers)


def test_a_judge_that_asks_for_anything_but_the_program_is_an_error() -> None:
    # The tests own their judge's process: what it sends is parsed as hostile data here.
    tests = "def check(candidate):\n    candidate._judge._to_host.put({'need': ['__import__', ['os'], {}]})\n    assert candidate(2) == 4\n"
    result = CodeTests(workers=1).score(Sample(response=RIGHT, reference={"entry_point": "double", "tests": tests}))
    assert result.status.value == "error" and result.error is not None
    assert result.error.kind.value == "crash" and "something other than the program" in result.error.message


def test_a_judge_that_records_a_test_it_does_not_have_is_an_error() -> None:
    tests = "def check(candidate):\n    __rl_record__(7, True, None)\n    assert candidate(2) == 4\n"
    result = CodeTests(workers=1).score(Sample(response=RIGHT, reference={"entry_point": "double", "tests": tests}))
    assert result.status.value == "error" and result.error is not None and "test record" in result.error.message


def test_an_answer_nested_as_deep_as_the_wire_allows_reaches_the_tests() -> None:
    # 100 levels is the most a program may send; relaying it to the judge must not add one.
    deep = "def double(x):\n    v = []\n    for _ in range(100):\n        v = [v]\n    return v\n"
    for tests in (CHECK, "def check(candidate):\n    x = 2\n    assert candidate(x) == 4\n"):  # prefetched, then called
        info = _judged(tests, deep)
        assert [t["verdict"] for t in info["tests"]] == ["fail"]


def test_what_the_program_raises_is_the_builtin_the_tests_catch() -> None:
    # candidate(-1) is answered with the program's load (a literal call), candidate(x) on demand
    tests = "def check(candidate):\n    x = -1\n    for call in (lambda: candidate(-1), lambda: candidate(x)):\n        try:\n            call()\n            assert False\n        except ValueError:\n            assert True\n"
    raising = "def double(x):\n    if x < 0:\n        raise ValueError('negative')\n    return 2 * x\n"
    info = _judged(tests, raising)
    assert [t["verdict"] for t in info["tests"]] == ["not_reached", "pass"] and info["calls"] == 2


@pytest.mark.timeout(300)
def test_more_callers_than_sandboxes_all_get_judged() -> None:
    # Four threads share one program sandbox and one judge sandbox: each takes them in the same
    # order, so none holds a judge while waiting for a program (or the other way round).
    reward = CodeTests(workers=1, cpu_seconds=2.0, wall_seconds=60.0)
    tests = "def check(candidate):\n    x = 2\n    assert candidate(x) == 4\n"  # needs the judge
    samples = [Sample(response=RIGHT, reference={"entry_point": "double", "tests": tests})] * 8
    with ThreadPoolExecutor(4) as threads:
        scores = [r.score for r in threads.map(reward.score, samples)]
    assert scores == [1.0] * 8
