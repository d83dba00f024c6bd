"""A small client for OpenAI-compatible chat completions (vLLM, Ollama, llama.cpp, OpenAI).

Only `POST {base_url}/chat/completions` is used. Retries follow the usual advice for rate
limits and overloaded servers: retry on connection errors, timeouts, 408/409/429 and 5xx,
with exponential backoff and full jitter (AWS Architecture Blog, "Exponential Backoff and
Jitter", 2015), honouring a `Retry-After` header when the server sends one. Other 4xx
errors (a wrong model name, a bad request) are not retried: they will not get better.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardlab.core.jsontext import without_lone_surrogates
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.store.calls import CallCache

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Completion:
    """One chat completion: the text and what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: Any = None  # the choice's `logprobs` object, when requested and sent
    cached: bool = False  # served from the call cache: no request, no cost


@dataclass
class Usage:
    """Running token and cost totals of a judge (thread-safe through `add`)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    retries: int = 0
    cache_hits: int = 0
    errors: int = 0  # calls that failed for good (after retries): each is an error row

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def add(self, **deltas: float) -> None:
        with self._lock:
            for key, value in deltas.items():
                setattr(self, key, getattr(self, key) + value)

    def to_dict(self) -> dict[str, float]:
        keys = ("requests", "prompt_tokens", "completion_tokens", "cost", "retries", "cache_hits", "errors")
        return {k: getattr(self, k) for k in keys}


class ChatClient:
    """Thread-safe client for one OpenAI-compatible endpoint.

    Args:
        base_url: e.g. `http://127.0.0.1:8000/v1` (vLLM) or `http://localhost:11434/v1` (Ollama).
        api_key_env: the environment variable holding the API key (read per request; a
            missing variable sends no Authorization header, as local servers expect). Keys
            never go into specs.
        timeout: seconds per request.
        retries: attempts after the first one for retryable failures.
        backoff: base of the exponential backoff, in seconds.
        max_connections: connections kept open to the endpoint (at least the concurrency of
            the batches that share this client, or requests wait for a connection).
        cache: a `CallCache`: successful completions are stored and served again.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_connections: int = 100,
        cache: CallCache | None = None,
    ):
        import httpx

        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        if retries < 0 or timeout <= 0 or backoff < 0:
            raise ConfigError("need retries >= 0, timeout > 0, backoff >= 0")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key_env, self.retries, self.backoff = api_key_env, retries, backoff
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.Client(timeout=timeout, limits=limits)
        self.cache = cache
        self._httpx = httpx

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def complete(
        self, model: str, messages: Sequence[Mapping[str, str]], *, usage: Usage | None = None, vote: int = 0, **sampling: Any
    ) -> Completion:
        """One completion; raises `ScoringError` (`timeout` or `remote`) when it cannot get one.

        `vote` tells apart repeated identical requests (k-vote) in the call cache. A lone
        surrogate in the messages (a text cut inside a surrogate pair) is sent as U+FFFD: a
        request is UTF-8, which has no code for one.
        """
        body = {"model": model, "messages": list(messages), **{k: v for k, v in sampling.items() if v is not None}}
        body = without_lone_surrogates(body)
        key = self.cache.key(body, vote) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            if usage is not None:
                usage.add(cache_hits=1)
            return Completion(str(hit["text"]), 0, 0, hit.get("logprobs"), cached=True)
        try:
            completion = self._request(body, usage)
        except ScoringError:
            if usage is not None:
                usage.add(errors=1)
            raise
        if self.cache is not None:
            self.cache.put(key, {"text": completion.text, "logprobs": completion.logprobs})
        return completion

    def _request(self, body: Mapping[str, Any], usage: Usage | None) -> Completion:
        last, kind, last_retry_after = "no attempt made", "remote", None
        for attempt in range(self.retries + 1):
            if attempt:
                if usage is not None:
                    usage.add(retries=1)
                time.sleep(self._delay(attempt, last_retry_after))
            last_retry_after = None
            try:
                response = self._http.post(self.url, json=body, headers=self._headers())
            except self._httpx.TimeoutException as exc:
                last, kind = f"timed out after {self._http.timeout.read}s ({type(exc).__name__})", "timeout"
                continue
            except self._httpx.TransportError as exc:
                last, kind = f"cannot reach {self.url}: {exc}", "remote"
                continue
            if response.status_code in _RETRY_STATUS:
                last, kind = f"HTTP {response.status_code}: {response.text[:200]}", "remote"
                last_retry_after = response.headers.get("retry-after")
                continue
            if response.status_code >= 400:
                raise ScoringError("remote", f"judge endpoint {self.url} answered HTTP {response.status_code}: {response.text[:300]}")
            return self._parse(response, usage)
        raise ScoringError(kind, f"judge request failed after {self.retries + 1} attempt(s): {last}")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(60.0, float(retry_after))
            except ValueError:
                pass
        return random.uniform(0, self.backoff * 2 ** (attempt - 1))  # full jitter

    @staticmethod
    def _parse(response: Any, usage: Usage | None) -> Completion:
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
            counts = data.get("usage") or {}
            completion = Completion(
                str(text), int(counts.get("prompt_tokens") or 0), int(counts.get("completion_tokens") or 0), choice.get("logprobs")
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ScoringError("remote", f"judge endpoint sent an unexpected body ({type(exc).__name__}: {exc}): {response.text[:200]!r}") from exc
        if usage is not None:
            usage.add(requests=1, prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens)
        return completion

    def close(self) -> None:
        self._http.close()


class OwnsChatClient:
    """For a reward that talks to a judge through `self._client` (a `ChatClient` built by its
    `_new_client`): closing it, and pickling it for worker processes, which open their own
    connections instead of sharing the parent's."""

    _client: ChatClient

    def _new_client(self) -> ChatClient:
        raise NotImplementedError

    def close(self) -> None:
        """Close the HTTP client and the call cache."""
        self._client.close()
        if self._client.cache is not None:
            self._client.cache.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None  # a worker process opens its own connections
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client = self._new_client()

