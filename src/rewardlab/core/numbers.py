"""Numbers read from JSON or returned by user code, converted without surprises.

Python's `json` reads integers of any size, and `float()` of one beyond float's range raises
`OverflowError` (`float(10**400)`). A reader that calls `float()` on a file's value would then
stop at one hostile number instead of reporting that row.
"""

from __future__ import annotations

import math

__all__ = ["json_float"]


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
