"""Test-time selection with rewards: best-of-n, votes, PRM-guided search, accuracy-vs-compute curves.

Selectors work on `(problems, candidates)` arrays, vectorised over every problem at once
(`selectors.py`); answers are grouped into equivalence classes with `verify.math` or text
normalisation (`answers.py`), programs by their outputs in the sandbox (`execution.py`); scores
come from any `Reward` or from stored columns (`scores.py`). See docs/select.md.
"""

from rewardlab.select.answers import Equivalence, answer_classes, pad_answers
from rewardlab.select.execution import ExecutionClasses, execution_classes
from rewardlab.select.scores import (
    RewardScores,
    WeightMap,
    score_candidates,
    step_scores,
    to_weights,
)
from rewardlab.select.selectors import (
    Selection,
    Ties,
    best_of_n,
    filtered_vote,
    hybrid_vote,
    majority_vote,
    weighted_vote,
)

__all__ = [
    "Equivalence",
    "ExecutionClasses",
    "RewardScores",
    "Selection",
    "Ties",
    "WeightMap",
    "answer_classes",
    "best_of_n",
    "execution_classes",
    "filtered_vote",
    "hybrid_vote",
    "majority_vote",
    "pad_answers",
    "score_candidates",
    "step_scores",
    "to_weights",
    "weighted_vote",
]
