"""LLM-as-a-judge reward against any OpenAI-compatible endpoint.

    [[reward.components]]
    name = "judge"
    use = "judge.llm"
    params = { base_url = "http://127.0.0.1:8000/v1", model = "qwen2.5-7b-instruct",
               template = "reference_1_10", samples = 3, cache = "judge.sqlite" }

Per sample: render the template, ask the endpoint `samples` times (k-sample averaging reduces
judge variance; Zheng et al. 2023), parse a score from each answer, map it from the template's
scale to [0, 1] (unless `normalize = false`) and average the parsed ones. No parseable score in
any answer is an `error/parse` result, never a 0. Failed requests are retried with backoff;
what still fails is `error/timeout` or `error/remote`.

Results are cached in the SQLite result store of `rewardlab.store` (keyed by the judge's
full description and the sample's content), so re-scoring the same sample costs no request.
Token counts and cost (from `price_per_1k_*`) are added up in `judge.usage` and reported per
sample in `info`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardlab.core import JSON, BaseReward, RewardResult, Sample, spec_hash
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.judges.client import ChatClient, Usage
from rewardlab.judges.protocols import p_yes, vote_scores
from rewardlab.templates import BUILTIN, parse_score, render


class LLMJudge(BaseReward):
    """A judge model's score of the response, in [0, 1] (or the raw scale without `normalize`).

    Args:
        base_url: the OpenAI-compatible API root (`.../v1`).
        model: the judge model name the endpoint serves.
        template: a built-in name (`score_1_10`, `reference_1_10`, `rubric_1_10`, `pass_fail`) or the user
            message text with `{{ placeholders }}` (see `rewardlab.templates`).
        system: the system message (default: the built-in template's; none for custom text).
        messages: a full message list `[{role, content}]` of templates, instead of
            `template`/`system` (what an imported OpenAI `score_model` grader uses).
        score_pattern: regex whose group 1 is the score (default: the built-in's, or
            `[[N]]`, "score: N" / "rating: N", or a lone number for custom templates).
        scale: the `[low, high]` the judge scores on; parsed values outside it are unparseable.
        normalize: map the score to [0, 1].
        samples: judge answers per sample (k votes).
        aggregate: how the k parsed scores combine: `mean` (k-sample averaging) or `majority`
            (self-consistency, Wang et al. 2023: the most frequent score; a tie between modes
            takes their mean and sets `info["vote_tie"]`).
        p_yes: score P(yes) from the first answer token's logprobs instead of parsing text
            (`P(yes) / (P(yes) + P(no))` over the top-20 alternatives, yes/no case- and
            space-insensitive); needs an endpoint that returns logprobs and a yes/no question
            (built-in template `yes_no`); it asks for one token (`max_tokens` is ignored).
            Neither word in the top alternatives is `error/parse`.
        temperature, max_tokens: sampling parameters sent to the endpoint.
        timeout, retries, backoff: per-request timeout, retries and backoff base (seconds).
        concurrency: requests in flight for a batch.
        cache: path of the SQLite result store (`rewardlab.store`), or None.
        price_per_1k_prompt, price_per_1k_completion: cost accounting, per 1000 tokens.
        api_key_env: environment variable with the API key (never put keys in specs).
    """

    name = "judge.llm"
    range = (0.0, 1.0)  # the default, normalised; the raw scale without `normalize`

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        template: str = "score_1_10",
        system: str | None = None,
        messages: list[dict[str, str]] | None = None,
        score_pattern: str | None = None,
        scale: tuple[float, float] | None = None,
        normalize: bool = True,
        samples: int = 1,
        aggregate: str = "mean",
        p_yes: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = 512,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        concurrency: int = 4,
        cache: str | None = None,
        price_per_1k_prompt: float = 0.0,
        price_per_1k_completion: float = 0.0,
        api_key_env: str = "OPENAI_API_KEY",
    ):
        if samples < 1 or concurrency < 1:
            raise ConfigError("samples and concurrency must be >= 1")
        if aggregate not in ("mean", "majority"):
            raise ConfigError(f"aggregate must be 'mean' or 'majority', got {aggregate!r}")
        self._aggregate, self._p_yes = aggregate, p_yes
        builtin = BUILTIN.get(template)
        default_pattern = builtin[2] if builtin else r"\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]|(?i:score|rating|grade)\s*[:=]?\s*(-?\d+(?:\.\d+)?)|^\s*(-?\d+(?:\.\d+)?)\s*$"
        self._messages = self._message_templates(template, system, messages, builtin)
        self._pattern = re.compile(score_pattern or default_pattern, re.MULTILINE)
        lo, hi = scale if scale is not None else (builtin[3] if builtin else (1.0, 10.0))
        if lo >= hi:
            raise ConfigError(f"scale low {lo} must be below high {hi}")
        self._scale = (float(lo), float(hi))
        self._normalize, self._samples, self._concurrency = normalize, samples, concurrency
        self._model = model
        self._sampling: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if p_yes:
            # only the first answer token is read: one token is all the call needs to generate
            self._sampling.update(logprobs=True, top_logprobs=20, max_tokens=1)
        self._prices = (price_per_1k_prompt, price_per_1k_completion)
        self.range = (0.0, 1.0) if normalize or p_yes else self._scale  # P(yes) is a probability
        self.params = {**self.params, "scale": list(self._scale)}  # the scale used, when left to the default
        self._client = self._new_client()
        self._cache_path = cache
        self._store: Any = None
        self.usage = Usage()

    @staticmethod
    def _message_templates(
        template: str, system: str | None, messages: list[dict[str, str]] | None, builtin: tuple[str, str, str, tuple[float, float]] | None
    ) -> list[dict[str, str]]:
        if messages is not None:
            if not messages or not all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in messages):
                raise ConfigError("messages must be a non-empty list of {role, content} objects")
            return [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        system_text = system if system is not None else (builtin[0] if builtin else None)
        user_text = builtin[1] if builtin else template
        out = [{"role": "system", "content": system_text}] if system_text else []
        return [*out, {"role": "user", "content": user_text}]

    # -- scoring -------------------------------------------------------------------------------
    def _judge(self, sample: Sample) -> RewardResult:
        messages = [{"role": m["role"], "content": render(m["content"], sample)} for m in self._messages]
        scores: list[float] = []
        raw: list[str] = []
        prompt_tokens = completion_tokens = 0
        for vote in range(self._samples):
            completion = self._client.complete(self._model, messages, usage=self.usage, vote=vote, **self._sampling)
            prompt_tokens += completion.prompt_tokens
            completion_tokens += completion.completion_tokens
            raw.append(completion.text[-300:])
            value = p_yes(completion.logprobs) if self._p_yes else parse_score(completion.text, self._pattern)
            if value is not None and (self._p_yes or self._scale[0] <= value <= self._scale[1]):
                scores.append(value)
        cost = (prompt_tokens * self._prices[0] + completion_tokens * self._prices[1]) / 1000
        self.usage.add(cost=cost)
        info: dict[str, JSON] = {"judge_scores": scores, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost": cost}
        if not scores:
            what = "no yes/no token in the first token's top logprobs" if self._p_yes else f"no score in [{self._scale[0]:g}, {self._scale[1]:g}]"
            raise ScoringError("parse", f"{what} in {self._samples} judge answer(s); last: {raw[-1]!r}")
        if self._p_yes:
            return RewardResult.ok(sum(scores) / len(scores), info={**info, "unparsed": self._samples - len(scores)})
        value, tie = vote_scores(scores, self._aggregate)
        lo, hi = self._scale
        score = (value - lo) / (hi - lo) if self._normalize else value
        info.update(raw_mean=sum(scores) / len(scores), unparsed=self._samples - len(scores))
        if self._aggregate == "majority":
            info.update(raw_vote=value, vote_tie=tie)
        return RewardResult.ok(score, info=info)

    def compute(self, sample: Sample) -> RewardResult:
        return self._judge(sample)

    def score(self, sample: Sample) -> RewardResult:
        return self.score_batch([sample])[0]  # through the cache

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult | float | bool | None]:
        store = self._open_store()
        key = spec_hash(self)
        cached = store.get_many(key, samples) if store is not None else [None] * len(samples)
        todo = [i for i, hit in enumerate(cached) if hit is None]
        self.usage.add(cache_hits=len(samples) - len(todo))
        with ThreadPoolExecutor(max_workers=min(self._concurrency, max(1, len(todo)))) as pool:
            fresh = list(pool.map(lambda i: self._safe_compute(samples[i]), todo))
        out: list[RewardResult | float | bool | None] = list(cached)
        for i, result in zip(todo, fresh, strict=True):
            out[i] = result
        if store is not None:
            store.put_many(key, [(samples[i], r) for i, r in zip(todo, fresh, strict=True) if isinstance(r, RewardResult)])
        return out

    def _open_store(self) -> Any:
        if self._cache_path is None:
            return None
        if self._store is None:
            from rewardlab.store import ResultStore

            self._store = ResultStore(self._cache_path)
        return self._store

    def close(self) -> None:
        """Close the HTTP client and the cache."""
        self._client.close()
        if self._store is not None:
            self._store.close()
            self._store = None

    def __getstate__(self) -> dict[str, Any]:
        # Worker processes re-open their own HTTP client and cache connection.
        state = dict(self.__dict__)
        state["_client"] = None
        state["_store"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client = self._new_client()

    def _new_client(self) -> ChatClient:
        p = self.params
        return ChatClient(
            str(p["base_url"]), api_key_env=str(p["api_key_env"]), timeout=float(p["timeout"]), retries=int(p["retries"]),
            backoff=float(p["backoff"]), max_connections=int(p["concurrency"]),
        )  # fmt: skip
