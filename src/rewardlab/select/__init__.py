"""Test-time selection with rewards: best-of-n, votes, PRM-guided search, accuracy-vs-compute curves.

Selectors work on `(problems, candidates)` arrays, vectorised over every problem at once
(`selectors.py`); answers are grouped into equivalence classes with `verify.math` or text
normalisation (`answers.py`), programs by their outputs in the sandbox (`execution.py`); scores
come from any `Reward` or from stored columns (`scores.py`). Candidate files and curves:
`candidates.py`, `curves.py` (with the closed forms of `evaluate.expected`), `report.py`. Step-wise search over a pluggable generator and PRM
(`generate.py`): `search.py` (best-of-n, beam, DVTS, best-first, early rejection), `mcts.py`,
`adaptive.py` (calibration, adaptive budgets), `simulator.py` (offline, known correctness),
`openai_generator.py` (any OpenAI-compatible endpoint); `batch.py` runs a search per problem of
a file (`rewardlab select search`), with its options and the simulator's in `options.py`. See docs/select.md.

Names are imported on first use (PEP 562), so `import rewardlab.select.options` (what the CLI
reads at start-up) imports no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle
    from rewardlab.runner.candidate_rows import CandidateColumns
    from rewardlab.select.adaptive import (
        AdaptiveResult,
        Calibrator,
        adaptive_vote,
        fit_calibrator,
        rejection_threshold,
    )
    from rewardlab.select.answers import answer_classes, answer_votes
    from rewardlab.select.batch import search_problems, write_search
    from rewardlab.select.candidates import Candidates, load_candidates
    from rewardlab.select.curves import Curves, selection_curves
    from rewardlab.select.execution import ExecutionClasses, execution_classes
    from rewardlab.select.generate import Problem, RewardScorer, Step, StepGenerator, StepScorer
    from rewardlab.select.mcts import mcts_search
    from rewardlab.select.openai_generator import OpenAIStepGenerator
    from rewardlab.select.options import Equivalence, SearchOptions, SimulatorConfig, WeightMap
    from rewardlab.select.problems import load_problems
    from rewardlab.select.report import write_curves
    from rewardlab.select.scores import (
        RewardScores,
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
    from rewardlab.select.simulator import StepSimulator

__all__ = [
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

_WHERE = {
    "AdaptiveResult": "rewardlab.select.adaptive",
    "Calibrator": "rewardlab.select.adaptive",
    "CandidateColumns": "rewardlab.runner.candidate_rows",
    "Candidates": "rewardlab.select.candidates",
    "Curves": "rewardlab.select.curves",
    "Equivalence": "rewardlab.select.options",
    "ExecutionClasses": "rewardlab.select.execution",
    "OpenAIStepGenerator": "rewardlab.select.openai_generator",
    "Problem": "rewardlab.select.generate",
    "RewardScorer": "rewardlab.select.generate",
    "RewardScores": "rewardlab.select.scores",
    "SearchOptions": "rewardlab.select.options",
    "SearchResult": "rewardlab.select.search",
    "Selection": "rewardlab.select.selectors",
    "SimulatorConfig": "rewardlab.select.options",
    "Step": "rewardlab.select.generate",
    "StepGenerator": "rewardlab.select.generate",
    "StepScorer": "rewardlab.select.generate",
    "StepSimulator": "rewardlab.select.simulator",
    "Ties": "rewardlab.select.selectors",
    "WeightMap": "rewardlab.select.options",
    "adaptive_vote": "rewardlab.select.adaptive",
    "answer_classes": "rewardlab.select.answers",
    "answer_votes": "rewardlab.select.answers",
    "beam_search": "rewardlab.select.search",
    "best_first_search": "rewardlab.select.search",
    "best_of_n": "rewardlab.select.selectors",
    "best_of_n_search": "rewardlab.select.search",
    "diverse_tree_search": "rewardlab.select.search",
    "early_rejection_search": "rewardlab.select.search",
    "execution_classes": "rewardlab.select.execution",
    "expected_best_of_n": "rewardlab.evaluate.expected",
    "expected_oracle": "rewardlab.evaluate.expected",
    "filtered_vote": "rewardlab.select.selectors",
    "fit_calibrator": "rewardlab.select.adaptive",
    "hybrid_vote": "rewardlab.select.selectors",
    "load_candidates": "rewardlab.select.candidates",
    "load_problems": "rewardlab.select.problems",
    "majority_vote": "rewardlab.select.selectors",
    "mcts_search": "rewardlab.select.mcts",
    "rejection_threshold": "rewardlab.select.adaptive",
    "score_candidates": "rewardlab.select.scores",
    "search_problems": "rewardlab.select.batch",
    "selection_curves": "rewardlab.select.curves",
    "step_scores": "rewardlab.select.scores",
    "to_weights": "rewardlab.select.scores",
    "weighted_vote": "rewardlab.select.selectors",
    "write_curves": "rewardlab.select.report",
    "write_search": "rewardlab.select.batch",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
