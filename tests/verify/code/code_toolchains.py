"""Tests of a language need its toolchain: skipped on a developer machine without it, a
failure in CI (CI=1), where `make system-deps` must have installed it."""

from __future__ import annotations

import os

import pytest

from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code.languages import LANGUAGES


def require_toolchain(name: str) -> None:
    """Skip (or, in CI, fail) unless bubblewrap and `name`'s toolchain are installed."""
    lang = LANGUAGES[name]
    missing = [what for what, ok in (("bubblewrap", find_bwrap() is not None), (lang.package, lang.compile is None or lang.available())) if not ok]
    if not missing:
        return
    message = f"{name}: {', '.join(missing)} not installed (make system-deps installs them)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must test every language", pytrace=False)
    pytest.skip(message)
