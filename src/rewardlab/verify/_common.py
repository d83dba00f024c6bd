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
