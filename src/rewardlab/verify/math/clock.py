"""Clock-time answers (`4:30 p.m.`, `\\text{4:30 PM}`, `16:30`), compared as times of day.

Read as a time: ``H:MM`` (hour 0-23, two-digit minutes), or ``H:MM``/``H`` followed by am/pm in
any usual spelling (`pm`, `p.m.`, `PM`, `\\text{ p.m.}`), and tolerantly a clipped one (`p.`,
`p..`, `p`: the real MATH gold `4:30p..` is a damaged `4:30 p.m.`). With am/pm the hour is 1-12.

Rules (the reference, as everywhere, sets what the candidate must pin down):

- a time with am/pm, or a 24-hour time that only fits one half of the day (`16:30`, `0:15`), is
  one time of day: `4:30 p.m.` = `16:30`; `12:00 a.m.` = `0:00`;
- a bare `4:30` could be either half of the day. As a *reference* it accepts `4:30`, `4:30 a.m.`,
  `4:30 p.m.` and `16:30` (the question did not ask which half); as a *candidate* against a
  reference that names the half it is not equivalent (it does not say which, like a decimal
  less precise than the reference).

In short: equivalent when every time the candidate may mean is a time the reference allows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ClockTime", "clock_equal", "parse_clock"]

_NOISE_RE = re.compile(r"\\(?:text|mbox|mathrm|textrm|textnormal)\s*\{([^{}]*)\}|\\[ ,;:!]|~|\$|\\q?quad")
_CLOCK_RE = re.compile(
    r"^(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*"
    r"(?:(?P<half>[ap])\s*\.?\s*(?P<m_of_half>m\b\.?)?\.?)?$"  # `pm`, `p.m.`, `p.m`, `p.`, `p..`, `p`
)
_DAY = 24 * 60


@dataclass(frozen=True, slots=True)
class ClockTime:
    """A parsed clock time.

    Attributes:
        readings: the minutes after midnight it may mean (one, or two for a bare `4:30`).
        half_named: whether am/pm was written (for reasons shown to users).
    """

    readings: frozenset[int]
    half_named: bool


def parse_clock(answer: str) -> ClockTime | None:
    """A `ClockTime` for a time-of-day answer, None for anything else (`3:4` is a ratio)."""
    s = answer.strip()
    if len(s) > 60 or (":" not in s and "m" not in s and "M" not in s):
        return None  # no `H:MM` and no am/pm: most answers leave here
    prev = None
    while prev != s:  # `\text{4:30 \text{p.m.}}` unwraps in two passes
        prev, s = s, _NOISE_RE.sub(lambda m: m.group(1) or " ", s)
    s = s.replace("{:}", ":").strip().lower()
    m = _CLOCK_RE.match(s)
    if m is None:
        return None
    hour, minute, half = int(m.group("h")), int(m.group("m") or 0), m.group("half")
    if minute > 59 or (m.group("m") is None and half is not None and m.group("m_of_half") is None):
        return None  # `4p` or `4a` without minutes is more likely algebra than a time
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        base = hour % 12 + (12 if half == "p" else 0)
        return ClockTime(frozenset({base * 60 + minute}), True)
    if m.group("m") is None or hour > 23:
        return None  # a bare `4` is a number, not a time
    if hour == 0 or hour > 12:
        return ClockTime(frozenset({hour * 60 + minute}), False)
    morning = (hour % 12) * 60 + minute
    return ClockTime(frozenset({morning, (morning + 12 * 60) % _DAY}), False)


def clock_equal(reference: ClockTime, candidate: ClockTime) -> bool:
    """Every time the candidate may mean is one the reference allows (module docstring)."""
    return candidate.readings <= reference.readings
