"""What the client sends and reads back: the body of a score request, and its reply decoded.

A request carries the samples as rows (`_payload`: only the fields `Sample.from_dict` reads on
the server, never a content hash) and its options (`_Options`). A reply is either full results
(`_results`, one `RewardResult` per sample) or only the totals (`_scores`, a `Scores`), and
a reply with one row too many or too few is a ``bad_reply`` `ServerError`, never padded or
truncated. `Scores` and the aliases here are re-exported by `rewardlab.serve.client`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from rewardlab.core import JSON, ErrorKind, RewardError, RewardResult, Sample, Status
from rewardlab.core.jsontext import loads
from rewardlab.errors import ServerError

if TYPE_CHECKING:
    import httpx

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
    except orjson.JSONEncodeError:
        # Nested deeper than orjson writes (254 levels; the server reads 1,024), or a lone
        # surrogate (a text cut inside a surrogate pair): the stdlib writes it as its escape.
        content = json.dumps(payload, default=str, ensure_ascii=True, separators=(",", ":")).encode()
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


_STATUS = {s.value: s for s in Status}
_KIND = {k.value: k for k in ErrorKind}


def _scores(response: httpx.Response, expected: int) -> Scores:
    body = loads(response.content)
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


def _results(response: httpx.Response, expected: int) -> list[RewardResult]:
    rows = loads(response.content)["results"]
    if len(rows) != expected:  # the server promises one per sample; never pad or truncate
        raise ServerError(response.status_code, "bad_reply", f"{len(rows)} results for {expected} samples")
    try:
        return [RewardResult.from_dict(r) for r in rows]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # not a result row
        raise ServerError(response.status_code, "bad_reply", f"a result row is invalid: {exc}") from exc
