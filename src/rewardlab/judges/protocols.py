"""Judge protocols beyond one score per answer: pairwise with order swap, k-vote, P(yes).

Pairwise (`judge.pairwise`): the judge sees the response and a baseline answer (the sample's
`meta["baseline"]`) and names the better one. LLM judges prefer the first position (Zheng et
al. 2023, "Judging LLM-as-a-Judge", sec. 3.3; Wang et al. 2023, "Large Language Models are not
Fair Evaluators"), so with `swap` (the default) every pair is asked in both orders and the two
verdicts are averaged from the response's side: win = 1, tie = 0.5, loss = 0. A judge that
only follows position says "A" twice, which averages to 0.5, a tie, as MT-Bench counts
inconsistent verdicts; `info["consistent"]` says whether the two orders agreed.

    [[reward.components]]
    name = "vs_baseline"
    use = "judge.pairwise"
    params = { base_url = "http://127.0.0.1:8000/v1", model = "qwen2.5-7b-instruct", swap = true }
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardlab.core import JSON, BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.judges.client import ChatClient, OwnsChatClient, Usage
from rewardlab.store.calls import CallCache
from rewardlab.templates import PAIRWISE, render

__all__ = ["PairwiseJudge", "p_yes", "vote_scores"]

_YES, _NO = frozenset({"yes"}), frozenset({"no"})


def p_yes(logprobs: Any) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's top alternatives, or None if neither shows.

    Reading the verdict's probability instead of the sampled word gives a graded, better
    calibrated score from one call (Kadavath et al. 2022, "Language Models (Mostly) Know What
    They Know"). Tokens are compared lower-cased and stripped, so "Yes", " yes" and "YES" add up.
    """
    entries = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not entries or not isinstance(entries[0], dict):
        return None
    yes = no = 0.0
    for alt in entries[0].get("top_logprobs") or []:
        try:
            word, prob = str(alt["token"]).strip().lower(), math.exp(float(alt["logprob"]))
        except (KeyError, TypeError, ValueError):
            continue
        yes += prob if word in _YES else 0.0
        no += prob if word in _NO else 0.0
    return yes / (yes + no) if yes + no > 0 else None


def vote_scores(scores: Sequence[float], aggregate: str) -> tuple[float, bool]:
    """Combine k parsed scores: their mean, or the most frequent one (ties: mean of the modes).

    Returns:
        (value, tie): `tie` is True when several scores share the top count under `majority`.
    """
    if aggregate == "mean":
        return sum(scores) / len(scores), False
    counts = Counter(scores).most_common()
    modes = [value for value, count in counts if count == counts[0][1]]
    return sum(modes) / len(modes), len(modes) > 1


_WIN = {"A": 1.0, "B": 0.0, "C": 0.5}  # the response asked as A


class PairwiseJudge(OwnsChatClient, BaseReward):
    """Win rate of the response against a baseline answer, judged in both orders.

    Args:
        base_url: the OpenAI-compatible API root (`.../v1`).
        model: the judge model name.
        template: `pairwise` or `pairwise_reference` (adds `{{ reference }}`).
        baseline_key: the `meta` field holding the answer to compare with.
        swap: ask both orders and average (removes position bias; twice the calls).
        temperature, max_tokens, timeout, retries, backoff: as in `judge.llm`.
        concurrency: pairs judged at the same time in a batch.
        cache: path of the SQLite call cache, or None.
        price_per_1k_prompt, price_per_1k_completion: cost accounting per 1000 tokens.
        api_key_env: environment variable with the API key.
    """

    name = "judge.pairwise"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        template: str = "pairwise",
        baseline_key: str = "baseline",
        swap: bool = True,
        temperature: float | None = None,
        max_tokens: int | None = 512,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        concurrency: int = 8,
        cache: str | None = None,
        price_per_1k_prompt: float = 0.0,
        price_per_1k_completion: float = 0.0,
        api_key_env: str = "OPENAI_API_KEY",
    ):
        if template not in PAIRWISE:
            raise ConfigError(f"unknown pairwise template {template!r}; use one of {sorted(PAIRWISE)}")
        if concurrency < 1:
            raise ConfigError("concurrency must be >= 1")
        self._system, self._user, pattern = PAIRWISE[template]
        self._pattern = re.compile(pattern)
        self._sampling: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        self.usage = Usage()
        self._client = self._new_client()

    def _new_client(self) -> ChatClient:
        p: dict[str, Any] = dict(self.params)
        cache = CallCache(p["cache"]) if p["cache"] else None
        return ChatClient(
            p["base_url"], api_key_env=p["api_key_env"], timeout=p["timeout"], retries=p["retries"],
            backoff=p["backoff"], max_connections=p["concurrency"], cache=cache,
        )  # fmt: skip

    def _verdict(self, sample: Sample, first: str, second: str) -> tuple[str, int, int]:
        extra = {"answer_a": first, "answer_b": second}
        messages = [{"role": "system", "content": self._system}, {"role": "user", "content": render(self._user, sample, extra)}]
        completion = self._client.complete(str(self.params["model"]), messages, usage=self.usage, **self._sampling)
        found = self._pattern.findall(completion.text)
        if not found:
            raise ScoringError("parse", f"no [[A]]/[[B]]/[[C]] verdict in the judge's answer: {completion.text[-300:]!r}")
        return str(found[-1]), completion.prompt_tokens, completion.completion_tokens

    def compute(self, sample: Sample) -> RewardResult:
        baseline = sample.meta.get(str(self.params["baseline_key"]))
        if not isinstance(baseline, str):
            raise ScoringError("invalid_input", f"{self.name} needs the baseline answer as a string in meta[{self.params['baseline_key']!r}]")
        response = sample.response_text
        asked = [self._verdict(sample, response, baseline)]
        wins = [_WIN[asked[0][0]]]
        if self.params["swap"]:
            asked.append(self._verdict(sample, baseline, response))
            wins.append(1.0 - _WIN[asked[1][0]])  # the response was B
        prompt_tokens, completion_tokens = sum(a[1] for a in asked), sum(a[2] for a in asked)
        cost = (prompt_tokens * float(self.params["price_per_1k_prompt"]) + completion_tokens * float(self.params["price_per_1k_completion"])) / 1000
        self.usage.add(cost=cost)
        info: dict[str, JSON] = {
            "verdicts": [a[0] for a in asked], "wins": wins, "consistent": len(set(wins)) == 1,
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost": cost,
        }  # fmt: skip
        return RewardResult.ok(sum(wins) / len(wins), info=info)

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult | float | bool | None]:
        workers = min(int(self.params["concurrency"]), max(1, len(samples)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self._safe_compute, samples))
