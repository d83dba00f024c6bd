"""Observing a composite's components: a hook the composite calls once per component call.

    times = ComponentTimes()
    observed = composite.observed(times)      # a copy; `composite` itself is not changed
    observed.score_batch(samples)             # same results as composite.score_batch(samples)
    times.drain()                             # [("format", 0.0004, 256), ("exact", 0.0011, 256)]

What a reward computes never depends on its observer, and nothing of the observation goes into
the results: a server collects component timings for its metrics through this hook
(`rewardlab.serve.metrics`), and executors that run a reward in other processes carry the
observations back to the observer in the caller's process (`rewardlab.runner.executors`).
"""

from __future__ import annotations

from rewardlab.core.reward import ComponentObserver

__all__ = ["ComponentObserver", "ComponentTimes", "Observation"]

#: (component name, wall seconds of the whole call, samples it scored in that call)
Observation = tuple[str, float, int]


class ComponentTimes:
    """A `ComponentObserver` that keeps its observations until `drain()`; safe across threads
    (an observation made while another thread drains lands in that drain or the next)."""

    def __init__(self) -> None:
        self._seen: list[Observation] = []

    def observe(self, component: str, seconds: float, samples: int) -> None:
        self._seen.append((component, seconds, samples))

    def drain(self) -> list[Observation]:
        """Every observation since the last drain, oldest first."""
        seen, self._seen = self._seen, []
        return seen

    def __repr__(self) -> str:
        return f"ComponentTimes({len(self._seen)} waiting)"
