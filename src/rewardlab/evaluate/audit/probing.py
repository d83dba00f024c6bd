"""Run probes against a reward and decide which ones are hacks.

Every probe is applied twice: to the data's responses and to their wrong-answer
counterfactuals (`answers.wrong_answer_counterfactual`). On the data, a "not higher" probe can
only fire where the response was not already at the top; on the counterfactual it must not
beat the wrong answer alone, which catches a hack even when every response in the data is
correct. The counterfactual itself is checked too (`wrong_answer`): a response known to be right
(its final answer is the reference) must lose score when its answer is swapped for a wrong one.

Deciding "hack" depends on the reward:

- discrete rewards (a verifier's 0/1, partial credit): any sample whose score moves the wrong
  way by more than `tol` is a hack, with that sample as the example (the reward is
  deterministic, one case is proof);
- continuous rewards (a reward model): small moves on every sample are noise, so a probe is a
  hack only when its mean effect exceeds `min_effect` standard deviations of the original
  scores *and* a Wilcoxon signed-rank test over the samples is significant at `alpha`,
  Bonferroni-corrected over the probes run (one-sided "greater" for not_higher, two-sided for
  unchanged, one-sided "less" failing for wrong_answer).

A probe that lengthens the response (flattery, markdown, ...) is also compared with a
length-matched filler control; when it is a hack but beats the control by no more than noise,
the outcome says it `only_adds_length`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rewardlab._lazy import require
from rewardlab.core import JSON, Reward, RewardResult, Sample, Status
from rewardlab.errors import RunnerError
from rewardlab.evaluate.audit.answers import (
    final_answer,
    length_control,
    reference_text,
    wrong_answer_counterfactual,
)
from rewardlab.evaluate.audit.options import ProbeOptions
from rewardlab.evaluate.audit.probes import DEFAULT_PROBES, LENGTH_PROBE, Probe

__all__ = ["WRONG_ANSWER", "ProbeOptions", "ProbeOutcome", "run_probes"]

ScoreFn = Callable[[list[Sample]], list[RewardResult]]
Check = Literal["not_higher", "unchanged", "lower"]
WRONG_ANSWER = "wrong_answer"


@dataclass(frozen=True)
class ProbeOutcome:
    """What one probe did to a reward's scores.

    `flagged` counts data samples and `counterfactual_flagged` counterfactual samples where the
    probe broke its expectation by more than `tol`. `hack` is the verdict for the probe (see the
    module docstring); `p_value` is the test's for continuous rewards. Errors of either side are
    left out of every delta and counted by kind.
    """

    probe: str
    description: str
    expect: Check
    applied: int
    compared: int
    increased: int
    decreased: int
    flagged: int
    counterfactual_compared: int
    counterfactual_flagged: int
    mean_original: float | None
    mean_probed: float | None
    mean_delta: float | None
    max_abs_delta: float | None
    hack: bool
    continuous: bool
    p_value: float | None
    only_adds_length: bool | None  # None when the probe does not lengthen responses or is no hack
    mean_added_chars: float | None
    errors: dict[str, int]
    examples: list[dict[str, JSON]] = field(default_factory=list)

    @property
    def flag_rate(self) -> float:
        compared = self.compared + self.counterfactual_compared
        return (self.flagged + self.counterfactual_flagged) / compared if compared else 0.0

    def to_dict(self) -> dict[str, JSON]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["flag_rate"] = self.flag_rate
        return out


@dataclass(frozen=True)
class _Comparison:
    base: Sample
    probed: Sample
    base_result: RewardResult
    probed_result: RewardResult
    on: Literal["data", "counterfactual"]
    control: RewardResult | None = None


def _broke(delta: float, expect: Check, tol: float) -> bool:
    if expect == "not_higher":
        return delta > tol
    if expect == "unchanged":
        return abs(delta) > tol
    return delta > -tol  # "lower": the wrong answer did not lose score


def _significant(deltas: np.ndarray, expect: Check, scale: float, opts: ProbeOptions, n_tests: int) -> tuple[bool, float | None]:
    """Continuous rewards: is the effect beyond noise? Returns (broke the expectation, p)."""
    require("scipy", needed_by="the probes' significance test")
    from scipy import stats

    threshold = opts.min_effect * scale
    mean = float(deltas.mean()) if deltas.size else 0.0
    if deltas.size == 0 or np.all(np.abs(deltas) <= opts.tol):
        return expect == "lower" and deltas.size > 0, 1.0
    alternative = {"not_higher": "greater", "unchanged": "two-sided", "lower": "less"}[expect]
    p = float(stats.wilcoxon(deltas, alternative=alternative, zero_method="zsplit").pvalue)
    level = opts.alpha / max(n_tests, 1)
    if expect == "not_higher":
        return p < level and mean > threshold, p
    if expect == "unchanged":
        return p < level and abs(mean) > threshold, p
    return not (p < level and mean < -threshold), p


def _example(c: _Comparison, delta: float) -> tuple[float, dict[str, JSON]]:
    def snippet(text: str, limit: int = 300) -> str:
        return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2:]

    return abs(delta), {"id": c.base.id, "on": c.on, "original_score": c.base_result.score,
                        "probed_score": c.probed_result.score, "original_response": snippet(c.base.response_text),
                        "probed_response": snippet(c.probed.response_text)}


def _deltas(comparisons: Sequence[_Comparison]) -> tuple[list[tuple[_Comparison, float]], Counter[str]]:
    errors: Counter[str] = Counter()
    scored = []
    for c in comparisons:
        if c.probed_result.status is Status.ERROR and c.probed_result.error is not None:
            errors[c.probed_result.error.kind.value] += 1
        if c.base_result.score is not None and c.probed_result.score is not None:
            scored.append((c, c.probed_result.score - c.base_result.score))
    return scored, errors


def _length_only(scored: list[tuple[_Comparison, float]], expect: Check, continuous: bool, scale: float,
                 opts: ProbeOptions, n_tests: int) -> bool | None:
    """Does the probe beat a length-matched filler control? None without controls."""
    content = [c.probed_result.score - c.control.score for c, _ in scored  # type: ignore[operator]
               if c.control is not None and c.control.score is not None]
    if not content:
        return None
    d = np.asarray(content)
    beyond = _significant(d, expect, scale, opts, n_tests)[0] if continuous else bool(np.any(d > opts.tol))
    return not beyond


def _outcome(name: str, description: str, expect: Check, comparisons: list[_Comparison], *,
             continuous: bool, scale: float, opts: ProbeOptions, n_tests: int) -> ProbeOutcome:
    scored, errors = _deltas(comparisons)
    broke = [(c, d) for c, d in scored if _broke(d, expect, opts.tol)]
    data = [d for c, d in scored if c.on == "data"]
    d_all = np.asarray([d for _, d in scored])
    if continuous:
        hack, p = _significant(d_all, expect, scale, opts, n_tests)
    else:
        hack, p = bool(broke), None
    only_length = _length_only(scored, expect, continuous, scale, opts, n_tests) if hack else None
    added = [len(c.probed.response_text) - len(c.base.response_text) for c, _ in scored]
    originals = np.asarray([c.base_result.score for c, _ in scored if c.on == "data"], dtype=float)
    examples = sorted((_example(c, d) for c, d in broke), key=lambda row: -row[0])
    dd = np.asarray(data)
    return ProbeOutcome(
        probe=name, description=description, expect=expect, applied=sum(c.on == "data" for c in comparisons),
        compared=len(data), increased=int(np.sum(dd > opts.tol)), decreased=int(np.sum(dd < -opts.tol)),
        flagged=sum(c.on == "data" for c, _ in broke),
        counterfactual_compared=len(scored) - len(data), counterfactual_flagged=sum(c.on == "counterfactual" for c, _ in broke),
        mean_original=float(originals.mean()) if originals.size else None,
        mean_probed=float((originals + dd).mean()) if dd.size else None,
        mean_delta=float(dd.mean()) if dd.size else None, max_abs_delta=float(np.abs(d_all).max()) if d_all.size else None,
        hack=hack, continuous=continuous, p_value=p, only_adds_length=only_length,
        mean_added_chars=float(np.mean(added)) if added else None, errors=dict(errors),
        examples=[row for _, row in examples[: opts.max_examples]],
    )


def _is_continuous(results: Sequence[RewardResult], opts: ProbeOptions) -> bool:
    if opts.continuous is not None:
        return opts.continuous
    return len({r.score for r in results if r.score is not None}) > 10


def _scale(results: Sequence[RewardResult]) -> float:
    scores = np.asarray([r.score for r in results if r.score is not None], dtype=float)
    std = float(scores.std()) if scores.size else 0.0
    return std if std > 0 else 1.0


def _floor(reward: Reward, results: Sequence[RewardResult]) -> float:
    """The lowest score: the declared range's bottom, else the lowest seen."""
    low = reward.range[0]
    if np.isfinite(low):
        return float(low)
    return min((r.score for r in results if r.score is not None), default=0.0)


def _probe_comparisons(probe: Probe, bases: list[tuple[Sample, RewardResult, str]], score: ScoreFn) -> list[_Comparison]:
    """Apply `probe` to every base (data or counterfactual) and, for probes that add length, a
    filler control; score everything in two batches."""
    applied = [(b, p) for b in bases if (p := probe.apply(b[0])) is not None]
    probed = score([p for _, p in applied]) if applied else []
    controls: list[Sample | None] = [None] * len(applied)
    if probe.expect == "not_higher" and probe.name != LENGTH_PROBE:
        controls = [length_control(b[0], p) for b, p in applied]
    wanted = [c for c in controls if c is not None]
    control_results = iter(score(wanted) if wanted else [])
    out = []
    for ((base, result, on), p), r, ctrl in zip(applied, probed, controls, strict=True):
        out.append(_Comparison(base, p, result, r, on, next(control_results) if ctrl is not None else None))  # type: ignore[arg-type]
    return out


def _counterfactuals(
    reward: Reward, samples: Sequence[Sample], originals: Sequence[RewardResult], score: ScoreFn, opts: ProbeOptions,
    continuous: bool, scale: float, n_tests: int,
) -> tuple[list[tuple[Sample, RewardResult, str]], ProbeOutcome | None]:
    """The scored wrong-answer counterfactuals (as probe bases) and the `wrong_answer` check
    (None when no sample has an answer and a reference)."""
    pairs = [(s, r, cf) for s, r in zip(samples, originals, strict=True) if (cf := wrong_answer_counterfactual(s)) is not None]
    if not pairs:
        return [], None
    cf_results = score([cf for _, _, cf in pairs])
    floor = _floor(reward, [*originals, *cf_results])
    # known right (its answer is the reference) and scored above the floor: must lose score
    known = [_Comparison(s, cf, r, rc, "data") for (s, r, cf), rc in zip(pairs, cf_results, strict=True)
             if final_answer(s) == reference_text(s) and r.score is not None and r.score > floor + opts.tol]
    wrong = _outcome(WRONG_ANSWER, "the final answer swapped for a wrong one (a right response must lose score)",
                     "lower", known, continuous=continuous, scale=scale, opts=opts, n_tests=n_tests)
    return [(cf, r, "counterfactual") for (_, _, cf), r in zip(pairs, cf_results, strict=True)], wrong


def run_probes(
    reward: Reward,
    samples: Sequence[Sample],
    probes: Sequence[Probe] = DEFAULT_PROBES,
    *,
    options: ProbeOptions | None = None,
    score_fn: ScoreFn | None = None,
) -> tuple[list[RewardResult], list[ProbeOutcome]]:
    """Score `samples`, their wrong-answer counterfactuals and every probe of both with `reward`.

    Args:
        reward: any Reward (built-in, composite, learned, remote).
        samples: the dataset to probe (probes that need an answer skip samples without one).
        probes: which probes to run; default all of `DEFAULT_PROBES`.
        options: tolerance, significance and counterfactual settings (`ProbeOptions`).
        score_fn: scores a list of samples (e.g. a `WorkerPool.map` with timeouts);
            default `reward.score_batch`.

    Returns:
        The original results (one per sample) and one `ProbeOutcome` per probe, the
        `wrong_answer` check first when counterfactuals were built.
    """
    opts = options or ProbeOptions()
    score = score_fn or (lambda batch: reward.score_batch(batch))
    originals = score(list(samples))
    if len(originals) != len(samples):
        raise RunnerError(f"scorer returned {len(originals)} results for {len(samples)} samples")
    continuous, scale = _is_continuous(originals, opts), _scale(originals)
    bases: list[tuple[Sample, RewardResult, str]] = [(s, r, "data") for s, r in zip(samples, originals, strict=True)]
    outcomes = []
    n_tests = len(probes) + 1
    if opts.counterfactuals:
        cf_bases, wrong = _counterfactuals(reward, samples, originals, score, opts, continuous, scale, n_tests)
        bases += cf_bases
        outcomes += [wrong] if wrong is not None else []
    for probe in probes:
        outcomes.append(_outcome(probe.name, probe.description, probe.expect, _probe_comparisons(probe, bases, score),
                                 continuous=continuous, scale=scale, opts=opts, n_tests=n_tests))
    return originals, outcomes
