"""Rewards that misbehave on purpose, for runner tests (module-level so workers can use them)."""

import os
import re
import time

from rewardlab.core import reward


@reward("test.misbehave", range=(0, 1))
def misbehave(sample):
    """`hang-c`: catastrophic regex backtracking (C code, ignores signals in Python);
    `sleep`: sleeps; `die`: the process exits; `segv`: the process crashes; else 1.0."""
    text = sample.response_text
    if text == "hang-c":
        re.match(r"(a+)+$", "a" * 64 + "b")
    elif text == "sleep":
        time.sleep(60)
    elif text == "die":
        os._exit(3)
    elif text == "segv":
        import ctypes

        ctypes.string_at(0)
    return 1.0
