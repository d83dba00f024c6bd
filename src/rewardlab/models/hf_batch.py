"""From samples to model outputs for off-the-shelf HF models: prompt + response as token ids
(the model's own chat template or a text pair), explicit truncation, token-budget batches.

Three rules keep a sample's score independent of its batch, so a batched score equals the score
of the model called on that sample alone (tested to 1e-5):

* ids are built per sample exactly as transformers builds them: the rendered chat template
  tokenized with `add_special_tokens=False` (what `apply_chat_template(tokenize=True)` does),
  or `tokenizer(prompt, response)` without a template, with the tokenizer's `token_type_ids`
  (segment A / B: BERT, MiniLM and ELECTRA cross-encoders read them) whenever it returns them
  and the model's forward takes them, as `model(**tokenizer(...))` passes them;
* models that read their last token (`pools_last_token`: causal decoders) are padded on the
  left with position ids counted from the attention mask (when their forward takes them), so the
  last real token is the last position (what `*ForSequenceClassification` pools when the config
  has no pad token, and the rightmost non-pad token when it has one); encoders are padded on the
  right, where position 0 is `[CLS]` whatever the length;
* batches are cut by a token budget over length-sorted samples: a batch costs its size times its
  longest sample, so sorting makes padding small and the budget keeps memory flat whatever the
  lengths (long samples go in small batches, short ones in large).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core import ErrorKind, RewardResult, Sample
from rewardlab.core.jsontext import replace_lone_surrogates
from rewardlab.core.sample import JSON, Text
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.models.backbones import is_decoder
from rewardlab.models.hf_load import LoadedModel

__all__ = [
    "Encoded",
    "InputBuilder",
    "accepts",
    "messages_of",
    "pools_last_token",
    "run_batches",
    "score_each",
    "token_budget_batches",
]

Message = dict[str, str]
#: reads what a batch's forward returned, given its inputs (`input_ids`, `attention_mask`), into
#: one tensor per row
Reader = Callable[[Any, dict[str, torch.Tensor]], list[torch.Tensor]]

# A model with no usable limit in its config or tokenizer: a long context that still fits CPU memory.
_FALLBACK_MAX_LENGTH = 4096


def messages_of(value: Text, role: str) -> list[Message]:
    """Chat messages (role, text content) from a string or a message list."""
    if isinstance(value, str):
        return [{"role": role, "content": value}] if value else []
    out = []
    for m in value:
        content = m.get("content", "")
        if isinstance(content, list):  # multi-part content: the text parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        out.append({"role": str(m.get("role", role)), "content": str(content)})
    return out


def default_max_length(loaded: LoadedModel) -> int:
    """The model's context: `max_position_embeddings`, lowered by the tokenizer's own limit."""
    limits = [int(v) for v in (getattr(loaded.config, "max_position_embeddings", None),
                               getattr(loaded.tokenizer, "model_max_length", None))
              if isinstance(v, int) and 0 < v < 1_000_000]  # tokenizers without a limit say 1e30
    return min(limits) if limits else _FALLBACK_MAX_LENGTH


@dataclass(frozen=True)
class Encoded:
    """One sample's token ids, its segment ids (`token_type_ids`; None when the tokenizer gives
    none or the model takes none), and what truncation cut (None when nothing was cut)."""

    ids: list[int]
    cut: dict[str, JSON] | None = None
    types: list[int] | None = None


class InputBuilder:
    """Token ids of (prompt, response) for one model, cut to `max_length` when needed.

    Args:
        loaded: the model and tokenizer.
        chat_template: apply the tokenizer's chat template (None: when it has one).
        system_prompt: a system message put first when the prompt has none.
        truncation: `head_tail` (default): longer inputs keep the prompt's head and the response's
            tail (where it states its answer); `longest_first`: what a model card's
            `tokenizer(..., truncation=True, max_length=...)` does (a text pair loses tokens from
            the end of its longer segment, a rendered chat loses its end), for parity checks.
        max_length: tokens per input; longer inputs keep the prompt's head and the response's
            tail (where it states its answer) and report the cut.

    Raises:
        ConfigError: `chat_template=True` for a tokenizer without one, `max_length` < 8, or an
            unknown `truncation`.
    """

    def __init__(self, loaded: LoadedModel, *, chat_template: bool | None, system_prompt: str | None,
                 max_length: int | None, truncation: str = "head_tail"):
        self.loaded = loaded
        self.tokenizer = loaded.tokenizer
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if chat_template and not has_template:
            raise ConfigError(f"chat_template=True, but the tokenizer of {loaded.directory} has no chat template; "
                              "set chat_template=false to score the (prompt, response) text pair")
        self.use_template = has_template if chat_template is None else chat_template
        self.segments = accepts(loaded.model, "token_type_ids")
        self.system_prompt = system_prompt
        self.max_length = default_max_length(loaded) if max_length is None else max_length
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8 tokens, got {self.max_length}")
        if truncation not in ("head_tail", "longest_first"):
            raise ConfigError(f"truncation must be 'head_tail' or 'longest_first', got {truncation!r}")
        self.truncation = truncation

    # -- one sample --------------------------------------------------------------------------
    def encode(self, prompt: Text, response: list[Message], *, cut_response: bool = True) -> Encoded:
        """Ids of prompt + response; with `cut_response=False` only the prompt may be cut
        (a PRM needs every step).

        Raises:
            ScoringError: `invalid_input` when the input cannot be cut to fit.
        """
        head, response = _tokenizable(messages_of(prompt, "user")), _tokenizable(response)
        if self.system_prompt and not (head and head[0]["role"] == "system"):
            head = [{"role": "system", "content": self.system_prompt}, *head]
        with self.loaded.lock:
            ids, types = self._render(head, response)
            if len(ids) <= self.max_length:
                return Encoded(ids, types=types)
            if self.truncation == "longest_first" and cut_response:
                total = len(ids)
                ids, types = self._render(head, response, limit=self.max_length)
                return Encoded(ids, types=types, cut={"max_length": self.max_length, "strategy": "longest_first",
                                                      "tokens": total, "tokens_kept": len(ids)})
            return self._fit(head, response, len(ids), cut_response)

    def _render(self, prompt: list[Message], response: list[Message], *,
                limit: int | None = None) -> tuple[list[int], list[int] | None]:
        """Ids and segment ids, the latter only when the tokenizer returns them and the model
        takes them; with `limit`, cut by the tokenizer itself (`truncation=True`)."""
        tok = self.tokenizer
        cut: dict[str, Any] = {} if limit is None else {"truncation": True, "max_length": limit}
        if self.use_template:
            text = tok.apply_chat_template([*prompt, *response], tokenize=False)
            encoded = tok(text, add_special_tokens=False, **cut)
        else:
            first = "\n".join(m["content"] for m in prompt)
            second = "\n".join(m["content"] for m in response)
            encoded = tok(first, second, **cut) if first else tok(second, **cut)
        types = encoded.get("token_type_ids") if self.segments else None
        return list(encoded["input_ids"]), None if types is None else list(types)

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"])

    def _fit(self, prompt: list[Message], response: list[Message], total: int, cut_response: bool) -> Encoded:
        if not getattr(self.tokenizer, "is_fast", False):
            raise ScoringError(ErrorKind.INVALID_INPUT, f"input is {total} tokens, over max_length={self.max_length}, "
                               "and a slow tokenizer gives no offsets to cut at; raise max_length")
        p_offsets = [self._offsets(m["content"]) for m in prompt]
        r_offsets = [self._offsets(m["content"]) for m in response]
        n_prompt, n_response = sum(map(len, p_offsets)), sum(map(len, r_offsets))
        budget = self.max_length - (total - n_prompt - n_response)  # minus the template's own tokens
        for _ in range(4):  # tokens may merge across a cut: shrink by the excess and retry
            if cut_response:
                keep_p = min(n_prompt, max(budget // 2, budget - n_response))
                keep_r = min(n_response, budget - keep_p)
            else:
                keep_p, keep_r = min(n_prompt, budget - n_response), n_response
            if keep_p < 0 or keep_r < 1:
                break
            ids, types = self._render(_keep_head(prompt, p_offsets, keep_p), _keep_tail(response, r_offsets, keep_r))
            if len(ids) <= self.max_length:
                return Encoded(ids, types=types, cut={
                    "max_length": self.max_length, "prompt_tokens": n_prompt, "prompt_tokens_kept": keep_p,
                    "response_tokens": n_response, "response_tokens_kept": keep_r})
            budget -= len(ids) - self.max_length
        what = "the response alone" if not cut_response else "the template's own tokens"
        raise ScoringError(ErrorKind.INVALID_INPUT, f"input is {total} tokens and cannot be cut to "
                           f"max_length={self.max_length} ({what} leave no room); raise max_length")


def _tokenizable(messages: list[Message]) -> list[Message]:
    """Messages whose text a tokenizer takes: a lone surrogate (a text cut inside a surrogate
    pair, read from JSON's escape) as U+FFFD, which is also what the tokenizer's own decoder
    gives for a partial character; the tokenizers refuse the whole text otherwise."""
    return [{**m, "content": replace_lone_surrogates(m["content"])} for m in messages]


def _keep_head(messages: list[Message], offsets: list[list[tuple[int, int]]], n: int) -> list[Message]:
    """The first `n` content tokens of `messages`, in order; messages past the cut are dropped."""
    out = []
    for message, spans in zip(messages, offsets, strict=True):
        if n <= 0:
            break
        if len(spans) <= n:
            out.append(message)
        else:
            out.append({**message, "content": message["content"][: spans[n - 1][1]]})
        n -= len(spans)
    return out


def _keep_tail(messages: list[Message], offsets: list[list[tuple[int, int]]], n: int) -> list[Message]:
    """The last `n` content tokens of `messages`; messages before the cut are dropped."""
    out = []
    for message, spans in zip(reversed(messages), reversed(offsets), strict=True):
        if n <= 0:
            break
        if len(spans) <= n:
            out.append(message)
        else:
            out.append({**message, "content": message["content"][spans[len(spans) - n][0]:]})
        n -= len(spans)
    return out[::-1]


# -- batches -----------------------------------------------------------------------------------
def token_budget_batches(lengths: Sequence[int], *, max_tokens: int, max_batch: int) -> list[list[int]]:
    """Indices grouped into batches of at most `max_batch` samples whose padded size (batch size
    times its longest sample) stays within `max_tokens`; longest first. A sample longer than the
    budget is a batch of its own."""
    if max_tokens < 1 or max_batch < 1:
        raise ConfigError(f"max_tokens and max_batch must be >= 1, got {max_tokens} and {max_batch}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:  # descending: the first sample of a batch is its longest
        if current and (len(current) >= max_batch or lengths[current[0]] * (len(current) + 1) > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _pad(seqs: Sequence[Encoded], *, pad_id: int, left: bool, positions: bool,
         device: torch.device) -> dict[str, torch.Tensor]:
    """Model inputs, each (B, T); `token_type_ids` when the sequences carry them (pads are segment 0)."""
    width = max(len(s.ids) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    types = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        start = width - len(seq.ids) if left else 0
        ids[row, start : start + len(seq.ids)] = torch.tensor(seq.ids, dtype=torch.long)
        mask[row, start : start + len(seq.ids)] = 1
        if seq.types is not None:
            types[row, start : start + len(seq.ids)] = torch.tensor(seq.types, dtype=torch.long)
    inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
    if any(s.types is not None for s in seqs):
        inputs["token_type_ids"] = types.to(device)
    if left and positions:  # positions count real tokens only, so left padding changes nothing (see module doc)
        inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)
    return inputs


def _pad_id(loaded: LoadedModel) -> int:
    for value in (getattr(loaded.config, "pad_token_id", None), loaded.tokenizer.pad_token_id,
                  loaded.tokenizer.eos_token_id):
        if isinstance(value, int) and value >= 0:
            return value
    return 0  # masked out, and a config without pad_token_id pools the last position anyway


def accepts(model: Any, name: str) -> bool:
    """Whether `model`'s forward takes the input `name` (a named parameter; `**kwargs` does not count,
    since transformers forwards those to attention kernels, not to the embeddings)."""
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a forward without a readable signature
        return False


def pools_last_token(model: Any) -> bool:
    """Whether `model` is a causal decoder that reads its last real token, read from the model
    itself rather than a list of names: its class is transformers' generic last-token sequence
    classifier, or its model type has a causal-LM class and no masked-LM class (BERT, RoBERTa,
    ELECTRA and DeBERTa have both) and it is not an encoder-decoder."""
    import importlib

    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    try:  # transformers >= 4.53; before it, each decoder had its own class
        generic = importlib.import_module("transformers.modeling_layers").GenericForSequenceClassification
    except (ImportError, AttributeError):
        generic = None
    if generic is not None and isinstance(model, generic):
        return True
    config = model.config
    if getattr(config, "is_encoder_decoder", False):
        return False
    model_type = getattr(config, "model_type", "")
    causal = model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    return causal or is_decoder(config)


def run_batches(loaded: LoadedModel, seqs: Sequence[Encoded], read: Reader, *, max_tokens: int,
                max_batch: int) -> list[torch.Tensor | RewardResult]:
    """Forward every sequence in token-budget batches; one entry per sequence, in order: the
    row `read` made of it, or an `error` result when its batch failed (e.g. out of memory),
    while the other batches are still scored."""
    out: list[torch.Tensor | RewardResult | None] = [None] * len(seqs)
    left, pad_id = pools_last_token(loaded.model), _pad_id(loaded)
    positions = accepts(loaded.model, "position_ids")
    batches = token_budget_batches([len(s.ids) for s in seqs], max_tokens=max_tokens, max_batch=max_batch)
    for batch in batches:
        try:
            inputs = _pad([seqs[i] for i in batch], pad_id=pad_id, left=left, positions=positions,
                          device=loaded.device)
            with torch.inference_mode():
                rows: Sequence[torch.Tensor | RewardResult] = read(loaded.model(**inputs), inputs)
        except Exception as exc:  # one failed batch must not take the others down
            hint = "; lower max_tokens_per_batch" if "memory" in str(exc).lower() else ""
            failed = RewardResult.failure(ErrorKind.CRASH, f"model forward failed: {type(exc).__name__}: {exc}{hint}")
            rows = [failed] * len(batch)
        for i, row in zip(batch, rows, strict=True):
            out[i] = row
    return [r for r in out if r is not None]


def score_each(samples: Sequence[Sample], encode: Callable[[Sample], Encoded], loaded: LoadedModel, read: Reader,
               finish: Callable[[torch.Tensor, dict[str, JSON] | None], RewardResult], *, max_tokens: int,
               max_batch: int) -> list[RewardResult]:
    """One result per sample, in order: each sample is encoded alone (`encode` raises
    `ScoringError` for one it refuses), the encoded ones run in token-budget batches
    (`run_batches`), and `finish(row, cut)` reads each row. A sample that cannot be encoded is
    that row's error, whatever raised; the batch's other rows are still scored."""
    results: list[RewardResult | None] = [None] * len(samples)
    seqs, where = [], []
    for i, sample in enumerate(samples):
        try:
            seqs.append(encode(sample))
        except ScoringError as exc:
            results[i] = RewardResult.failure(exc.kind, exc.message)
            continue
        except Exception as exc:  # the tokenizer or chat template refused this sample's text
            results[i] = RewardResult.failure(ErrorKind.CRASH, f"cannot encode the input: {type(exc).__name__}: {exc}")
            continue
        where.append(i)
    rows = run_batches(loaded, seqs, read, max_tokens=max_tokens, max_batch=max_batch) if seqs else []
    for i, row, seq in zip(where, rows, seqs, strict=True):
        results[i] = row if isinstance(row, RewardResult) else finish(row, seq.cut)
    return [r for r in results if r is not None]
