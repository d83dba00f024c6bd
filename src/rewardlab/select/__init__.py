"""Test-time selection with rewards: best-of-n, votes, PRM-guided search, accuracy-vs-compute curves.

Selectors work on `(problems, candidates)` arrays, vectorised over every problem at once
(`selectors.py`); answers are grouped into equivalence classes with `verify.math` or text
normalisation (`answers.py`), programs by their outputs in the sandbox (`execution.py`); scores
come from any `Reward` or from stored columns (`scores.py`). Candidate files and curves:
`candidates.py`, `curves.py` (with the closed forms of `evaluate.expected`), `report.py`. Step-wise search over a pluggable generator and PRM
(`generate.py`): `search.py` (best-of-n, beam, DVTS, best-first, early rejection), `mcts.py`,
`adaptive.py` (calibration, adaptive budgets), `simulator.py` (offline, known correctness),
`openai_generator.py` (any OpenAI-compatible endpoint); `batch.py` runs a search per problem of
a file (`rewardlab select search`). See docs/select.md.
"""

from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle
from rewardlab.select.adaptive import (
    AdaptiveResult,
    Calibrator,
    adaptive_vote,
    fit_calibrator,
    rejection_threshold,
)
from rewardlab.select.answers import Equivalence, answer_classes, answer_votes, pad_answers
from rewardlab.select.batch import SearchOptions, load_problems, search_problems, write_search
from rewardlab.select.candidates import CandidateColumns, Candidates, load_candidates
from rewardlab.select.curves import METHODS, Curves, selection_curves
from rewardlab.select.execution import ExecutionClasses, execution_classes
from rewardlab.select.generate import (
    Problem,
    RewardScorer,
    Step,
    StepGenerator,
    StepScorer,
    TokenMeter,
)
from rewardlab.select.mcts import mcts_search
from rewardlab.select.openai_generator import OpenAIStepGenerator
from rewardlab.select.report import write_curves
from rewardlab.select.scores import (
    RewardScores,
    WeightMap,
    score_candidates,
    step_scores,
    to_weights,
)
from rewardlab.select.search import (
    SearchResult,
    beam_search,
    best_first_search,
    best_of_n_search,
    diverse_tree_search,
    early_rejection_search,
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
from rewardlab.select.simulator import SimulatorConfig, StepSimulator

__all__ = [
    "METHODS",
    "AdaptiveResult",
    "Calibrator",
    "CandidateColumns",
    "Candidates",
    "Curves",
    "Equivalence",
    "ExecutionClasses",
    "OpenAIStepGenerator",
    "Problem",
    "RewardScorer",
    "RewardScores",
    "SearchOptions",
    "SearchResult",
    "Selection",
    "SimulatorConfig",
    "Step",
    "StepGenerator",
    "StepScorer",
    "StepSimulator",
    "Ties",
    "TokenMeter",
    "WeightMap",
    "adaptive_vote",
    "answer_classes",
    "answer_votes",
    "beam_search",
    "best_first_search",
    "best_of_n",
    "best_of_n_search",
    "diverse_tree_search",
    "early_rejection_search",
    "execution_classes",
    "expected_best_of_n",
    "expected_oracle",
    "filtered_vote",
    "fit_calibrator",
    "hybrid_vote",
    "load_candidates",
    "load_problems",
    "majority_vote",
    "mcts_search",
    "pad_answers",
    "rejection_threshold",
    "score_candidates",
    "search_problems",
    "selection_curves",
    "step_scores",
    "to_weights",
    "weighted_vote",
    "write_curves",
    "write_search",
]
