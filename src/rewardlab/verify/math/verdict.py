"""The three-valued verdict of `check`: equivalent, not equivalent, or undecided with a reason."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Outcome", "Verdict", "equivalent", "not_equivalent", "undecided"]


class Outcome(StrEnum):
    """The three possible verdicts."""

    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not_equivalent"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Verdict:
    """The result of `check`.

    Attributes:
        outcome: equivalent, not equivalent, or undecided.
        reason: why, in words (shown in `RewardResult.info`).
        method: which step decided (`string`, `number`, `choice`, `text`, `structure`,
            `sympy`, `screen`, `timeout`, ...).
        reference: the reference after normalisation.
        candidate: the candidate after normalisation.
        error_kind: for undecided verdicts, the `rewardlab.core.ErrorKind` value it maps to
            (`parse`, `timeout`, `unsupported`, `crash`).
    """

    outcome: Outcome
    reason: str
    method: str
    reference: str = ""
    candidate: str = ""
    error_kind: str | None = None

    @property
    def equivalent(self) -> bool:
        """True only for `Outcome.EQUIVALENT` (undecided is not equivalent, nor wrong)."""
        return self.outcome is Outcome.EQUIVALENT

    @property
    def decided(self) -> bool:
        return self.outcome is not Outcome.UNDECIDED

    @property
    def needs_symbolic(self) -> bool:
        """True when only sympy could decide and `allow_symbolic` was False: the same pair
        checked with `allow_symbolic=True` may be decided (every other verdict is final)."""
        return self.outcome is Outcome.UNDECIDED and self.method == "fastpath"

    def __bool__(self) -> bool:
        raise TypeError("a Verdict is three-valued: use .equivalent, .decided or .outcome")


def equivalent(method: str, reason: str, r: str, c: str) -> Verdict:
    """An equivalent verdict decided by `method` (`r`, `c`: the answers as compared)."""
    return Verdict(Outcome.EQUIVALENT, reason, method, r, c)


def not_equivalent(method: str, reason: str, r: str, c: str) -> Verdict:
    """A not-equivalent verdict decided by `method`."""
    return Verdict(Outcome.NOT_EQUIVALENT, reason, method, r, c)


def undecided(kind: str, method: str, reason: str, r: str, c: str) -> Verdict:
    """An undecided verdict; `kind` is the `ErrorKind` value it becomes in a reward result."""
    return Verdict(Outcome.UNDECIDED, reason, method, r, c, kind)
