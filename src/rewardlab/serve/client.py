"""Python clients of the reward server (httpx), sync and async, with retries.

    with Client("http://127.0.0.1:8000", token="...") as client:
        results = client.score("math", samples)          # list[RewardResult], in order
        totals = client.scores("math", samples)          # Scores: totals, statuses, errors

Batches larger than `batch_size` are split, and a batch the server refuses as too large (413
``too_many_samples``, ``exceeds_queue``, ``body_too_large``) is sent again in halves; every request
is retried on connection errors and on 502/503/504 (`retries` times) and on 429 (for up to
`overload_timeout` seconds) with jittered exponential backoff, waiting at least ``Retry-After``. Scoring is idempotent
(the server caches by content), so a retry after a lost reply never double-counts. Other 4xx
replies raise `ServerError` at once with the server's machine-readable ``code``.

`RemoteReward` turns a served reward back into a `Reward`, so anything that takes a Reward (the
runner, composites, adapters) can use a remote one; a server that cannot be reached gives
`error/remote` results, never zeros.

What goes over the wire (request bodies, decoded replies, `Scores`) is in `serve._wire`; when
to try again, in `serve._retry`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

try:
    import httpx
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core import JSON, BaseReward, ErrorKind, GroupKey, RewardResult, Sample
from rewardlab.errors import ServerError
from rewardlab.runner.groups import scatter
from rewardlab.serve._retry import _Retry, _too_large
from rewardlab.serve._wire import (
    ObjectiveWeights,
    SampleLike,
    Scores,
    _error_from,
    _Options,
    _results,
    _score_body,
    _scores,
)
from rewardlab.serve.request_groups import group_pieces, halves, rows_of

__all__ = ["AsyncClient", "Client", "RemoteReward", "Scores"]

_Part = TypeVar("_Part")  # what one batch's reply decodes to


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Client:
    """Synchronous client.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000``.
        token: bearer token, if the server requires one.
        timeout: seconds per HTTP request.
        retries: extra attempts after a failure (connection error, 502/503/504).
        overload_timeout: seconds a request keeps waiting out 429 replies (the server's queue
            is full) before giving up.
        backoff: first backoff in seconds (doubles per attempt).
        batch_size: samples per request.
        max_concurrency: requests in flight at once (2 keeps both ends busy).
        transport: an httpx transport.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 600.0,
        retries: int = 4,
        overload_timeout: float = 300.0,
        backoff: float = 0.5,
        batch_size: int = 256,
        max_concurrency: int = 2,
        transport: httpx.BaseTransport | None = None,
    ):
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self._retry = _Retry(retries, backoff, overload_timeout=overload_timeout)
        self._http = httpx.Client(base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request with retries; raises `ServerError` on a non-retryable or final failure."""
        schedule = self._retry.schedule()
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                wait = schedule.wait(None)
                if wait is None:
                    raise ServerError(0, "unreachable", f"{type(exc).__name__}: {exc} ({self._http.base_url})") from exc
                time.sleep(wait)
                continue
            if response.is_success:
                return response
            wait = schedule.wait(response)
            if wait is None:
                raise _error_from(response)
            time.sleep(wait)

    def score(
        self, reward: str, samples: Sequence[SampleLike], *, use_cache: bool = True, group_keys: Collection[GroupKey] = (),
        objective_weights: ObjectiveWeights | None = None,
    ) -> list[RewardResult]:
        """Results for `samples` under the served reward `reward`, in order.

        With ``max_concurrency > 1`` the batches go out from a few threads, so the server
        computes one batch while this process encodes the next and decodes the last.
        A group reward's `group_keys` (the server lists them, ``GET /v1/rewards``) keep each
        group in one request; `GroupSplitError` if the server cannot take a whole group.
        `objective_weights` (a mapping naming each objective, or a list in declaration order)
        weighs the objectives of a spec with ``combine = "objectives"`` for every sample that
        does not name its own (the request's ``objective_weights``).
        """
        opts = _Options(use_cache, objective_weights)
        if group_keys:
            grouped = self._group_batches(reward, samples, opts, "results", _results, group_keys)
            return scatter([rows for rows, _ in grouped], [part for _, part in grouped], len(samples))
        parts = self._batches(reward, samples, opts, "results", _results)
        return [r for part in parts for r in part]

    def scores(
        self, reward: str, samples: Sequence[SampleLike], *, use_cache: bool = True, group_keys: Collection[GroupKey] = (),
        objective_weights: ObjectiveWeights | None = None,
    ) -> Scores:
        """Only the totals, statuses and errors for `samples`, in order (see `Scores`).

        What a trainer needs, and several times cheaper than `score` for cheap rewards: the
        server sends three columns instead of full results, and nothing is decoded into
        `RewardResult`s. The server computes (and caches) the full results either way.
        `group_keys`, `objective_weights`: as in `score`.
        """
        opts = _Options(use_cache, objective_weights)
        if group_keys:
            return Scores.gather(self._group_batches(reward, samples, opts, "scores", _scores, group_keys), len(samples))
        return Scores.join(self._batches(reward, samples, opts, "scores", _scores))

    def _group_batches(
        self, reward: str, samples: Sequence[SampleLike], opts: _Options, reply: str,
        decode: Callable[[httpx.Response, int], _Part], keys: Collection[GroupKey],
    ) -> list[tuple[list[int], _Part]]:
        """`_batches` for a group reward: requests of whole groups, each reply with its positions."""

        def send(units: list[list[int]]) -> list[tuple[list[int], _Part]]:
            rows = rows_of(units)
            try:
                response = self.request("POST", f"/v1/rewards/{reward}:score", **_score_body([samples[i] for i in rows], opts, reply))
            except ServerError as exc:
                if not _too_large(exc, len(rows)):
                    raise
                first, second = halves(units, exc)
                return send(first) + send(second)
            return [(rows, decode(response, len(rows)))]

        pieces = group_pieces(samples, keys, self.batch_size)
        if self.max_concurrency <= 1 or len(pieces) <= 1:
            return [part for piece in pieces for part in send(piece)]
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="rewardlab-client") as pool:
            return [part for parts in pool.map(send, pieces) for part in parts]

    def _batches(
        self, reward: str, samples: Sequence[SampleLike], opts: _Options, reply: str,
        decode: Callable[[httpx.Response, int], _Part],
    ) -> list[_Part]:
        """One decoded reply per batch of `batch_size`, in order."""

        def send(chunk: Sequence[SampleLike]) -> list[_Part]:
            try:
                response = self.request("POST", f"/v1/rewards/{reward}:score", **_score_body(chunk, opts, reply))
            except ServerError as exc:
                if not _too_large(exc, len(chunk)):
                    raise
                half = len(chunk) // 2  # over the server's per-request limit: in halves, in order
                return send(chunk[:half]) + send(chunk[half:])
            return [decode(response, len(chunk))]

        def one(start: int) -> list[_Part]:
            return send(samples[start : start + self.batch_size])

        starts = range(0, len(samples), self.batch_size)
        if self.max_concurrency <= 1 or len(starts) <= 1:
            return [part for start in starts for part in one(start)]
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="rewardlab-client") as pool:
            return [part for parts in pool.map(one, starts) for part in parts]  # map keeps the order

    def rewards(self) -> list[dict[str, Any]]:
        """The served rewards with their spec hashes and schemas."""
        return list(self.request("GET", "/v1/rewards").json()["rewards"])

    def health(self) -> dict[str, Any]:
        """``GET /healthz``."""
        return dict(self.request("GET", "/healthz").json())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """Asynchronous client; `score` sends up to `max_concurrency` batches at once.

    Same arguments as `Client`, plus ``max_concurrency``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 600.0,
        retries: int = 4,
        overload_timeout: float = 300.0,
        backoff: float = 0.5,
        batch_size: int = 256,
        max_concurrency: int = 4,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self._retry = _Retry(retries, backoff, overload_timeout=overload_timeout)
        self._http = httpx.AsyncClient(base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport)

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request with retries (see `Client.request`)."""
        schedule = self._retry.schedule()
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                wait = schedule.wait(None)
                if wait is None:
                    raise ServerError(0, "unreachable", f"{type(exc).__name__}: {exc} ({self._http.base_url})") from exc
                await asyncio.sleep(wait)
                continue
            if response.is_success:
                return response
            wait = schedule.wait(response)
            if wait is None:
                raise _error_from(response)
            await asyncio.sleep(wait)

    async def score(
        self, reward: str, samples: Sequence[SampleLike], *, use_cache: bool = True, group_keys: Collection[GroupKey] = (),
        objective_weights: ObjectiveWeights | None = None,
    ) -> list[RewardResult]:
        """Results for `samples`, in order; batches are sent concurrently (`group_keys`: see `Client.score`)."""
        opts = _Options(use_cache, objective_weights)
        if group_keys:
            grouped = await self._group_batches(reward, samples, opts, "results", _results, group_keys)
            return scatter([rows for rows, _ in grouped], [part for _, part in grouped], len(samples))
        parts = await self._batches(reward, samples, opts, "results", _results)
        return [r for part in parts for r in part]

    async def scores(
        self, reward: str, samples: Sequence[SampleLike], *, use_cache: bool = True, group_keys: Collection[GroupKey] = (),
        objective_weights: ObjectiveWeights | None = None,
    ) -> Scores:
        """Only the totals, statuses and errors, in order (see `Client.scores`)."""
        opts = _Options(use_cache, objective_weights)
        if group_keys:
            parts = await self._group_batches(reward, samples, opts, "scores", _scores, group_keys)
            return Scores.gather(parts, len(samples))
        return Scores.join(await self._batches(reward, samples, opts, "scores", _scores))

    async def _group_batches(
        self, reward: str, samples: Sequence[SampleLike], opts: _Options, reply: str,
        decode: Callable[[httpx.Response, int], _Part], keys: Collection[GroupKey],
    ) -> list[tuple[list[int], _Part]]:
        """See `Client._group_batches`."""
        gate = asyncio.Semaphore(self.max_concurrency)

        async def send(units: list[list[int]]) -> list[tuple[list[int], _Part]]:
            rows = rows_of(units)
            try:
                async with gate:
                    body = _score_body([samples[i] for i in rows], opts, reply)
                    response = await self.request("POST", f"/v1/rewards/{reward}:score", **body)
            except ServerError as exc:
                if not _too_large(exc, len(rows)):
                    raise
                first, second = halves(units, exc)
                return await send(first) + await send(second)
            return [(rows, decode(response, len(rows)))]

        pieces = group_pieces(samples, keys, self.batch_size)
        return [part for parts in await asyncio.gather(*(send(p) for p in pieces)) for part in parts]

    async def _batches(
        self, reward: str, samples: Sequence[SampleLike], opts: _Options, reply: str,
        decode: Callable[[httpx.Response, int], _Part],
    ) -> list[_Part]:
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(chunk: Sequence[SampleLike]) -> list[_Part]:
            try:
                async with gate:
                    response = await self.request("POST", f"/v1/rewards/{reward}:score", **_score_body(chunk, opts, reply))
            except ServerError as exc:
                if not _too_large(exc, len(chunk)):
                    raise
                half = len(chunk) // 2  # over the server's per-request limit: in halves, in order
                return await one(chunk[:half]) + await one(chunk[half:])
            return [decode(response, len(chunk))]

        chunks = [samples[i : i + self.batch_size] for i in range(0, len(samples), self.batch_size)]
        if len(chunks) <= 1:
            return [part for c in chunks for part in await one(c)]
        return [part for parts in await asyncio.gather(*(one(c) for c in chunks)) for part in parts]

    async def rewards(self) -> list[dict[str, Any]]:
        """The served rewards."""
        return list((await self.request("GET", "/v1/rewards")).json()["rewards"])

    async def health(self) -> dict[str, Any]:
        """``GET /healthz``."""
        return dict((await self.request("GET", "/healthz")).json())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class RemoteReward(BaseReward):
    """A reward computed by a reward server, usable wherever a `Reward` is.

    Args:
        url: the server's base URL.
        reward: the served reward's name.
        token: bearer token, if needed.
        group_keys: a served group reward's keys (``GET /v1/rewards`` lists them): the runner and
            the client then keep each group in one batch and one request.
        client_options: passed to `Client` (timeout, retries, batch_size...).
    """

    def __init__(
        self, url: str, reward: str, *, token: str | None = None, group_keys: Collection[GroupKey] = (), **client_options: Any
    ):
        self.name = f"remote:{reward}"
        self.params = {"url": url, "reward": reward}
        self._reward = reward
        self.group_keys = frozenset(group_keys)
        self._client = Client(url, token=token, **client_options)

    def compute(self, sample: Sample) -> RewardResult:
        return self.score_batch([sample])[0]

    def score_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        try:
            return self._client.score(self._reward, list(samples), group_keys=self.group_keys)
        except ServerError as exc:
            return [RewardResult.failure(ErrorKind.REMOTE, str(exc))] * len(samples)

    def describe(self) -> dict[str, JSON]:
        # The served spec's hash, so results stamped locally trace to the remote reward; None
        # when the server cannot be asked (its results then carry the server's own stamps).
        try:
            info = next((r for r in self._client.rewards() if r["name"] == self._reward), None)
        except ServerError:
            info = None
        return {"use": "remote", "reward": self._reward, "spec_hash": info["spec_hash"] if info else None}

    def close(self) -> None:
        self._client.close()
