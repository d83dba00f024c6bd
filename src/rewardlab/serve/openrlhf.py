"""The OpenRLHF remote-reward protocol, as pure functions.

OpenRLHF 0.11.2 (``SingleTurnAgentExecutor._fetch_rewards_via_http`` in
``openrlhf/utils/agent.py``, ``--reward.remote_url http://host:port/get_reward``) posts, per
generated sample, ``{"query": [...], "prompts": [...], "labels": [...]}``. ``query[i]`` is the
prompt and response decoded with ``skip_special_tokens=False``, so it carries the chat
template's tokens and the generation's end token (``<|im_end|>``, ``<eos>``...); ``prompts[i]``
is the prompt alone, ``labels[i]`` the ``--label_key`` column. It reads back ``rewards``,
``scores`` (dynamic filtering) and ``extra_logs``, each row's ``extra_logs`` becoming that
sample's ``Experience.info``; the samples of a step are then concatenated key by key.

`openrlhf_rows` maps a request to `Sample`s: the response is the text of ``query`` after the
prompt, with the special tokens removed from prompt and response (`COMMON_SPECIAL_TOKENS` unless
told otherwise); the reference is the label. The prompt is looked for as sent, then without
special tokens, then under each Unicode normalisation a tokenizer may apply (NFC, NFKC, NFD,
NFKD: Qwen2's tokenizer normalises to NFC, so a decoded query need not hold the prompt's own
code points), the response being cut at the matching place of the original query. A prompt
found in none of these ways (a truncated prompt, another tokenizer) leaves the row an
`error/invalid_input` result saying so: scoring the whole query instead would give a wrong
number with no flag. Without ``prompts`` (older OpenRLHF) the whole query is the response.
`openrlhf_reply` maps results back with the same ``extra_logs`` keys on every row (OpenRLHF's
``split_experience_batch`` refuses a step whose rows have different keys).

What OpenRLHF cannot handle: any reply other than a 200 with a number per row. It retries a
failed request five times, logs it without the body, and carries on with no reward, which
fails the step later. So a row that could not be scored must be sent as an explicit number
(`ServeSettings.openrlhf_error_reward`), flagged in ``extra_logs["rewardlab/error"]``.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from rewardlab.core import ErrorKind, RewardResult, Sample, Status
from rewardlab.core.columns import component_columns, objective_columns
from rewardlab.core.jsontext import replace_lone_surrogates
from rewardlab.errors import MappingError

__all__ = [
    "COMMON_SPECIAL_TOKENS",
    "in_trusted_network",
    "openrlhf_reply",
    "openrlhf_rows",
    "prompt_end",
    "samples_from_openrlhf",
]

#: Special tokens of the common chat templates (ChatML/Qwen, Llama 3, Llama 2/Mistral, Gemma,
#: Phi-3, DeepSeek, GPT-2), removed from OpenRLHF queries by default. A tokenizer's own list is
#: `tokenizer.all_special_tokens` (`rewardlab serve --openrlhf-tokenizer PATH`).
COMMON_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|im_start|>", "<|im_end|>", "<|endoftext|>",
    "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>",
    "<s>", "</s>", "[INST]", "[/INST]",
    "<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>",
    "<|user|>", "<|assistant|>", "<|system|>", "<|end|>",
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
)  # fmt: skip


def openrlhf_rows(
    query: Sequence[str],
    prompts: Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    metas: Sequence[dict[str, Any] | None] | None = None,
    *,
    special_tokens: Sequence[str] = COMMON_SPECIAL_TOKENS,
) -> list[Sample | RewardResult]:
    """One `Sample` per query, or the `error/invalid_input` result of a row whose prompt is not
    in its query (see the module doc); `special_tokens` are removed from the prompt and the
    response (an empty sequence keeps the text as sent).

    Raises:
        MappingError: ``prompts``, ``labels`` or ``metas`` do not have one entry per query.
    """
    n = len(query)
    for name, column in (("prompts", prompts), ("labels", labels), ("metas", metas)):
        if column is not None and len(column) != n:
            raise MappingError(f"{name!r} has {len(column)} entries for {n} queries; send one per query")
    rows: list[Sample | RewardResult] = []
    for i, text in enumerate(query):
        prompt = prompts[i] if prompts is not None else None
        clean_prompt = strip_special_tokens(prompt or "", special_tokens)
        response = _response_of(text, prompt, clean_prompt, special_tokens)
        if response is None:
            rows.append(RewardResult.failure(ErrorKind.INVALID_INPUT, _not_located(i, text, clean_prompt)))
            continue
        meta = dict(metas[i] or {}) if metas is not None else {}
        reference = labels[i] if labels is not None else None
        rows.append(Sample(prompt=clean_prompt, response=response, reference=reference, meta=meta))
    return rows


def samples_from_openrlhf(
    query: Sequence[str],
    prompts: Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    metas: Sequence[dict[str, Any] | None] | None = None,
    *,
    special_tokens: Sequence[str] = COMMON_SPECIAL_TOKENS,
) -> list[Sample]:
    """`openrlhf_rows` where every row must become a `Sample`.

    Raises:
        MappingError: a column has the wrong length, or a row's prompt is not in its query
            (`openrlhf_rows` makes that row an error result instead).
    """
    rows = openrlhf_rows(query, prompts, labels, metas, special_tokens=special_tokens)
    problems = [f"row {i}: {row.error.message}" for i, row in enumerate(rows) if isinstance(row, RewardResult) and row.error]
    if problems:
        raise MappingError("; ".join(problems))
    return [row for row in rows if isinstance(row, Sample)]


#: The Unicode normalisations a tokenizer's normaliser may apply (`tokenizers.normalizers`).
_FORMS: tuple[Literal["NFC", "NFKC", "NFD", "NFKD"], ...] = ("NFC", "NFKC", "NFD", "NFKD")


def _response_of(query: str, prompt: str | None, clean_prompt: str, special_tokens: Sequence[str]) -> str | None:
    """The text of `query` after `prompt`, without special tokens; None when the prompt is not
    in it. Looked for as sent, then without special tokens (a tokenizer round trip may drop a
    BOS), each first exactly and then Unicode-normalised. No prompt: the whole query."""
    if not prompt:
        return strip_special_tokens(query, special_tokens)
    end = prompt_end(query, prompt)
    if end is not None:
        return strip_special_tokens(query[end:], special_tokens)
    clean = strip_special_tokens(query, special_tokens)
    if not clean_prompt:  # the prompt was special tokens only (a BOS the decoder dropped): nothing precedes the response
        return clean
    end = prompt_end(clean, clean_prompt)
    return clean[end:] if end is not None else None


def prompt_end(text: str, prompt: str) -> int | None:
    """The offset in `text` just after `prompt`: found as is, or else under a Unicode
    normalisation (`_FORMS`) of both, mapped back to `text`'s own offsets; None if neither.
    A lone surrogate in either counts as U+FFFD, what a tokenizer round trip makes of a
    character cut in two (one code point for one: offsets hold).

    >>> prompt_end("Q: cafe\u0301? A: yes", "Q: caf\u00e9?")  # the prompt NFC, the text NFD
    9
    """
    text, prompt = replace_lone_surrogates(text), replace_lone_surrogates(prompt)
    at = text.find(prompt)
    if at >= 0:
        return at + len(prompt)
    for form in _FORMS:
        normal_prompt = unicodedata.normalize(form, prompt)
        normal_text = unicodedata.normalize(form, text)
        at = normal_text.find(normal_prompt)
        if at >= 0:
            end = _original_offset(text, form, normal_text[: at + len(normal_prompt)])
            if end is not None:
                return end
    return None


def _original_offset(text: str, form: Literal["NFC", "NFKC", "NFD", "NFKD"], normal_prefix: str) -> int | None:
    """The shortest prefix of `text` whose `form` normalisation is `normal_prefix`, as its
    length; None when no cut of `text` gives it (the prompt ends inside a composed character)."""
    k = len(normal_prefix)
    lo, hi = 0, len(text)
    while lo < hi:  # the first cut whose normal form is at least k long (lengths grow with the cut)
        mid = (lo + hi) // 2
        if len(unicodedata.normalize(form, text[:mid])) < k:
            lo = mid + 1
        else:
            hi = mid
    for end in range(lo, len(text) + 1):
        normal = unicodedata.normalize(form, text[:end])
        if normal == normal_prefix:
            return end
        if len(normal) > k:  # past it (combining marks that join the prompt's last letter are taken above)
            return None
    return None


def _not_located(row: int, query: str, clean_prompt: str) -> str:
    return (
        f"row {row}: the prompt ({len(clean_prompt)} characters, starting {clean_prompt[:40]!r}) is not in the query "
        f"({len(query)} characters), as sent, without special tokens, or under Unicode normalisation "
        f"({', '.join(_FORMS)}), so the response cannot be told apart from it; the prompt may have been truncated, or "
        "the query decoded by another tokenizer. Send the prompt exactly as it appears at the start of the query"
    )


def strip_special_tokens(text: str, tokens: Sequence[str]) -> str:
    """`text` without any of `tokens` (longest first, so a token containing another goes whole)."""
    for token in sorted(tokens, key=len, reverse=True):
        if token:
            text = text.replace(token, "")
    return text


def openrlhf_reply(
    results: Sequence[RewardResult], *, error_reward: float, components: Sequence[str] = (), objectives: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON OpenRLHF reads: ``rewards``, ``scores``, ``extra_logs`` (+ ``statuses``).

    Error and skipped results become `error_reward`. ``extra_logs`` has the same keys on every
    row: ``rewardlab/error`` and ``rewardlab/skipped`` (0/1), and for each of `components`
    ``rewardlab/<name>`` (its score, 0.0 without one) with ``rewardlab/<name>/scored`` (0/1), and
    for each of `objectives` ``rewardlab/objective/<name>`` with its ``/scored`` mask alike:
    OpenRLHF logs each key's batch mean, so an objective's mean over the rows where it was
    computed is ``sum(rewardlab/objective/<name>) / sum(rewardlab/objective/<name>/scored)``.
    """
    rewards = [r.score if r.status is Status.OK and r.score is not None else float(error_reward) for r in results]
    extra_logs: dict[str, list[float]] = {
        "rewardlab/error": [1.0 if r.status is Status.ERROR else 0.0 for r in results],
        "rewardlab/skipped": [1.0 if r.status is Status.SKIPPED else 0.0 for r in results],
    }
    for result in results:
        columns = {**component_columns(result, components, prefix="rewardlab/"),
                   **objective_columns(result, objectives, prefix="rewardlab/")}  # fmt: skip
        for key, value in columns.items():
            extra_logs.setdefault(key, []).append(value)
    return {
        "rewards": rewards,
        "scores": list(rewards),
        "extra_logs": extra_logs,
        "statuses": [r.status.value for r in results],
    }


def in_trusted_network(host: str | None, networks: Iterable[str]) -> bool:
    """Whether the client address `host` lies in one of `networks` (CIDR strings)."""
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a unix socket or a name: not an address we can place
        return False
    return any(address in ipaddress.ip_network(n, strict=False) for n in networks)
