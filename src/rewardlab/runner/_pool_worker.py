"""The worker side of `rewardlab.runner.pool`: what runs in each forked worker process.

A worker reads chunks from its pipe, scores them, and answers with one pickled reply per chunk;
the shared `progress` array says which item it is on and since when, so the parent can time it
out or blame the right item when it dies (`rewardlab.runner._pool_dispatch`).
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from rewardlab.core import ErrorKind

_IDLE = 0.0  # progress[1] of a worker on no item


def _exit_with_parent() -> None:
    """Ask Linux to SIGKILL this process when the thread that forked it dies (PR_SET_PDEATHSIG).

    A worker (and the pool's fork server, `_pool_forker`, which forks the workers) inherits
    descriptors of its parent: if the parent is SIGKILLed, nothing else would end it, and a
    worker forked without a fork server would also keep a server's port bound, so a restarted
    server could not listen. No-op where prctl is unavailable (not Linux).
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _worker_main(
    conn: Connection, job: Callable[[Any], Any], on_error: Callable[[Any, ErrorKind, str], Any], progress: Any,
    weight: Callable[[Any], float] | None = None,
) -> None:
    """Runs in the child: score chunks until told to stop. `progress` = [index, started, weight]."""
    # A crash is reported to the parent as error/crash; a C traceback dump from the inherited
    # faulthandler would only add noise to the parent's stderr.
    faulthandler.disable()
    _exit_with_parent()
    while True:
        try:
            message = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if message is None:
            return
        task_id, items = message
        outs = []
        for k, item in enumerate(items):
            progress[0] = k
            if weight is not None:  # idle while the budget changes, so the parent never pairs
                progress[1] = _IDLE  # the last item's start with this item's (smaller) budget
                progress[2] = weight(item)
            progress[1] = time.monotonic()
            try:
                outs.append(job(item))
            except Exception as exc:  # the job should not raise; never lose the row if it does
                outs.append(on_error(item, ErrorKind.CRASH, f"{type(exc).__name__}: {exc}"))
        progress[1] = _IDLE
        conn.send_bytes(_reply_bytes(task_id, items, outs, on_error))


def _reply_bytes(task_id: int, items: list[Any], outs: list[Any], on_error: Callable[[Any, ErrorKind, str], Any]) -> memoryview:
    """The pickled reply to a chunk; an output that cannot be pickled (a reward returned an
    unpicklable object, or one nested too deep) becomes that item's `error/crash`, so the
    other items' outputs still come back and the worker lives on."""
    try:
        return ForkingPickler.dumps((task_id, outs))
    except Exception:  # any pickling failure (TypeError, RecursionError...): found per item below
        pass
    sendable = []
    for item, out in zip(items, outs, strict=True):
        try:
            ForkingPickler.dumps(out)
        except Exception as exc:
            out = on_error(item, ErrorKind.CRASH, f"the result cannot be sent back from the worker process: {_why(exc)}")
        sendable.append(out)
    return ForkingPickler.dumps((task_id, sendable))


def _why(exc: BaseException) -> str:
    """Why a value could not be pickled, in words a user can act on."""
    if isinstance(exc, RecursionError):
        return f"it is nested too deep to pickle ({type(exc).__name__}: {exc})"
    return f"it cannot be pickled ({type(exc).__name__}: {exc})"
