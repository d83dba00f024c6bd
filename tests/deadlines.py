"""Calls that must return: a wedged pool or server fails the test instead of hanging it, and
values nested deeper than pickle or a JSON parser goes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

#: Seconds a call may take before it counts as wedged. Every call it guards returns in well
#: under a second on an idle machine; generous, so a loaded CI machine never fails it by chance.
DEADLINE = 60.0


def nested(depth: int, leaf: Any = "x") -> Any:
    """`leaf` inside `depth` one-element lists."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def within_deadline(call: Callable[..., Any], *args: Any, deadline: float = DEADLINE, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)` on a thread; fails (instead of hanging) past `deadline` seconds."""
    out: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(call(*args, **kwargs))
        except BaseException as exc:  # handed to the caller below
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(deadline)
    assert not thread.is_alive(), f"{call!r} did not return within {deadline}s: wedged"
    if errors:
        raise errors[0]
    return out[0]
