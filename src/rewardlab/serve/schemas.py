"""The wire format of the reward server, as pydantic models (the OpenAPI schema comes from here).

Samples are validated by `Sample.from_dict`, the rules every path shares (`SampleIn` is their
schema and delegates to it); the score route checks its request envelope by hand; responses are JSON built from `RewardResult.to_dict()` (the fields of `ResultOut`), so a
10,000-row reply is not validated twice. Every error response has the shape of `ErrorResponse`:
``{"error": {"code": "unknown_reward", "message": "...", "details": [...]}}`` where ``code`` is
stable and machine-readable and ``message`` says what to do.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StrictBool,
    model_validator,
)

from rewardlab.core import Sample
from rewardlab.errors import InputError

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
    """One sample, with the field names of `rewardlab.Sample`; unknown keys go to `meta`.

    The schema of what `Sample.from_dict` accepts, for OpenAPI. Validation is delegated to
    `Sample.from_dict` (the rules are written down once, there), so a row this model accepts
    is exactly a row the server and the runner accept.
    """

    model_config = ConfigDict(extra="allow")

    prompt: str | list[Message] = ""
    response: str | list[Message]
    reference: Any = None
    steps: list[str] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    id: str | int | None = Field(default=None, description="an integer id is sent back as its decimal string")
    group: str | int | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _by_sample_rules(cls, data: Any, handler: ModelWrapValidatorHandler[SampleIn]) -> SampleIn:
        if isinstance(data, SampleIn):
            return data
        try:
            sample = Sample.from_dict(data)
        except InputError as exc:
            raise ValueError(exc.reason) from exc
        # `meta` with the extra keys folded in, as `Sample.from_dict` does; `id`, `group` as given.
        return cls.model_construct(
            prompt=sample.prompt, response=sample.response, reference=sample.reference,
            steps=list(sample.steps) if sample.steps is not None else None, meta=dict(sample.meta),
            id=data.get("id"), group=data.get("group"),
        )

    def to_sample(self) -> Sample:
        """The `Sample` this row describes."""
        fields = ("prompt", "response", "reference", "steps", "meta", "id", "group")
        return Sample.from_dict({name: getattr(self, name) for name in fields})


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
    objective_weights: dict[str, float] | list[float] | None = Field(
        default=None,
        description="weights of the reward's objectives (combine = \"objectives\") for every sample of the "
        "request that does not name its own `objective_weights`",
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
    objectives: dict[str, float | None] | None = Field(default=None, description="the reward vector, when the spec declares objectives")


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
    objectives: dict[str, list[float | None]] | None = Field(
        default=None,
        description="when the spec declares objectives: objective name -> its value per sample, null where it was not computed",
    )
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
