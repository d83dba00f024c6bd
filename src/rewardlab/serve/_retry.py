"""When the client tries a request again: retries with backoff, and a batch refused as too large.

A connection error or a 502/503/504 is retried `retries` times; a 429 (the server's queue is
full) until `overload_timeout` seconds of waiting have passed; both with jittered exponential
backoff, waiting at least ``Retry-After`` (`_Retry`, one `_Schedule` per request). A 413 about
the size of one request is not waited out: the client sends the batch again in halves
(`_too_large`). Used by `rewardlab.serve.client`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from rewardlab.errors import ServerError

if TYPE_CHECKING:
    import httpx

_RETRY_STATUS = frozenset({429, 502, 503, 504})


class _Retry:
    """Which failures to retry and how long to wait (exponential backoff with jitter).

    Failures (connection errors, 502/503/504) get `retries` more attempts. A 429 is different:
    the server is up and says when to come back, so it is retried until `overload_timeout`
    seconds of waiting have passed (a busy server with many clients refuses some of them many
    times in a row; giving up after a few tries loses work the server would have done).
    """

    # The backoff of repeated 429s stops growing here: the server's Retry-After already tracks
    # its queue, and a long random wait only leaves its queue idle.
    _OVERLOAD_ATTEMPT_CAP = 3

    def __init__(self, retries: int, backoff: float, max_backoff: float = 30.0, overload_timeout: float = 300.0):
        self.retries, self.backoff, self.max_backoff = retries, backoff, max_backoff
        self.overload_timeout = overload_timeout

    def schedule(self) -> _Schedule:
        """The waits of one request."""
        return _Schedule(self)

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds to wait before retry `attempt + 1`.

        Exponential backoff with "equal jitter" (half fixed, half random; AWS Architecture Blog,
        "Exponential Backoff And Jitter", 2015). A ``Retry-After`` is a floor, never the whole
        wait: clients refused together are told the same number, and waiting exactly that long
        brings them back together into the same full queue. So a random share of the backoff
        (at least of the floor) is added on top of it.
        """
        backoff = min(self.max_backoff, self.backoff * 2**attempt)
        floor = _retry_after(response)
        if floor is None:
            return float(backoff * (0.5 + random.random() / 2))
        return float(min(max(self.max_backoff, floor), floor + random.random() * max(floor, backoff)))

    def retryable(self, response: httpx.Response) -> bool:
        return response.status_code in _RETRY_STATUS


class _Schedule:
    """How long one request waits before its next attempt; None: give up (see `_Retry`)."""

    def __init__(self, retry: _Retry):
        self.retry = retry
        self.failures = 0
        self.overloads = 0
        self.overloaded_seconds = 0.0

    def wait(self, response: httpx.Response | None) -> float | None:
        if response is not None and not self.retry.retryable(response):
            return None
        if response is not None and response.status_code == 429:
            seconds = self.retry.delay(min(self.overloads, _Retry._OVERLOAD_ATTEMPT_CAP), response)
            if self.overloaded_seconds + seconds > self.retry.overload_timeout:
                return None
            self.overloads += 1
            self.overloaded_seconds += seconds
            return seconds
        if self.failures >= self.retry.retries:
            return None
        self.failures += 1
        return self.retry.delay(self.failures - 1, response)


def _retry_after(response: httpx.Response | None) -> float | None:
    """The ``Retry-After`` seconds of `response` (None without one, or an HTTP date we skip)."""
    if response is None or "retry-after" not in response.headers:
        return None
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except ValueError:
        return None


# A 413 with one of these codes is about the number or bytes of samples in one request: the
# client sends the batch again in halves (the server's limits are its own, not known here).
_SPLIT_CODES = frozenset({"too_many_samples", "exceeds_queue", "body_too_large"})


def _too_large(exc: ServerError, size: int) -> bool:
    return exc.status == 413 and exc.code in _SPLIT_CODES and size > 1
