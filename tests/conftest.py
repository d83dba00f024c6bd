"""Shared fixtures. `shared_data` finds ../shared/data relative to the project root."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import settings

# CI explores the same examples on every run (a property test that fails there fails for
# everyone, reproducibly); local runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """One local Ray (2 CPUs) for every test that uses the Ray backend: starting Ray costs
    5-25 s on the 2-core CI machine, so it is started once, not once per module."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


class _Background:
    """A command started in its own process when the run begins; its test collects the result."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        # a file, not a pipe: a full pipe would stall the command until its test reads it
        self._output: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by result/stop)
        self._process = subprocess.Popen(argv, cwd=ROOT, stdout=self._output, stderr=subprocess.STDOUT, text=True)
        # lower priority: it takes the CPU the tests leave idle, not time from tests that wait on the clock
        os.setpriority(os.PRIO_PROCESS, self._process.pid, 10)

    def result(self) -> subprocess.CompletedProcess[str]:
        returncode = self._process.wait()
        self._output.seek(0)
        output = self._output.read()
        self._output.close()
        return subprocess.CompletedProcess(self.argv, returncode, output, "")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._output.close()


MYPY_ARGV = [sys.executable, "-m", "mypy"]  # files and strictness come from pyproject.toml
# The extras whose installation scripts/check_wheel.py repeats (each installed from the package
# index). The others work the same way (`--extra models`) but pull torch, Ray or W&B: too big here.
CHECK_WHEEL_EXTRAS = ("math", "text", "serve", "eval", "select")
CHECK_WHEEL_ARGV = [sys.executable, str(ROOT / "scripts" / "check_wheel.py"),
                    *(arg for extra in CHECK_WHEEL_EXTRAS for arg in ("--extra", extra))]  # fmt: skip
#: Commands whose test only reads their result, by the fixture that hands it over. Each is the
#: suite's longest of its kind and leaves a core mostly idle (mypy strict on the whole package,
#: ~100 CPU-s cold; building the wheel and installing its extras into new venvs, mostly waiting
#: on pip), so when a test asks for one it starts as the run begins, beside the tests.
BACKGROUND = {"mypy_result": MYPY_ARGV, "check_wheel_result": CHECK_WHEEL_ARGV}
_RUNS = pytest.StashKey[dict[str, _Background]]()


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ()) if name in BACKGROUND}
    session.config.stash[_RUNS] = {name: _Background(BACKGROUND[name]) for name in sorted(wanted)}


def pytest_unconfigure(config: pytest.Config) -> None:
    for run in config.stash.get(_RUNS, {}).values():  # the run ended before their tests (-x, Ctrl-C)
        run.stop()


def _background_result(request: pytest.FixtureRequest, name: str) -> subprocess.CompletedProcess[str]:
    run = request.config.stash.get(_RUNS, {}).pop(name, None) or _Background(BACKGROUND[name])
    return run.result()


@pytest.fixture
def mypy_result(request: pytest.FixtureRequest) -> subprocess.CompletedProcess[str]:
    """The finished run of mypy on the package (stdout and stderr together in `stdout`)."""
    return _background_result(request, "mypy_result")


@pytest.fixture
def check_wheel_result(request: pytest.FixtureRequest) -> subprocess.CompletedProcess[str]:
    """The finished run of scripts/check_wheel.py with `CHECK_WHEEL_EXTRAS` (output in `stdout`)."""
    return _background_result(request, "check_wheel_result")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--ray-faults",
        type=int,
        default=3,
        metavar="N",
        help="N each of dying rows, never-answering rows and kill -9 of busy workers on the Ray backend "
        "(tests/serve/test_ray_faults.py; each costs Ray worker starts: N=200 takes minutes)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the shared Ray run last (in their usual order), so the cluster does not sit idle
    through the rest of the suite, taking CPU from it."""
    items.sort(key=lambda item: "ray_session" in getattr(item, "fixturenames", ()))
