"""`rewardlab.serve`'s public names resolve, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import rewardlab.serve as serve


def test_every_public_name_resolves():
    for name in serve.__all__:
        assert getattr(serve, name) is not None, name


def test_import_does_not_pull_the_server_stack():
    code = "import sys, rewardlab.serve; print(sorted({'fastapi', 'uvicorn', 'ray'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
