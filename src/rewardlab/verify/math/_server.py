"""Entry point of a sympy worker process (worker.py runs `main` without the package `__init__`s;
`python -m rewardlab.verify.math._server` works too).

Reads length-prefixed pickles `(function_name, args)` from stdin, runs
`rewardlab.verify.math.symbolic.<function_name>(*args)`, writes `("ok", value)` or
`("err", message)`. Exits on EOF (the parent closed the pipe or died).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
import time

_HEADER = struct.Struct(">I")


def _limit_memory() -> None:
    # A memory bomb (a huge expansion) should die with MemoryError here, not take the host.
    try:
        import resource

        mb = int(os.environ.get("REWARDLAB_MATH_WORKER_MEM_MB", "4096"))
        resource.setrlimit(resource.RLIMIT_AS, (mb * 1024 * 1024, mb * 1024 * 1024))
    except (ImportError, ValueError, OSError):
        pass


def _read(n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _exit_with_parent() -> None:
    # If the parent is SIGKILLed (e.g. by a runner timeout) our stdin reaches EOF only after the
    # current computation ends; a watchdog thread stops a long computation sooner.
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    # Our replies own the real stdout; anything a library prints goes to stderr instead.
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.setrecursionlimit(5000)
    _limit_memory()

    def send(message: object) -> None:
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(payload)) + payload)

    _exit_with_parent()
    from rewardlab.verify.math import symbolic

    symbolic.warm_up()
    send(("ready", os.getpid()))
    while True:
        header = _read(_HEADER.size)
        if header is None:
            return
        (size,) = _HEADER.unpack(header)
        body = _read(size)
        if body is None:
            return
        func, args = pickle.loads(body)
        try:
            send(("ok", getattr(symbolic, func)(*args)))
        except BaseException as exc:  # the parent turns this into an undecided verdict
            send(("err", f"{type(exc).__name__}: {str(exc)[:300]}"))


if __name__ == "__main__":
    main()
