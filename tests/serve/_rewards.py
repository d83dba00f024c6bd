"""Rewards used by the serve tests: cheap, slow, and faulty ones (crash, hang, leak).

Importable by a server subprocess too (`register_all()`), so a spec can `use = "test.slow"`.
"""

from __future__ import annotations

import os
import threading
import time

from rewardlab.core import BaseReward, RewardResult, Sample

_LEAK: list[bytes] = []

# A spec of the built-in exact-match reward, served by several tests.
EXACT_SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


class Length(BaseReward):
    """len(response) / 100: cheap and deterministic."""

    name = "test.length"
    range = (0.0, 1e9)

    def compute(self, sample: Sample) -> float:
        return len(sample.response_text) / 100


class Slow(BaseReward):
    """Sleeps `delay` seconds, then scores like `Length`."""

    name = "test.slow"
    range = (0.0, 1e9)

    def __init__(self, *, delay: float = 0.01):
        self.delay = delay
        self.params = {"delay": delay}

    def compute(self, sample: Sample) -> float:
        time.sleep(self.delay)
        return len(sample.response_text) / 100


class Gated(BaseReward):
    """Scores like `Length`, but each call waits until the test sets `release`; `entered` is set
    once a call is waiting. The test decides when work finishes, so nothing depends on timing.
    In-process servers only (events do not cross processes)."""

    name = "test.gated"
    range = (0.0, 1e9)

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.params = {}

    def compute(self, sample: Sample) -> float:
        self.entered.set()
        if not self.release.wait(60):
            raise TimeoutError("the test never released the gate")
        return len(sample.response_text) / 100


class Faulty(BaseReward):
    """Misbehaves on command: response 'crash' kills the process, 'hang' never returns, 'sleep'
    sleeps an hour, 'leak' keeps 64 MiB alive forever, 'raise' raises; anything else scores like
    `Length`."""

    name = "test.faulty"
    range = (0.0, 1e9)

    def compute(self, sample: Sample) -> RewardResult | float:
        text = sample.response_text
        if text == "crash":
            os._exit(3)  # like a segfault: no exception, no cleanup
        if text == "hang":
            while True:  # a busy loop, as in C code that never yields
                pass
        if text == "sleep":  # hangs without burning a core
            time.sleep(3600)
        if text == "leak":
            _LEAK.append(bytes(64 * 1024 * 1024))
            return 0.5
        if text == "raise":
            raise RuntimeError("verifier bug")
        return len(text) / 100


def register_all() -> None:
    from rewardlab.core import registry

    for cls in (Length, Slow, Faulty):
        registry.register(cls.name, cls, overwrite=True)
