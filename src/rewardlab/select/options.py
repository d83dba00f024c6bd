"""The options of selection on a candidate file, of PRM-guided search and of the search
simulator, and the choices of selection, declared once.

Each field's type, default, choices (a `Literal`) and description (under ``Attributes:``) are
the one declaration: `pick.pick`, `curves.selection_curves` and the search functions take their
defaults from here, and `rewardlab select pick|curves|search|simulate` generate their
command-line options from these classes (`cli/_options.py`). The module imports no numpy, so
the CLI reads it at start-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from rewardlab.core.choices import check_choices, choices_of
from rewardlab.errors import ArrayError

__all__ = ["Aggregate", "CurveMethod", "CurveOptions", "Equivalence", "PickMethod", "PickOptions", "SearchMethod", "SearchOptions", "SimulationOptions", "SimulatorConfig", "WeightMap"]

#: how step scores make a prefix's score (`search.aggregate_prefix`)
Aggregate = Literal["min", "last", "product", "mean"]
#: which answers are the same in a vote (`answers.answer_classes`)
Equivalence = Literal["exact", "normalized", "math"]
#: how scores become vote weights (`scores.to_weights`)
WeightMap = Literal["raw", "sigmoid", "exp"]
#: the selectors `pick.pick` runs on a candidate file
PickMethod = Literal["best_of_n", "majority", "weighted", "hybrid", "filtered"]
#: the methods `curves.selection_curves` draws: the selectors and pass@n (`oracle`)
CurveMethod = Literal["oracle", "best_of_n", "majority", "weighted", "hybrid", "filtered"]
#: the methods of `batch.search_problems`
SearchMethod = Literal["beam", "best_of_n", "dvts", "best_first", "mcts", "majority", "adaptive", "early_rejection"]

SEARCH_METHODS: tuple[str, ...] = choices_of(SearchMethod)
# the methods that read answers only, not a PRM's scores
VOTE_METHODS = ("majority", "adaptive")

WIDTH = 4  # beam width, DVTS trees
EXPAND = 4  # children per node and round
MAX_TOKENS = 8000  # best-first's token budget


def _at_least_one(owner: object, *names: str) -> None:
    low = [name for name in names if getattr(owner, name) < 1]
    if low:
        raise ArrayError(low[0], f"{', '.join(low)} must be >= 1, got {', '.join(str(getattr(owner, n)) for n in low)}")


def _check_seed(seed: int) -> None:
    if seed < 0:  # numpy's generators take non-negative seeds only
        raise ArrayError("seed", f"must be >= 0, got {seed}")


@dataclass(frozen=True)
class PickOptions:
    """How the selectors of a candidate file pick (`pick.pick`, and each vote of
    `curves.selection_curves`).

    Attributes:
        method: the selector: `best_of_n` (the highest score), `majority` (the most common
            answer), `weighted` (answers voted with their scores' weights), `hybrid` (best-of-n
            among the most voted answers) or `filtered` (a vote among the most confident).
        equivalence: which answers are the same in the votes (`answer_classes`).
        weights: how scores become the weighted vote's weights (`to_weights`; sigmoid: of logits).
        keep: share of the candidates the confidence-filtered vote keeps (`filtered`).
        top_k: most voted answers the hybrid vote keeps before the reward model picks.
    """

    method: PickMethod = "weighted"
    equivalence: Equivalence = "math"
    weights: WeightMap = "sigmoid"
    keep: float = 0.5
    top_k: int = 1

    def __post_init__(self) -> None:
        check_choices(type(self), error=ArrayError, method=self.method, equivalence=self.equivalence, weights=self.weights)
        _at_least_one(self, "top_k")
        if not 0 < self.keep <= 1:
            raise ArrayError("keep", f"must be in (0, 1], got {self.keep}")


@dataclass(frozen=True)
class CurveOptions:
    """The budgets, subsets and intervals of accuracy-vs-compute curves
    (`curves.selection_curves`; how each method picks is `PickOptions`).

    Attributes:
        max_n: the largest budget: every n from 1 to max_n is run (the `ns` of
            `selection_curves`; 0: every n up to the smallest candidate count when that is at
            most 16, else its powers of two and itself).
        max_subsets: all n-subsets when there are at most this many per budget, else this many
            random ones.
        seed: seeds the random subsets and the bootstrap.
        confidence: level of the bootstrap intervals.
        n_resamples: bootstrap resamples of the intervals.
    """

    max_n: int = 0
    max_subsets: int = 256
    seed: int = 0
    confidence: float = 0.95
    n_resamples: int = 2000

    def __post_init__(self) -> None:
        _at_least_one(self, "max_subsets", "n_resamples")
        _check_seed(self.seed)
        if self.max_n < 0:
            raise ArrayError("max_n", f"must be >= 0 (0: the default budgets), got {self.max_n}")
        if not 0 < self.confidence < 1:
            raise ArrayError("confidence", f"must be in (0, 1), got {self.confidence}")


#: the defaults `pick.pick` and `curves.selection_curves` take
PICK = PickOptions()
CURVES = CurveOptions()


@dataclass(frozen=True)
class SearchOptions:
    """One search method and its budget.

    Attributes:
        method: the search: `beam`, `best_of_n`, `dvts`, `best_first`, `mcts`, `majority` (a
            vote over `n` solutions: self-consistency, the PRM's scores are not used),
            `adaptive` (one solution at a time until the vote is confident, at most `n`:
            `adaptive_vote`) or `early_rejection` (best-of-n that drops partial solutions a
            calibrated PRM finds unlikely to end right: needs a `RejectionRule`, from
            `calibrate_rejection`).
        n: solutions of best-of-n, majority and early rejection (the most the adaptive vote draws).
        width: beam width (trees of DVTS).
        expand: children per node and round (beam, DVTS, best-first, MCTS).
        simulations: MCTS simulations.
        max_tokens: token budget of best-first search (and a cap for MCTS).
        aggregate: how step scores make a prefix's score.
        equivalence: which answers are the same in the votes (`answer_classes`).
        confidence: the adaptive vote stops once the leading answer is ahead with this
            probability (Adaptive-Consistency's Beta criterion).
        max_loss: the accuracy against best-of-n that early rejection may lose (the bound its
            threshold is chosen for, `rejection_threshold`).
    """

    method: SearchMethod = "beam"
    n: int = 8
    width: int = WIDTH
    expand: int = EXPAND
    simulations: int = 16
    max_tokens: int = MAX_TOKENS
    aggregate: Aggregate = "min"
    equivalence: Equivalence = "math"
    confidence: float = 0.95
    max_loss: float = 0.01

    def __post_init__(self) -> None:
        check_choices(type(self), error=ArrayError, method=self.method, aggregate=self.aggregate, equivalence=self.equivalence)
        _at_least_one(self, "n", "width", "expand", "simulations", "max_tokens")
        if not 0.5 <= self.confidence < 1:
            raise ArrayError("confidence", f"must be in [0.5, 1), got {self.confidence}")
        if not 0 < self.max_loss < 1:
            raise ArrayError("max_loss", f"must be in (0, 1), got {self.max_loss}")


@dataclass(frozen=True)
class SimulationOptions:
    """What `simulate.compare_methods` runs every search method on.

    Attributes:
        problems: simulated problems.
        budget: samples of best-of-n, early rejection and the votes (MCTS simulations; best-first
            gets 300 tokens per sample).
        width: beam width (trees of DVTS).
        expand: children per beam and DVTS node and round.
        seed: seed of the simulator and its problems.
    """

    problems: int = 200
    budget: int = 16
    width: int = WIDTH
    expand: int = EXPAND
    seed: int = 0

    def __post_init__(self) -> None:
        _at_least_one(self, "problems", "budget", "width", "expand")
        _check_seed(self.seed)


@dataclass(frozen=True)
class SimulatorConfig:
    """Parameters of the simulated reasoner and its PRM (`simulator.StepSimulator`).

    Attributes:
        step_accuracy: Beta(a, b) of a problem's per-step accuracy (mean a / (a + b) = 0.9:
            most problems are solvable, a tail is hard).
        steps: inclusive range of solution lengths.
        tokens_per_step: mean tokens of a step (Poisson).
        distractors: wrong final answers a broken chain can end in.
        prm_separation: distance d between the PRM signal means of good and bad steps, in
            noise standard deviations (1.5: informative, far from perfect; AUC ~0.86; 0: noise).
        recovery: chance that a step after a mistake repairs the chain.
        detour: mean extra steps (Poisson) a broken chain takes before it ends: wrong
            reasoning runs longer (Wang et al. 2025, "Thoughts Are All Over the Place",
            arXiv:2501.18585, §2: incorrect responses of o1-like models use about twice the
            tokens of correct ones). 0 gives every chain of a problem the same length.
    """

    step_accuracy: tuple[float, float] = (9.0, 1.0)
    steps: tuple[int, int] = (3, 8)
    tokens_per_step: float = 40.0
    distractors: int = 4
    prm_separation: float = 1.5
    recovery: float = 0.0
    detour: float = 2.0

    def __post_init__(self) -> None:
        a, b = self.step_accuracy
        if a <= 0 or b <= 0:
            raise ArrayError("step_accuracy", f"Beta parameters must be > 0, got {self.step_accuracy}")
        if not 1 <= self.steps[0] <= self.steps[1]:
            raise ArrayError("steps", f"need 1 <= low <= high, got {self.steps}")
        # written so that NaN fails each comparison
        if not (self.distractors >= 1 and self.tokens_per_step > 0 and 0 <= self.prm_separation < math.inf
                and 0 <= self.recovery <= 1 and 0 <= self.detour < math.inf):  # fmt: skip
            raise ArrayError("config", "need distractors >= 1, tokens_per_step > 0, finite prm_separation >= 0, "
                             "0 <= recovery <= 1, finite detour >= 0")  # fmt: skip
