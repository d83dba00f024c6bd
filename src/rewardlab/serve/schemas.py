"""The wire format of the reward server, as pydantic models (the OpenAPI schema comes from here).

Request bodies are validated by these models (the score route first tries `fast_samples`, which
accepts a subset of what `SampleIn` accepts, and asks pydantic only when a row is unusual);
responses are JSON built from `RewardResult.to_dict()` (the fields of `ResultOut`), so a
10,000-row reply is not validated twice. Every error response has the shape of `ErrorResponse`:
``{"error": {"code": "unknown_reward", "message": "...", "details": [...]}}`` where ``code`` is
stable and machine-readable and ``message`` says what to do.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from rewardlab.core import Sample

__all__ = [
    "ErrorBody",
    "ErrorResponse",
    "OpenRLHFRequest",
    "OpenRLHFResponse",
    "ResultOut",
    "RewardInfoOut",
    "RewardsOut",
    "SampleIn",
    "ScoreRequest",
    "ScoreResponse",
]

Message = dict[str, Any]  # {"role": "...", "content": "..."}


class SampleIn(BaseModel):
    """One sample, with the field names of `rewardlab.Sample`; unknown keys go to `meta`."""

    model_config = ConfigDict(extra="allow")

    prompt: str | list[Message] = ""
    response: str | list[Message]
    reference: Any = None
    steps: list[str] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    group: str | None = None

    def to_sample(self) -> Sample:
        """The `Sample` this row describes (extra keys are folded into `meta`)."""
        meta = dict(self.meta)
        if self.model_extra:
            meta.update(self.model_extra)
        return Sample(
            prompt=self.prompt,
            response=self.response,
            reference=self.reference,
            steps=tuple(self.steps) if self.steps is not None else None,
            meta=meta,
            id=self.id or "",
            group=self.group,
        )


_FIELDS = frozenset({"prompt", "response", "reference", "steps", "meta", "id", "group"})


def _text(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in value)
    )


def fast_samples(rows: Any) -> list[Sample] | None:
    """`Sample`s for rows of the common shapes, without pydantic; ``None`` if any row is unusual.

    Accepts only what `SampleIn` accepts (a subset: plain strings or messages with string
    content, string ids); for anything else the caller validates with `SampleIn`, which gives
    the precise error. This is the server's hot path: pydantic plus model-to-Sample copies cost
    more than a cheap reward.
    """
    if not isinstance(rows, list):
        return None
    out = []
    for row in rows:
        if not isinstance(row, dict) or row.keys() - _FIELDS:
            return None
        prompt, response = row.get("prompt", ""), row.get("response")
        steps, meta = row.get("steps"), row.get("meta", {})
        id_, group = row.get("id"), row.get("group")
        if (
            (type(response) is not str and (response is None or not _text(response)))
            or (type(prompt) is not str and not _text(prompt))
            or not isinstance(meta, dict)
            or (steps is not None and not (isinstance(steps, list) and all(isinstance(x, str) for x in steps)))
            or (id_ is not None and not isinstance(id_, str))
            or (group is not None and not isinstance(group, str))
        ):
            return None
        out.append(  # every field was type-checked just above
            Sample._from_checked(
                prompt, response, row.get("reference"), tuple(steps) if steps is not None else None, meta, id_ or "", group
            )
        )
    return out


class ScoreRequest(BaseModel):
    """Body of ``POST /v1/rewards/{name}:score``."""

    model_config = ConfigDict(extra="forbid")

    samples: list[SampleIn] = Field(description="samples to score; results come back in this order")
    # Strict: "yes" or 1 is refused (422), not read as true.
    use_cache: StrictBool = Field(default=True, description="read and write the result cache for this request")
    reply: Literal["results", "scores"] = Field(
        default="results",
        description="'results': one full result per sample (`ScoreResponse`); 'scores': totals, statuses "
        "and errors as columns (`ScoresResponse`), what a trainer needs, several times cheaper to decode",
    )


class ErrorOut(BaseModel):
    """Why a reward could not be computed for one sample."""

    kind: str = Field(description="timeout, parse, crash, invalid_input, sandbox, ...")
    message: str


class ResultOut(BaseModel):
    """One `RewardResult` (the shape of `RewardResult.to_dict()`)."""

    score: float | None
    status: Literal["ok", "error", "skipped"]
    error: ErrorOut | None = None
    components: dict[str, ResultOut] | None = None
    steps: list[float] | None = None
    info: dict[str, Any] | None = None
    rewardlab_version: str | None = None
    spec_hash: str | None = None


class ScoreResponse(BaseModel):
    """Reply to a score request: one result per sample, in request order."""

    reward: str
    spec_hash: str
    results: list[ResultOut]
    cached: int = Field(description="how many results came from the result cache")


class RowErrorOut(ErrorOut):
    """Why the reward could not be computed for row `row` of the request."""

    row: int


class ScoresResponse(BaseModel):
    """Reply to a score request with ``"reply": "scores"``: columns in request order."""

    reward: str
    spec_hash: str
    rewardlab_version: str
    scores: list[float | None] = Field(description="the total per sample; null exactly where the status is not ok")
    statuses: list[Literal["ok", "error", "skipped"]]
    errors: list[RowErrorOut] = Field(description="one entry per row whose status is error")
    cached: int = Field(description="how many results came from the result cache")


class RewardInfoOut(BaseModel):
    """A hosted reward: its name, spec hash, declared range, tree and description."""

    name: str
    spec_hash: str
    range: tuple[float | None, float | None]
    tree: str = Field(description="repr() of the built reward, showing the combinator tree")
    spec: dict[str, Any] = Field(description="the reward's describe() output (what spec_hash hashes)")
    sample_schema: dict[str, Any] = Field(description="JSON schema of one sample")
    result_schema: dict[str, Any] = Field(description="JSON schema of one result")


class RewardsOut(BaseModel):
    """Reply to ``GET /v1/rewards``."""

    rewards: list[RewardInfoOut]


class OpenRLHFRequest(BaseModel):
    """Body OpenRLHF's remote reward model sends (``--remote_rm_url http://host:port/get_reward``).

    OpenRLHF (``openrlhf/utils/remote_rm_utils.py``) posts ``{"query": [...], "prompts": [...],
    "labels": [...]}``: ``query`` is prompt + response rendered with the chat template,
    ``prompts`` the prompts alone, ``labels`` the ``--label_key`` column. Older versions send
    only ``query``; newer ones may add ``metas``.
    """

    model_config = ConfigDict(extra="allow")

    query: list[str]
    prompts: list[str] | None = None
    labels: list[Any] | None = None
    metas: list[dict[str, Any] | None] | None = None


class OpenRLHFResponse(BaseModel):
    """What OpenRLHF reads back: ``rewards`` (advantages), ``scores`` (filtering), ``extra_logs``."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]
    statuses: list[str]


class ErrorBody(BaseModel):
    """A machine-readable error."""

    code: str = Field(description="stable error code, e.g. unknown_reward, invalid_request, overloaded")
    message: str = Field(description="what went wrong and what to do")
    details: list[Any] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    """Every 4xx/5xx reply of the server."""

    error: ErrorBody
