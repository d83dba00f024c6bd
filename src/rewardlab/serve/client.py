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
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

try:
    import httpx
    import orjson
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core import (
    JSON,
    BaseReward,
    ErrorKind,
    GroupKey,
    RewardError,
    RewardResult,
    Sample,
    Status,
)
from rewardlab.errors import ServerError
from rewardlab.runner.groups import scatter
from rewardlab.serve.request_groups import group_pieces, halves, rows_of

__all__ = ["AsyncClient", "Client", "RemoteReward", "Scores"]

_RETRY_STATUS = frozenset({429, 502, 503, 504})
_Part = TypeVar("_Part")  # what one batch's reply decodes to
SampleLike = Sample | Mapping[str, JSON]


def _payload(sample: SampleLike) -> dict[str, JSON]:
    if not isinstance(sample, Sample):
        return dict(sample)
    # Not `Sample.to_dict()`: that also computes a content hash the server does not need.
    row: dict[str, JSON] = {"prompt": sample.prompt, "response": sample.response, "reference": sample.reference}
    if sample.meta:
        row["meta"] = dict(sample.meta)
    if sample.steps is not None:
        row["steps"] = list(sample.steps)
    # Only an id the caller gave: reading `sample.id` would compute a content hash per sample.
    if sample.given_id:
        row["id"] = sample.given_id
    if sample.group is not None:
        row["group"] = sample.group
    return row


#: A request's objective weights: a mapping naming every objective, or a list in declaration order.
ObjectiveWeights = Mapping[str, float] | Sequence[float]


@dataclass(frozen=True)
class _Options:
    """The request fields besides the samples and the reply shape."""

    use_cache: bool = True
    objective_weights: ObjectiveWeights | None = None


def _score_body(chunk: Sequence[SampleLike], opts: _Options, reply: str = "results") -> dict[str, Any]:
    payload: dict[str, Any] = {"samples": [_payload(s) for s in chunk], "use_cache": opts.use_cache}
    if reply != "results":
        payload["reply"] = reply
    if (weights := opts.objective_weights) is not None:
        payload["objective_weights"] = dict(weights) if isinstance(weights, Mapping) else list(weights)
    try:
        content = orjson.dumps(payload, default=str)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (254 levels); the server reads 1,024
        content = json.dumps(payload, default=str, ensure_ascii=False, separators=(",", ":")).encode()
    return {"content": content, "headers": {"Content-Type": "application/json"}}


@dataclass(frozen=True)
class Scores:
    """The totals of a scored batch, in order, without components or info (``reply="scores"``).

    Attributes:
        values: the total per sample; ``None`` exactly where the status is not ``ok``.
        statuses: the status per sample.
        errors: why, for every row whose status is ``error`` (by row index).
        objectives: for a spec that declares objectives, each objective's value per sample
            (``None`` where it was not computed); empty otherwise.
    """

    values: list[float | None]
    statuses: list[Status]
    errors: dict[int, RewardError] = field(default_factory=dict)
    objectives: dict[str, list[float | None]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.values)

    @classmethod
    def gather(cls, parts: Sequence[tuple[Sequence[int], Scores]], n: int) -> Scores:
        """One `Scores` of `n` samples from parts that each scored the given positions."""
        values: list[float | None] = [None] * n
        statuses: list[Status] = [Status.ERROR] * n
        errors: dict[int, RewardError] = {}
        objectives: dict[str, list[float | None]] = {}
        for rows, part in parts:
            for row, i in enumerate(rows):
                values[i], statuses[i] = part.values[row], part.statuses[row]
            errors.update({rows[row]: error for row, error in part.errors.items()})
            for name, column in part.objectives.items():
                into = objectives.setdefault(name, [None] * n)
                for row, i in enumerate(rows):
                    into[i] = column[row]
        return cls(values, statuses, errors, objectives)

    @classmethod
    def join(cls, parts: Sequence[Scores]) -> Scores:
        """One `Scores` of consecutive batches (error rows re-indexed)."""
        values: list[float | None] = []
        statuses: list[Status] = []
        errors: dict[int, RewardError] = {}
        names = list(dict.fromkeys(name for part in parts for name in part.objectives))
        objectives: dict[str, list[float | None]] = {name: [] for name in names}
        for part in parts:
            errors.update({len(values) + row: error for row, error in part.errors.items()})
            values.extend(part.values)
            statuses.extend(part.statuses)
            for name in names:
                objectives[name].extend(part.objectives.get(name, [None] * len(part.values)))
        return cls(values, statuses, errors, objectives)


def _scores(response: httpx.Response, expected: int) -> Scores:
    body = orjson.loads(response.content)
    values, statuses = body["scores"], body["statuses"]
    if len(values) != expected or len(statuses) != expected:  # one per sample; never pad or truncate
        raise ServerError(response.status_code, "bad_reply", f"{len(values)} scores for {expected} samples")
    errors = {int(e["row"]): RewardError(_KIND.get(e["kind"], ErrorKind.REMOTE), str(e["message"])) for e in body["errors"]}
    objectives = body.get("objectives") or {}
    if any(len(column) != expected for column in objectives.values()):
        raise ServerError(response.status_code, "bad_reply", f"an objectives column does not have {expected} values")
    return Scores(values, [_STATUS[s] for s in statuses], errors, {str(k): list(v) for k, v in objectives.items()})


def _error_from(response: httpx.Response) -> ServerError:
    try:
        body = response.json()["error"]
        return ServerError(response.status_code, str(body["code"]), str(body["message"]), body.get("details", ()))
    except Exception:
        return ServerError(response.status_code, "http_error", response.text[:500])


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


_STATUS = {s.value: s for s in Status}
_KIND = {k.value: k for k in ErrorKind}


def _results(response: httpx.Response, expected: int) -> list[RewardResult]:
    rows = orjson.loads(response.content)["results"]
    if len(rows) != expected:  # the server promises one per sample; never pad or truncate
        raise ServerError(response.status_code, "bad_reply", f"{len(rows)} results for {expected} samples")
    try:
        return [RewardResult.from_dict(r) for r in rows]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # not a result row
        raise ServerError(response.status_code, "bad_reply", f"a result row is invalid: {exc}") from exc


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
