"""The OpenRLHF remote-reward protocol, as pure functions.

OpenRLHF 0.11.2 (``SingleTurnAgentExecutor._fetch_rewards_via_http`` in
``openrlhf/utils/agent.py``, ``--reward.remote_url http://host:port/get_reward``) posts, per
generated sample, ``{"query": [...], "prompts": [...], "labels": [...]}``. ``query[i]`` is the
prompt and response decoded with ``skip_special_tokens=False``, so it carries the chat
template's tokens and the generation's end token (``<|im_end|>``, ``<eos>``...); ``prompts[i]``
is the prompt alone, ``labels[i]`` the ``--label_key`` column. It reads back ``rewards``,
``scores`` (dynamic filtering) and ``extra_logs``, each row's ``extra_logs`` becoming that
sample's ``Experience.info``; the samples of a step are then concatenated key by key.

`samples_from_openrlhf` maps a request to `Sample`s: the response is the text of ``query`` after
the prompt (the whole query when the prompt is not in it), with the special tokens removed from
prompt and response (`COMMON_SPECIAL_TOKENS` unless told otherwise); the reference is the label.
`openrlhf_reply` maps results back with the same ``extra_logs`` keys on every row (OpenRLHF's
``split_experience_batch`` refuses a step whose rows have different keys).

What OpenRLHF cannot handle: any reply other than a 200 with a number per row. It retries a
failed request five times, logs it without the body, and carries on with no reward, which
fails the step later. So a row that could not be scored must be sent as an explicit number
(`ServeSettings.openrlhf_error_reward`), flagged in ``extra_logs["rewardlab/error"]``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from rewardlab.core import RewardResult, Sample, Status
from rewardlab.core.columns import component_columns
from rewardlab.errors import MappingError

__all__ = [
    "COMMON_SPECIAL_TOKENS",
    "MappingError",
    "in_trusted_network",
    "openrlhf_reply",
    "samples_from_openrlhf",
    "strip_special_tokens",
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


def samples_from_openrlhf(
    query: Sequence[str],
    prompts: Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    metas: Sequence[dict[str, Any] | None] | None = None,
    *,
    special_tokens: Sequence[str] = COMMON_SPECIAL_TOKENS,
) -> list[Sample]:
    """One `Sample` per query (see the module doc); `special_tokens` are removed from the
    prompt and the response (an empty sequence keeps the text as sent).

    Raises:
        MappingError: ``prompts``, ``labels`` or ``metas`` do not have one entry per query.
    """
    n = len(query)
    for name, column in (("prompts", prompts), ("labels", labels), ("metas", metas)):
        if column is not None and len(column) != n:
            raise MappingError(f"{name!r} has {len(column)} entries for {n} queries; send one per query")
    samples = []
    for i, text in enumerate(query):
        prompt = prompts[i] if prompts is not None else ""
        clean_prompt = strip_special_tokens(prompt, special_tokens)
        meta = dict(metas[i] or {}) if metas is not None else {}
        samples.append(
            Sample(
                prompt=clean_prompt,
                response=_response_of(text, prompt, clean_prompt, special_tokens),
                reference=labels[i] if labels is not None else None,
                meta=meta,
            )
        )
    return samples


def _response_of(query: str, prompt: str, clean_prompt: str, special_tokens: Sequence[str]) -> str:
    """The text of `query` after `prompt`, without special tokens. The prompt is looked for as
    sent, then without special tokens (a tokenizer round trip may drop a BOS); when it is in
    neither, the whole query is the response."""
    at = query.find(prompt) if prompt else -1
    if at >= 0:
        return strip_special_tokens(query[at + len(prompt) :], special_tokens)
    clean = strip_special_tokens(query, special_tokens)
    at = clean.find(clean_prompt) if clean_prompt else -1
    return clean[at + len(clean_prompt) :] if at >= 0 else clean


def strip_special_tokens(text: str, tokens: Sequence[str]) -> str:
    """`text` without any of `tokens` (longest first, so a token containing another goes whole)."""
    for token in sorted(tokens, key=len, reverse=True):
        if token:
            text = text.replace(token, "")
    return text


def openrlhf_reply(
    results: Sequence[RewardResult], *, error_reward: float, components: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON OpenRLHF reads: ``rewards``, ``scores``, ``extra_logs`` (+ ``statuses``).

    Error and skipped results become `error_reward`. ``extra_logs`` has the same keys on every
    row: ``rewardlab/error`` and ``rewardlab/skipped`` (0/1), and for each of `components`
    ``rewardlab/<name>`` (its score, 0.0 without one) with ``rewardlab/<name>/scored`` (0/1).
    """
    rewards = [r.score if r.status is Status.OK and r.score is not None else float(error_reward) for r in results]
    extra_logs: dict[str, list[float]] = {
        "rewardlab/error": [1.0 if r.status is Status.ERROR else 0.0 for r in results],
        "rewardlab/skipped": [1.0 if r.status is Status.SKIPPED else 0.0 for r in results],
    }
    for result in results:
        for key, value in component_columns(result, components, prefix="rewardlab/").items():
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
