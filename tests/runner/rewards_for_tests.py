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


class GroupMean:
    """A minimal third-party group reward: each member scores the mean of its group's
    `meta["v"]` and says how many members it saw (declares `group_keys` and nothing else)."""

    name = "test.group_mean"
    range = (0.0, 100.0)
    group_keys = frozenset({"group"})

    def score(self, sample):
        return self.score_batch([sample])[0]

    def score_batch(self, samples):
        from rewardlab.core import RewardResult

        groups = {}
        for s in samples:
            groups.setdefault(s.group, []).append(float(s.meta["v"]))
        return [RewardResult.ok(sum(groups[s.group]) / len(groups[s.group]), info={"seen": len(groups[s.group])}) for s in samples]

    async def ascore_batch(self, samples):
        return self.score_batch(samples)

    def describe(self):
        return {"use": self.name}


class SlowGroup(GroupMean):
    """Sleeps `meta["sleep"]` seconds per group (for the per-group timeout budget)."""

    name = "test.slow_group"

    def score_batch(self, samples):
        time.sleep(max(float(s.meta.get("sleep", 0)) for s in samples))
        return super().score_batch(samples)
