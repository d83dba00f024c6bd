"""Labelling functions: `label(obs, action, next_obs, info) -> frozenset[str]`.

A labelling function says which events (propositions) hold after a transition; a reward
machine reads nothing else. Many environments already report their events in the step's info
dict; `InfoLabels` reads them from there and `RewardMachineWrapper` recognises it, reading the key
on its per-step path instead of making a Python call (about a tenth of a microsecond per step,
10% of a 1 us gridworld step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewardlab.errors import InputError

__all__ = ["InfoLabels", "LabelFn"]

LabelFn = Callable[[Any, Any, Any, dict[str, Any]], frozenset[str]]


class InfoLabels:
    """A labelling function that returns `info[key]`, or asks `fallback` when it is absent.

    Args:
        key: the info key where the env reports the labels of the step (a frozenset of str;
            any other iterable works but is converted on every step).
        fallback: called as `fallback(obs, action, next_obs, info)` when `info` has no `key`
            (or holds None there), e.g. to label observations replayed without their info.
            Without one, a missing key is an `InputError`.

    Examples:
        >>> labels = InfoLabels("labels")
        >>> labels(None, 0, None, {"labels": frozenset({"coffee"})})
        frozenset({'coffee'})
    """

    __slots__ = ("fallback", "key")

    def __init__(self, key: str, fallback: LabelFn | None = None):
        self.key, self.fallback = key, fallback

    def __call__(self, obs: Any, action: Any, next_obs: Any, info: dict[str, Any]) -> frozenset[str]:
        found = info.get(self.key)
        if found is not None:
            return found  # type: ignore[no-any-return]
        if self.fallback is None:
            raise InputError(
                f"the step's info has no {self.key!r} labels (keys: {sorted(info)}); "
                f"report them from the env or give InfoLabels({self.key!r}, fallback=...)"
            )
        return self.fallback(obs, action, next_obs, info)

    def __repr__(self) -> str:
        return f"InfoLabels({self.key!r}, fallback={self.fallback!r})"
