"""Search over a file of problems, one stamped row per problem (`rewardlab select search`).

`problems.load_problems` reads a JSONL/Parquet file of problems (a prompt column, optionally a
gold answer); `search_problems` runs one search method per problem with any `StepGenerator` (an
OpenAI-compatible endpoint through `OpenAIStepGenerator`) and `StepScorer` (a reward spec through
`RewardScorer`), and yields one row per problem: the answer, its PRM score, the tokens spent,
the steps, and — with a gold answer — whether it is right (`verify.math.check`). A problem whose
generation failed (the endpoint's retries ran out, a reply that is not a completions object)
gets a row with its `error` and no answer; every other problem is still searched. So does a
line of the file that cannot be read as a problem (`problems.unreadable_rows`).
`write_search` writes the rows stamped with `rewardlab_version` and the `spec_hash` of the
search's configuration.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rewardlab.errors import ArrayError, GenerationError, InputError
from rewardlab.select.adaptive import Calibrator, adaptive_vote, fit_calibrator, rejection_threshold
from rewardlab.select.answers import answer_votes
from rewardlab.select.generate import Problem, StepGenerator, StepScorer
from rewardlab.select.mcts import mcts_search
from rewardlab.select.options import SearchOptions
from rewardlab.select.search import (
    SearchResult,
    beam_search,
    best_first_search,
    best_of_n_search,
    diverse_tree_search,
    early_rejection_search,
    rollouts,
)

__all__ = ["RejectionRule", "UnscoredVote", "calibrate_rejection", "search_config", "search_problems", "write_search"]

@dataclass(frozen=True)
class RejectionRule:
    """What early rejection needs beyond the options: a calibrated PRM and its threshold.

    Attributes:
        calibrated: maps (aggregated prefix score, depth) to P(the solution ends right).
        threshold: prefixes whose calibrated probability is below it are dropped.
        examples: the prefixes the calibrator was fitted on.
    """

    calibrated: Calibrator
    threshold: float
    examples: int

    def describe(self) -> dict[str, Any]:
        """What goes into the search's configuration (and its spec hash)."""
        return {"threshold": self.threshold, "calibration_examples": self.examples}


def calibrate_rejection(
    generator: StepGenerator, scorer: StepScorer, held_out: Sequence[Problem], options: SearchOptions,
) -> RejectionRule:
    """Fit the calibrator on the first half of `held_out` and choose the threshold on the second
    (`fit_calibrator`, `rejection_threshold` with `options.max_loss`; the two halves must be
    different problems for the bound to hold). A rollout is right when `verify.math.check`
    finds its answer equivalent to the gold one; an undecided check counts as wrong.

    Raises:
        InputError: fewer than 2 held-out problems, or one without a gold answer.
        ArrayError: the rollouts were all right or all wrong (nothing to calibrate on).
    """
    missing = next((p for p in held_out if p.reference is None), None)
    if len(held_out) < 2 or missing is not None:
        where = f"line {missing.meta.get('line')} has no gold answer" if missing is not None else f"{len(held_out)} problem(s)"
        raise InputError(f"early rejection is calibrated on held-out problems with gold answers, at least 2: {where}",
                         source="calibration problems")  # fmt: skip
    half = len(held_out) // 2

    def judge(problem: Problem, answer: str | None) -> bool:
        return bool(_correct(problem, answer))

    calibrated = fit_calibrator(generator, scorer, held_out[:half], judge, n=options.n, aggregate=options.aggregate)
    threshold = rejection_threshold(generator, scorer, held_out[half:], judge, calibrated, n=options.n,
                                    max_loss=options.max_loss, aggregate=options.aggregate)  # fmt: skip
    return RejectionRule(calibrated, threshold, calibrated.examples)


class UnscoredVote:
    """The `StepScorer` of a majority vote run without a PRM: the vote reads answers, not scores,
    so every step scores 0.0 and the scores are left out of its rows."""

    def score(self, problem: Problem, prefixes: Sequence[Sequence[Any]]) -> list[float]:
        return [0.0] * len(prefixes)


def _run(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, o: SearchOptions, rejection: RejectionRule | None,
) -> tuple[SearchResult, dict[str, Any]]:
    """The method's result and what it adds to the problem's row."""
    if o.method == "early_rejection":
        if rejection is None:
            raise ArrayError("rejection", "early_rejection needs a RejectionRule (calibrate_rejection)")
        result = early_rejection_search(generator, scorer, problem, o.n, rejection.calibrated, threshold=rejection.threshold,
                                        aggregate=o.aggregate)  # fmt: skip
        return result, {}
    if o.method == "adaptive":
        vote = adaptive_vote(generator, scorer, problem, max_n=o.n, confidence=o.confidence, equivalence=o.equivalence)
        solution = next((node for node in vote.solutions if node.answer == vote.answer), None)
        result = SearchResult(vote.answer, solution, float("nan"), vote.tokens, vote.solutions)
        return result, {"samples": vote.samples, "stopped": vote.stopped}
    return _search(generator, scorer, problem, o), {}


def _search(generator: StepGenerator, scorer: StepScorer, problem: Problem, o: SearchOptions) -> SearchResult:
    if o.method == "beam":
        return beam_search(generator, scorer, problem, width=o.width, expand=o.expand, aggregate=o.aggregate)
    if o.method == "best_of_n":
        return best_of_n_search(generator, scorer, problem, o.n, aggregate=o.aggregate)
    if o.method == "dvts":
        return diverse_tree_search(generator, scorer, problem, trees=o.width, expand=o.expand, aggregate=o.aggregate)
    if o.method == "best_first":
        return best_first_search(generator, scorer, problem, expand=o.expand, max_tokens=o.max_tokens, aggregate=o.aggregate)
    if o.method == "mcts":
        return mcts_search(generator, scorer, problem, simulations=o.simulations, expand=o.expand, aggregate=o.aggregate,
                           max_tokens=o.max_tokens)  # fmt: skip
    finished, meter = rollouts(generator, scorer, problem, o.n)
    votes = answer_votes([node.answer for node in finished], equivalence=o.equivalence)
    answer = votes[0][0] if votes else None  # the first-seen answer of the most voted class
    solution = next((node for node in finished if node.answer == answer), None)
    return SearchResult(answer, solution, float("nan"), meter.tokens, tuple(finished))


def _correct(problem: Problem, answer: str | None) -> bool | None:
    """Whether the answer is the gold one (`verify.math.check`); None without a gold answer or
    when the check could not decide (counted apart, never as wrong)."""
    if problem.reference is None:
        return None
    if answer is None:
        return False
    from rewardlab.verify.math import check

    verdict = check(problem.reference, answer)
    return None if verdict.outcome.value == "undecided" else bool(verdict.equivalent)


def search_problems(
    problems: Sequence[Problem], generator: StepGenerator, scorer: StepScorer, options: SearchOptions,
    rejection: RejectionRule | None = None,
) -> Iterator[dict[str, Any]]:
    """One row per problem, in order (see the module docstring); generation errors become rows.
    `rejection`: the calibrated rule of `early_rejection` (from `calibrate_rejection`)."""
    for index, problem in enumerate(problems):
        row: dict[str, Any] = {"problem": index, "line": problem.meta.get("line"), "id": problem.id, "method": options.method}
        try:
            result, extra = _run(generator, scorer, problem, options, rejection)
        except GenerationError as exc:
            yield {**row, "answer": None, "error": str(exc)}
            continue
        steps = [step.text for step in result.solution.steps] if result.solution is not None else None
        row.update(answer=result.answer, score=None if math.isnan(result.score) else result.score, tokens=result.tokens,
                   solutions=len(result.finished), steps=steps, correct=_correct(problem, result.answer), **extra)  # fmt: skip
        yield row


def write_search(rows: Iterator[dict[str, Any]], output: str | Path, config: dict[str, Any]) -> dict[str, Any]:
    """Write the rows stamped with `rewardlab_version` and `spec_hash` (of `config`); returns a
    summary: problems, errors, judged, accuracy (over judged problems) and mean tokens."""
    from rewardlab.core import stamp
    from rewardlab.core.sample import content_hash
    from rewardlab.runner.io import RowWriter

    stamped = stamp(content_hash(config)).to_dict()
    counts: Counter[str] = Counter()
    right = tokens = 0
    with RowWriter(output) as writer:
        for row in rows:
            counts["problems"] += 1
            counts["errors"] += "error" in row
            if row.get("correct") is not None:
                counts["judged"] += 1
                right += bool(row["correct"])
            tokens += int(row.get("tokens") or 0)
            writer.write({**row, **stamped})
    searched = counts["problems"] - counts["errors"]
    return {"problems": counts["problems"], "errors": counts["errors"], "judged": counts["judged"],
            "accuracy": right / counts["judged"] if counts["judged"] else None,
            "tokens_per_problem": tokens / searched if searched else None, "spec_hash": stamped["spec_hash"]}  # fmt: skip


def search_config(options: SearchOptions, **endpoint: object) -> dict[str, Any]:
    """What is hashed into the rows' `spec_hash`: the method, its budget and the endpoint settings."""
    return {"select": "search", **asdict(options), **endpoint}
