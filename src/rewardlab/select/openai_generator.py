"""Step generation from an OpenAI-compatible completions endpoint (vLLM, sglang, llama.cpp, OpenAI).

One `POST {base_url}/completions` per search round: the prompts of every prefix go in one
request (`prompt` as a list; choice `index` i answers prompt i), generation stops at the step
delimiter (`stop`), so each choice is exactly one step. A step is final when it holds a final
answer (`\\boxed{...}`, read with `verify.math.extract_answer`) or when the model ended on its
own: `finish_reason == "stop"` with `stop_reason` null (vLLM and sglang report there which stop
string fired; servers without the field end a solution only by an answer or an empty step). Tokens are counted exactly from `logprobs.tokens` when the server returns them
(`logprobs=0` is requested), otherwise usage's completion tokens are shared out by characters.

Retries: connection errors, timeouts, 408/429/5xx, with exponential backoff and full jitter, as
`judges.client` does; other 4xx answers raise at once (a wrong model name will not get better).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from rewardlab._lazy import require
from rewardlab.core.jsontext import without_lone_surrogates
from rewardlab.errors import GenerationError
from rewardlab.select.generate import Problem, Step

__all__ = ["OpenAIStepGenerator"]

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def _math_answer(text: str) -> str | None:
    from rewardlab.verify.math import find_boxed

    boxes = find_boxed(text, which="last")
    return boxes[0] if boxes else None


class OpenAIStepGenerator:
    """A `StepGenerator` backed by an OpenAI-compatible `/completions` endpoint.

    Args:
        base_url: e.g. `http://127.0.0.1:8000/v1`.
        model: the served model's name.
        delimiter: the text between steps (generation stops there).
        template: how a problem becomes the prompt (`{prompt}` is replaced).
        max_step_tokens: the most tokens of one step (each request's `max_tokens`).
        temperature: sampling temperature (search needs diverse steps: temperature > 0).
        top_p: nucleus sampling's probability mass.
        answer: extracts the final answer of a step (None: not final by answer).
        api_key_env: environment variable with the API key (none sent when unset).
        timeout: seconds per request.
        retries: retries of a failed request (connection errors, timeouts, 408/429/5xx).
        backoff: the longest wait in seconds before the first retry (doubled at each retry; the wait is drawn
            uniformly below it: full jitter).

    Example (against a running server):
        >>> gen = OpenAIStepGenerator("http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-Math-1.5B-Instruct")  # doctest: +SKIP
        >>> gen.extend(Problem("What is 2 + 2?"), [()])[0].text  # doctest: +SKIP
    """

    def __init__(
        self, base_url: str, model: str, *, delimiter: str = "\n\n",
        template: str = "{prompt}\nPlease reason step by step, and put your final answer within \\boxed{}.\n",
        max_step_tokens: int = 256, temperature: float = 0.8, top_p: float = 1.0,
        answer: Callable[[str], str | None] = _math_answer, api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
    ):
        require("httpx", needed_by="the OpenAI-compatible generator", extra="select")
        import httpx

        if not base_url.startswith(("http://", "https://")):
            raise GenerationError(f"base_url must start with http:// or https://, got {base_url!r}")
        if not delimiter or max_step_tokens < 1 or retries < 0 or timeout <= 0:
            raise GenerationError("need a non-empty delimiter, max_step_tokens >= 1, retries >= 0 and timeout > 0")
        self.url = base_url.rstrip("/") + "/completions"
        self.model, self.delimiter, self.template = model, delimiter, template
        self.sampling = {"max_tokens": max_step_tokens, "temperature": temperature, "top_p": top_p}
        self.answer, self.api_key_env = answer, api_key_env
        self.retries, self.backoff = retries, backoff
        self._http = httpx.Client(timeout=timeout)
        self._httpx = httpx

    def prompt_of(self, problem: Problem, prefix: Sequence[Step]) -> str:
        """The text the model continues: the templated problem, then the steps so far."""
        head = self.template.replace("{prompt}", problem.prompt)
        return head + "".join(step.text + self.delimiter for step in prefix)

    def extend(self, problem: Problem, prefixes: Sequence[Sequence[Step]]) -> list[Step]:
        if not prefixes:
            return []
        body = {"model": self.model, "prompt": [self.prompt_of(problem, p) for p in prefixes], "n": 1,
                "stop": [self.delimiter], "logprobs": 0, **self.sampling}  # fmt: skip
        data = self._post(body)
        ordered = self._choices_in_order(data, len(prefixes))
        usage = data.get("usage") or {}
        if not isinstance(usage, dict):
            raise GenerationError(f"{self.url} sent usage as {type(usage).__name__}, not an object")
        shares = self._token_counts(ordered, usage)
        return [self._step(c, tokens) for c, tokens in zip(ordered, shares, strict=True)]

    def _choices_in_order(self, data: dict[str, Any], prompts: int) -> list[dict[str, Any]]:
        """The response's choices by `index`, checked: one object per prompt, indices 0..n-1
        each once, text a string (a server's reply is read as untrusted input)."""
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) != prompts:
            got = len(choices) if isinstance(choices, list) else type(choices).__name__
            raise GenerationError(f"{self.url} returned {got} choices for {prompts} prompts")
        if not all(isinstance(c, dict) for c in choices):
            raise GenerationError(f"{self.url} returned a choice that is not an object")
        indices = [c.get("index", i) for i, c in enumerate(choices)]
        if sorted(i if type(i) is int else -1 for i in indices) != list(range(prompts)):
            raise GenerationError(f"{self.url} returned choice indices {indices[:10]}; expected each of 0..{prompts - 1} once")
        if any(not isinstance(c.get("text") or "", str) for c in choices):
            raise GenerationError(f"{self.url} returned a choice whose text is not a string")
        return [c for _, c in sorted(zip(indices, choices, strict=True), key=lambda pair: pair[0])]

    def _step(self, choice: dict[str, Any], tokens: int) -> Step:
        text = str(choice.get("text") or "")
        reason = choice.get("finish_reason")
        if "stop_reason" in choice:  # vLLM/sglang: None means end-of-sequence, not the delimiter
            ended = reason == "stop" and choice["stop_reason"] is None
        else:  # EOS and the delimiter look alike here: only an empty step ends the solution
            ended = reason == "stop" and not text.strip()
        answer = self.answer(text)
        final = answer is not None or ended
        return Step(text=text.strip(), tokens=tokens, final=final, answer=answer,
                    meta={"finish_reason": reason, "stop_reason": choice.get("stop_reason")})  # fmt: skip

    @staticmethod
    def _token_counts(choices: list[dict[str, Any]], usage: dict[str, Any]) -> list[int]:
        exact = [logprobs.get("tokens") if isinstance(logprobs := c.get("logprobs"), dict) else None for c in choices]
        if all(isinstance(t, list) for t in exact):
            return [len(t) for t in exact]  # type: ignore[arg-type]
        reported = usage.get("completion_tokens")
        total = reported if type(reported) is int else 0  # anything else: not a count
        chars = [len(str(c.get("text") or "")) for c in choices]
        if total <= 0 or not sum(chars):
            return [max(1, n // 4) for n in chars]  # no count from the server: ~4 characters a token
        return [max(1, round(total * n / sum(chars))) for n in chars]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        body = without_lone_surrogates(body)  # a request is UTF-8: a lone surrogate is sent as U+FFFD
        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        last = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(random.uniform(0, self.backoff * 2 ** (attempt - 1)))  # full jitter
            try:
                response = self._http.post(self.url, json=body, headers=headers)
            except (self._httpx.TimeoutException, self._httpx.TransportError) as exc:
                last = f"cannot get an answer from {self.url}: {type(exc).__name__}: {exc}"
                continue
            if response.status_code in _RETRY_STATUS:
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:
                raise GenerationError(f"{self.url} answered HTTP {response.status_code}: {response.text[:300]}; check the model name and options")
            try:
                data = response.json()
            except ValueError as exc:
                raise GenerationError(f"{self.url} sent a body that is not JSON: {response.text[:200]}") from exc
            if not isinstance(data, dict):
                raise GenerationError(f"{self.url} sent {type(data).__name__}, not a completions object")
            return data
        raise GenerationError(f"generation failed after {self.retries + 1} attempt(s): {last}")

    def close(self) -> None:
        self._http.close()
