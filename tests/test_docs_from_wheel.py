"""Every ```python example of README.md and docs/ runs from an installed wheel, outside the
repository: rewardlab comes from the built wheel (not this checkout), the working directory is
empty, and the examples' data comes from the package or is generated. The extras' libraries come
from the test environment (linked in by a .pth file), so nothing is downloaded.

The two kinds of example that talk to a model endpoint read its URL from the environment, as a
user would point them at vLLM or a judge; here they get loopback fakes from the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
sys.path[:0] = [str(ROOT / "tests" / "judges"), str(ROOT / "tests" / "select")]
from completions_server import CompletionsServer  # noqa: E402
from judge_server import JudgeServer  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory) -> Path:
    """An interpreter whose rewardlab is the wheel built from this checkout."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = work.glob("rewardlab-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    # The test environment's libraries after the venv's own, and not its editable rewardlab:
    # a path listed in a .pth file is no site directory, so the .pth files in it are not read.
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "zz_test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.check_output([str(python), "-c", "import rewardlab; print(rewardlab.__file__)"], text=True, cwd=work)
    assert where.startswith(str(site)), where  # the wheel's copy, not this checkout's
    return python


@pytest.fixture(scope="module")
def endpoints():
    with JudgeServer() as judge, CompletionsServer() as generator:
        yield {"JUDGE_BASE_URL": judge.base_url, "GENERATOR_BASE_URL": generator.base_url}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run_from_the_wheel(page, wheel_python, endpoints, tmp_path):
    env = {**os.environ, **endpoints, "PYTHONPATH": "", "MPLBACKEND": "Agg"}
    env["PATH"] = f"{wheel_python.parent}{os.pathsep}{env['PATH']}"  # its `rewardlab` command
    if "examples/quickstart" in page.read_text(encoding="utf-8"):  # what the README tells a pip user to do first
        subprocess.run(["rewardlab", "init", "--examples"], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=120)
    done = subprocess.run([str(wheel_python), str(ROOT / "tests" / "docs_page_runner.py"), str(page)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert done.returncode == 0 and not failures, "\n".join(failures) or done.stderr[-3000:]
