"""Small helpers the verify rewards share."""

from __future__ import annotations

from rewardlab.core import JSON, Sample
from rewardlab.errors import ScoringError


def references(sample: Sample, *, key: str | None = None) -> list[str]:
    """The acceptable reference strings of a sample: a string, a list of strings, or a field of
    an object reference (`key`). Raises `ScoringError(invalid_input)` when there is none."""
    ref: JSON = sample.reference
    if key is not None:
        if not isinstance(ref, dict) or key not in ref:
            raise ScoringError("invalid_input", f"reference has no field {key!r}")
        ref = ref[key]
    if ref is None:
        raise ScoringError("invalid_input", "sample has no reference to compare with")
    if isinstance(ref, str):
        return [ref]
    if isinstance(ref, int | float) and not isinstance(ref, bool):
        return [str(ref)]
    if isinstance(ref, list) and ref and all(isinstance(r, str | int | float) for r in ref):
        return [str(r) for r in ref]
    raise ScoringError("invalid_input", f"reference must be a string or a list of strings, got {type(ref).__name__}")


def response_text(sample: Sample) -> str:
    """The response as text; a chat message list gives its last message's content.

    Raises `ScoringError(invalid_input)` for anything else (a number, a dict, a list of
    non-messages), so a malformed completion is an `error` for its row, never a quiet 0.
    """
    value = sample.response
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(m, dict) and "content" in m for m in value):
        return sample.response_text
    raise ScoringError(
        "invalid_input",
        f"response must be a string or a list of chat messages, got {type(value).__name__}",
    )


def meta_or_reference(sample: Sample, key: str) -> JSON:
    """`sample.meta[key]`, else `sample.reference[key]` when the reference is an object.

    Per-row settings (IFEval constraints, a JSON schema, a tool call) live in dataset columns;
    they reach a Sample either as extra columns (`meta`) or inside an object `reference`.
    Raises `ScoringError(invalid_input)` naming the column when neither has it.
    """
    if key in sample.meta:
        return sample.meta[key]
    if isinstance(sample.reference, dict) and key in sample.reference:
        return sample.reference[key]
    raise ScoringError(
        "invalid_input",
        f"row has no {key!r} column (looked in sample.meta and in an object reference); "
        f"add it to the dataset or pass it as a parameter",
    )
