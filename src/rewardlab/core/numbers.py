"""Numbers read from JSON or returned by user code, converted without surprises, and the NaN
check of every options class.

Python's `json` reads integers of any size, and `float()` of one beyond float's range raises
`OverflowError` (`float(10**400)`). A reader that calls `float()` on a file's value would then
stop at one hostile number instead of reporting that row.
"""

from __future__ import annotations

import dataclasses
import math

from rewardlab.errors import ConfigError

__all__ = ["json_float", "refuse_nan"]


def json_float(value: object) -> float | None:
    """`value` as a float when it is a number (an `int` or a `float`, not a `bool`), else None.

    Integers beyond float's range become `inf` or `-inf`, so a caller's finiteness check refuses
    them with the other infinite values.

    Examples:
        >>> json_float(3), json_float(10**400), json_float(True), json_float("1.5")
        (3.0, inf, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an int too large for a float
        return math.inf if value > 0 else -math.inf


def refuse_nan(options: object) -> None:
    """Raise `ConfigError` naming the first float field of the dataclass `options` that is NaN.

    NaN passes every check written as `if value < 0: raise` (each comparison with it is False)
    and then spoils what it configures, silently: options classes call this first in their
    `__post_init__`.
    """
    for field in dataclasses.fields(options):  # type: ignore[arg-type]
        value = getattr(options, field.name)
        if isinstance(value, float) and math.isnan(value):
            raise ConfigError(f"{field.name} must be a number, got NaN")
