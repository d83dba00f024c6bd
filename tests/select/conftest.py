"""`both_selector_paths`: runs a test with the compiled selection kernel and with the numpy
selectors it stands in for (the kernel is used whenever it is built, so without this the numpy
version would go untested wherever it is)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.select import _kernel


@pytest.fixture(params=["kernel", "numpy"])
def both_selector_paths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "numpy":
        monkeypatch.setattr(_kernel, "LIBRARY", None)
    elif _kernel.LIBRARY is None:
        pytest.skip("the selection kernel is not built (python hatch_build.py)")
    yield request.param
