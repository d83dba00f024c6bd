"""Options of the equivalence check, one frozen dataclass (hashable, so verdicts can be cached)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rewardlab.errors import ConfigError

__all__ = ["CheckOptions"]


@dataclass(frozen=True)
class CheckOptions:
    """How `check(reference, candidate)` decides.

    Attributes:
        timeout: seconds for the sympy part of one verdict (worker killed past it). The
            fast paths (numbers, fractions, strings, structures) do not count against it.
        rel_tol: relative tolerance for values sympy can only compare numerically (floats
            produced by evaluation). Never absolute: 1e-7 and 2e-7 differ by 100%.
        approximate: accept a decimal candidate that rounds an exact reference to
            `min_sig_figs` figures (`0.333` for 1/3, `3.14` for pi). Off by default, as in
            Math-Verify, the MATH convention and most graders: as a training reward it would pay
            for approximating instead of solving. Without it a decimal needs 6 correct
            significant figures (`0.333333`: the value as printed). A decimal *reference* always
            accepts a candidate that rounds to it.
        min_sig_figs: a decimal read as a rounding (of an exact reference with `approximate`,
            or a decimal reference itself) needs at least this many significant figures; `0.3`
            for 1/3 is not accepted.
        strip_units: drop trailing unit text (`5 \\text{ cm}`, `\\mbox{dollars}`) before
            comparing. No unit conversion is attempted.
        convert_units: compare `number unit` answers after converting both to SI with
            `sympy.physics.units` (`2 \\text{ km}` equals `2000 \\text{ m}`; different dimensions
            are not equivalent). Off by default: `5 m` may be five times a variable `m`.
        degrees: `"strip"` reads `30^\\circ` as 30; `"radians"` reads it as pi/6 (then it
            equals `\\frac{\\pi}{6}`).
        percent: `"either"` accepts `50\\%` as 50 or as 0.5; `"strip"` only as 50;
            `"fraction"` only as 0.5.
        thousands: read `1,000` / `10{,}000` / `1\\,000` as one number (not a pair).
        equations: compare `x = 3` with `3` by the right-hand side when the left-hand side is a
            single symbol, and rearranged equations as equal up to a non-zero factor.
        unparsed_reference: what a reference no parser understands gives. `"undecided"` (the
            default) makes it an error result, so a broken gold answer is seen, not silently
            scored 0; `"text"` compares it as text (equal after normalisation or not
            equivalent), which is what graders that ignore the problem do.
        allow_symbolic: use sympy for what the fast paths cannot decide. False makes every such
            case `undecided` (useful to measure what the fast paths cover).
        max_chars: longest answer (after extraction) that is compared at all.
    """

    timeout: float = 5.0
    rel_tol: float = 1e-9
    approximate: bool = False
    min_sig_figs: int = 3
    strip_units: bool = True
    convert_units: bool = False
    degrees: Literal["strip", "radians"] = "strip"
    percent: Literal["either", "strip", "fraction"] = "either"
    thousands: bool = True
    equations: bool = True
    unparsed_reference: Literal["undecided", "text"] = "undecided"
    allow_symbolic: bool = True
    max_chars: int = 2000

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {self.timeout}")
        if not 0 <= self.rel_tol < 1:
            raise ConfigError(f"rel_tol must be in [0, 1), got {self.rel_tol}")
        if self.min_sig_figs < 1:
            raise ConfigError(f"min_sig_figs must be >= 1, got {self.min_sig_figs}")
        if self.max_chars < 1:
            raise ConfigError(f"max_chars must be >= 1, got {self.max_chars}")
