"""Maths final-answer verification: `extract_answer(text)`, `check(reference, candidate)` and the
`math.answer` reward (extra `math`: sympy + latex2sympy2_extended, used only in worker processes).

Examples:
    >>> from rewardlab.verify.math import check, extract_answer
    >>> answer = extract_answer("... so the total is \\\\boxed{\\\\dfrac{3}{6}}.").answer
    >>> check("\\\\frac{1}{2}", answer).equivalent
    True
"""

from rewardlab.verify.math.equivalence import check
from rewardlab.verify.math.extract import (
    SOURCES,
    Extraction,
    ExtractOptions,
    extract_answer,
    find_boxed,
)
from rewardlab.verify.math.hedging import Hedge, final_answer
from rewardlab.verify.math.options import CheckOptions
from rewardlab.verify.math.reward import MathAnswer
from rewardlab.verify.math.verdict import Outcome, Verdict
from rewardlab.verify.math.worker import SympyPool, default_pool, warm_up

__all__ = [
    "SOURCES",
    "CheckOptions",
    "ExtractOptions",
    "Extraction",
    "Hedge",
    "MathAnswer",
    "Outcome",
    "SympyPool",
    "Verdict",
    "check",
    "default_pool",
    "extract_answer",
    "final_answer",
    "find_boxed",
    "warm_up",
]
