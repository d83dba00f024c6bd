"""`rewardlab eval`: benchmark numbers for a reward, with intervals, baselines and a report.

This module runs candidate sets (N responses per problem: best-of-N, majority and
reward-weighted vote accuracy, pass@k, the best-of-n curve, calibration and rank correlation of
every selector — the reward under test, scores shipped in the file, and the training-free
"pick the longest" and "pick the shortest" baselines — against a gold correctness) and
dispatches the other shapes: preference pairs (`run_pairs`), RewardBench 2 and RM-Bench
(`run_bench`), ProcessBench and PRMBench (`run_process`), JudgeBench verdicts (`run_judge`) and
scored rollouts.

Every headline number has a seeded bootstrap interval over problems (pairs: over prompts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rewardlab.core import JSON, Reward, RewardResult, Sample, spec_hash
from rewardlab.errors import UsageError
from rewardlab.evaluate import (
    calibration,
    passk,
    run_bench,
    run_judge,
    run_process,
    stats,
)
from rewardlab.evaluate._scoring import error_counts, load_reward, reporting_progress, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.audit.crosscheck import crosscheck_results, labels_as_results
from rewardlab.evaluate.audit.diagnostics import rollout_diagnostics
from rewardlab.evaluate.datasets import (
    CandidateSet,
    OnError,
    collecting,
    read_candidates,
    read_pairs,
    read_rows,
    read_scored_rollouts,
)
from rewardlab.evaluate.overoptimization import bon_curve, fit_bon
from rewardlab.evaluate.run_pairs import LENGTH, evaluate_pairs
from rewardlab.runner.candidate_rows import CandidateColumns

__all__ = ["evaluate_candidates", "run_eval"]

Spec = str | Path | dict[str, JSON] | Reward
SHORTEST = "shorter-wins baseline"


def _per_problem(values: Sequence[Any], problem: Sequence[int]) -> list[list[Any]]:
    groups: dict[int, list[Any]] = {}
    for v, p in zip(values, problem, strict=True):
        groups.setdefault(p, []).append(v)
    return [groups[p] for p in sorted(groups)]


def _scores_or_floor(results: Sequence[RewardResult]) -> list[float]:
    """Scores with error/skipped results ranked below every score (they are never preferred)."""
    ok = [r.score for r in results if r.score is not None]
    floor = (min(ok) if ok else 0.0) - 1.0
    return [r.score if r.score is not None else floor for r in results]


def _floor_missing(scores: Sequence[float]) -> list[float]:
    """The file's scores with the missing ones (NaN) ranked below every score, never preferred."""
    ok = [x for x in scores if not np.isnan(x)]
    floor = (min(ok) if ok else 0.0) - 1.0
    return [floor if np.isnan(x) else float(x) for x in scores]


def _vote(answers: Sequence[str | None], gold: Sequence[float], weights: Sequence[float] | None = None,
          ties: Literal["expected", "first"] = "expected") -> float:
    """`passk.vote_accuracy` over the candidates with an answer (None: no answer, no vote);
    0 when none has one (the vote abstains)."""
    keep = [i for i, a in enumerate(answers) if a is not None]
    if not keep:
        return 0.0
    w = None if weights is None else [weights[i] for i in keep]
    return passk.vote_accuracy([answers[i] for i in keep], [gold[i] for i in keep], w, ties=ties)


def _as_probs(scores: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, str]:
    """Scores as probabilities: as they are when the real ones (`valid`) lie in [0, 1] (the
    floor under a missing score then clips to weight 0), else through a sigmoid."""
    real = scores[valid] if valid.any() else scores
    if real.min() >= 0 and real.max() <= 1:
        return np.clip(scores, 0.0, 1.0), "score"
    return calibration.sigmoid(scores), "sigmoid(score)"


def _selector_numbers(
    name: str, scores: list[float], cands: CandidateSet, correct: np.ndarray, valid: np.ndarray, seed: int
) -> dict[str, Any]:
    """Selection, calibration and vote numbers of one selector. `valid` marks candidates whose
    selector score and gold are both real results: calibration and correlation use only those."""
    by_problem = _per_problem(scores, cands.problem)
    gold = _per_problem(correct.astype(float).tolist(), cands.problem)
    credit = np.asarray([passk.best_of_n(s, g) for s, g in zip(by_problem, gold, strict=True)])
    first = passk.best_of_n_accuracy(by_problem, gold, ties="first")  # Qwen rm@k convention
    curve = bon_curve(by_problem, gold)
    s = np.asarray(scores, dtype=float)
    out: dict[str, Any] = {"best_of_n": stats.bootstrap_ci(credit, seed=seed), "best_of_n_per_problem": credit,
                           "best_of_n_first_tie": first,
                           "bon_curve": curve, "calibrated_on_n": int(valid.sum()),
                           "spearman_vs_gold": stats.spearman(s[valid], correct[valid].astype(float))[0]}
    if len(curve.n) >= 3:  # Gao et al. form fitted to the gold gain over n = 1
        out["bon_fit"] = fit_bon(curve.kl, curve.gold - curve.gold[0])
    if name in (LENGTH, SHORTEST):  # a length is not a probability: no calibration, no weighted vote
        return out
    probs, mapped = _as_probs(s, valid)
    p, y = probs[valid], correct[valid]
    out |= {
        "calibration_input": mapped,
        "ece": calibration.ece(p, y), "mce": calibration.mce(p, y),
        "brier": calibration.brier_score(p, y), "reliability": calibration.reliability(p, y),
    }
    if cands.answers is not None:
        answers = _per_problem(cands.answers, cands.problem)
        weights = _per_problem(probs.tolist(), cands.problem)
        votes = np.asarray([_vote(a, g, w) for a, g, w in zip(answers, gold, weights, strict=True)])
        out["weighted_vote"] = stats.bootstrap_ci(votes, seed=seed)
        out["weighted_vote_per_problem"] = votes
    return out


def _gold(
    cands: CandidateSet, gold: Reward | None, workers: int, timeout: float | None
) -> tuple[np.ndarray, np.ndarray, str, dict[str, Any]]:
    """Gold correctness per candidate (the gold reward's pass, score >= 0.5, else the file's
    labels), which candidates have a real gold result, the gold's name, and extra numbers."""
    extra: dict[str, Any] = {}
    if gold is None:
        if cands.labels is None:
            raise UsageError("no gold: pass a gold reward (--gold SPEC) or a labels column (--labels)")
        # A candidate without a label is not a pass; it is counted and left out of calibration.
        known = np.asarray([label is not None for label in cands.labels])
        if not known.all():
            extra["unlabelled"] = int((~known).sum())
        return np.asarray([bool(label) for label in cands.labels]), known, "file labels", extra
    with scorer(gold, workers=workers, timeout=timeout) as score:
        results = score(cands.samples)
    extra["gold_errors"] = error_counts(results)
    if cands.labels is not None:
        extra["gold_vs_labels"] = crosscheck_results(results, labels_as_results(cands.labels), cands.samples,
                                             names=(gold.name, "file labels"), group_by="level")
    # An error is not a pass; it is counted in gold_errors and shown in the summary.
    correct = np.asarray([r.score is not None and r.score >= 0.5 for r in results])
    return correct, np.asarray([r.score is not None for r in results]), gold.name, extra


def evaluate_candidates(
    cands: CandidateSet, *, reward: Reward | None = None, gold: Reward | None = None,
    others: Sequence[Reward] = (), seed: int = 0, workers: int = 0, timeout: float | None = None,
) -> tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]:
    """Selection metrics over a candidate set. Returns summary rows, report sections, numbers.

    `reward` and each of `others` become selectors next to the file's scores and the length
    baseline; every two selectors are compared with a paired test."""
    correct, gold_ok, gold_name, extra = _gold(cands, gold, workers, timeout)
    selectors: dict[str, list[float]] = {}
    valid: dict[str, np.ndarray] = {}
    extra["reward_errors"] = {}
    for each in [r for r in (reward, *others) if r is not None]:
        with scorer(each, workers=workers, timeout=timeout) as score:
            results = score(cands.samples)
        extra["reward_errors"][each.name] = error_counts(results)
        selectors[each.name] = _scores_or_floor(results)
        valid[each.name] = gold_ok & np.asarray([r.score is not None for r in results])
    if cands.scores is not None:
        selectors["file scores"] = _floor_missing(cands.scores)
        has_score = ~np.isnan(np.asarray(cands.scores, dtype=float))
        valid["file scores"] = gold_ok & has_score
        if not has_score.all():
            extra["file_scores_missing"] = int((~has_score).sum())
    # training-free baselines: pick the longest, pick the shortest (majority vote is below)
    selectors[LENGTH] = [float(len(s.response_text)) for s in cands.samples]
    selectors[SHORTEST] = [-float(len(s.response_text)) for s in cands.samples]
    numbers: dict[str, Any] = {"gold": gold_name, "n_problems": cands.n_problems, "n_candidates": len(cands.samples), **extra}
    numbers["selectors"] = {name: _selector_numbers(name, s, cands, correct, valid.get(name, gold_ok), seed)
                            for name, s in selectors.items()}
    gold_by_problem = _per_problem(correct.astype(int).tolist(), cands.problem)
    n_max = min(len(g) for g in gold_by_problem)
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64) if k <= n_max]
    numbers["pass_at_k"] = {k: float(np.mean([passk.pass_at_k(len(g), sum(g), k) for g in gold_by_problem])) for k in ks}
    if cands.answers is not None:
        answers = _per_problem(cands.answers, cands.problem)
        maj = np.asarray([_vote(a, g) for a, g in zip(answers, gold_by_problem, strict=True)])
        numbers["majority_vote"] = stats.bootstrap_ci(maj, seed=seed)
        numbers["majority_vote_first_tie"] = float(np.mean([_vote(a, g, ties="first")
                                                            for a, g in zip(answers, gold_by_problem, strict=True)]))
        for sel in numbers["selectors"].values():
            sel["vs_majority_vote"] = stats.compare_paired(sel["best_of_n_per_problem"], maj, seed=seed)
    names = list(numbers["selectors"])
    numbers["comparisons"] = {  # paired tests of best-of-N between every two selectors
        f"{a} vs {b}": stats.compare_paired(numbers["selectors"][a]["best_of_n_per_problem"],
                                            numbers["selectors"][b]["best_of_n_per_problem"], seed=seed)
        for i, a in enumerate(names) for b in names[i + 1:]
    }
    return _candidate_summary(numbers), _candidate_sections(numbers, cands, correct, selectors), numbers


def _candidate_summary(numbers: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("gold", numbers["gold"]), ("problems × candidates", f"{numbers['n_problems']} × "
            f"{numbers['n_candidates'] // max(numbers['n_problems'], 1)}")]
    if "gold_errors" in numbers:
        rows.append(("gold errors", str(numbers["gold_errors"] or "none")))
    if "unlabelled" in numbers:
        rows.append(("candidates without a label", f"{numbers['unlabelled']} (not counted as right)"))
    if "file_scores_missing" in numbers:
        rows.append(("candidates without a file score", f"{numbers['file_scores_missing']} (never picked by file scores)"))
    for name, errors in numbers.get("reward_errors", {}).items():
        rows.append((f"errors of {name}", str(errors or "none")))
    for name, sel in numbers["selectors"].items():
        rows.append((f"best-of-N by {name}", str(sel["best_of_n"])))
        if "weighted_vote" in sel:
            rows.append((f"weighted vote by {name}", str(sel["weighted_vote"])))
    if "majority_vote" in numbers:
        rows.append(("majority vote (self-consistency)", str(numbers["majority_vote"])))
        first = ", ".join(f"best-of-N by {k} {v['best_of_n_first_tie']:.4f}" for k, v in numbers["selectors"].items())
        rows.append(("ties broken by order (Qwen rm_maj_eval)", f"majority vote {numbers['majority_vote_first_tie']:.4f}; {first}"))
    rows += [(f"pass@{k}", f"{v:.4f}") for k, v in numbers["pass_at_k"].items()]
    for label, c in numbers["comparisons"].items():
        rows.append((f"best-of-N: {label}", f"Δ = {c.difference} (p = {c.p_value:.3g}, {c.test})"))
    if "gold_vs_labels" in numbers:
        c = numbers["gold_vs_labels"]
        rows.append((f"{c.names[0]} vs file labels", f"agreement {c.agreement:.2%}, kappa {c.kappa:.3f}, "
                     f"{sum(c.by_category.values())} disagreements"))
    return rows


def _num(x: float | None) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{x:.4f}"


def _candidate_sections(numbers: dict[str, Any], cands: CandidateSet, correct: np.ndarray, selectors: dict[str, list[float]]) -> list[rp.Section]:
    sels = numbers["selectors"]
    first = next(iter(sels.values()))
    curves = {f"BoN by {k}": v["bon_curve"].gold for k, v in sels.items()}
    ns = first["bon_curve"].n
    curves["pass@k (oracle)"] = [numbers["pass_at_k"].get(int(n), np.nan) for n in ns]
    rows = [[name, str(v["best_of_n"]), str(v.get("weighted_vote", "—")), _num(v.get("ece")), _num(v.get("brier")),
             _num(v["spearman_vs_gold"]), v.get("calibration_input", "—")] for name, v in sels.items()]
    sections = [rp.Section(
        "Selection from candidates", text=f"gold = {numbers['gold']}; intervals are 95% bootstrap over problems "
        "(seeded). The length baseline picks the longest response, the shorter-wins baseline the shortest; "
        "majority vote (self-consistency) is in the summary. For selection, a gold error (see the "
        "summary) counts as not correct and a selector's error results rank below all its scores; calibration "
        "and correlation use only candidates where both are real results.",
        columns=["selector", "best-of-N [95% CI]", "weighted vote", "ECE", "Brier", "Spearman vs gold", "calibrated on"],
        rows=rows, figures=[("best-of-n curves", rp.plot_bon(ns, curves))])]
    gains = {k: v["bon_curve"].gold - v["bon_curve"].gold[0] for k, v in sels.items()}
    fits = {k: v["bon_fit"] for k, v in sels.items() if "bon_fit" in v}
    if fits:
        sections[0].figures.append(("over-optimisation", rp.plot_overoptimization(first["bon_curve"].kl, gains, fits)))
    figures = []
    for name, v in sels.items():
        if name in (LENGTH, SHORTEST):
            continue
        r = v["reliability"]
        figures.append((f"reliability {name}", rp.plot_reliability(r.confidence.tolist(), r.accuracy.tolist(), r.count.tolist(), title=f"Reliability: {name}")))
        figures.append((f"hist {name}", rp.plot_hist_by_label(selectors[name], correct.tolist(), title=f"{name} by gold label")))
        figures.append((f"length {name}", rp.plot_length_scatter(selectors[LENGTH], selectors[name], correct.tolist(), title=f"{name} vs length")))
    sections.append(rp.Section("Calibration and score distributions", figures=figures))
    if "gold_vs_labels" in numbers:
        from rewardlab.evaluate.audit.run_audit import crosscheck_section

        sections.append(crosscheck_section(numbers["gold_vs_labels"]))
    return sections


def evaluate_rollouts(
    samples: list[Sample], results: list[RewardResult], *, bounds: tuple[float, float] | None = None
) -> tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]:
    """Training-health diagnostics of already scored group rollouts (no reward is run)."""
    from rewardlab.evaluate.audit.run_audit import diagnostics_section

    diag = rollout_diagnostics(samples, results, bounds=bounds)
    numbers = {k: v for k, v in diag.to_dict().items() if k not in ("scores", "lengths")}

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:.1%}"

    summary = [("rollouts", str(diag.n)), ("ok", str(diag.ok)), ("errors by kind", str(diag.errors or "none")),
               ("skipped", str(diag.skipped)), ("groups (≥2 scores)", str(diag.groups)),
               ("zero-variance groups", pct(diag.zero_variance_share)),
               ("groups saturated high / low", f"{pct(diag.saturated_high_share)} / {pct(diag.saturated_low_share)}"),
               ("reward–length Spearman", _num(diag.length_spearman))]
    return summary, [diagnostics_section(diag, None)], numbers


Mode = Literal["candidates", "pairs", "rollouts", "bestofk", "rmbench", "process", "prmbench", "judge"]
MODES = ("candidates", "pairs", "rollouts", "bestofk", "rmbench", "process", "prmbench", "judge")


def _detect_mode(data: str | Path, columns: CandidateColumns, lenient: bool) -> Mode:
    """The shape of the file's first row (its first readable row when `lenient`)."""
    _, first = read_rows(data, on_error=(lambda _exc: None) if lenient else None)[0]
    if "reward_status" in first:
        return "rollouts"
    if "verdict_ab" in first or "judgments" in first:
        return "judge"
    if "modified_process" in first and "error_steps" in first:
        return "prmbench"
    if isinstance(first.get("steps"), list) and "label" in first:
        return "process"
    if isinstance(first.get("rejected"), list):
        chosen = first.get("chosen")
        return "rmbench" if isinstance(chosen, list) and len(chosen) == 3 and len(first["rejected"]) == 3 else "bestofk"
    if columns.responses and isinstance(first.get(columns.responses), list):
        return "candidates"
    if "chosen" in first and "rejected" in first:
        return "pairs"
    raise UsageError(f"cannot tell the data shape of {data}: expected a list column {columns.responses!r} "
                     "(candidate sets), `chosen`/`rejected` columns (pairs; a list of rejected for best-of-k, "
                     "three and three for RM-Bench), `steps` + `label` (ProcessBench), `modified_process` + `error_steps` (PRMBench), `judgments` (JudgeBench) or `reward_status` (scored "
                     "rollouts from `rewardlab score`); pass --mode")


def run_eval(
    spec: Spec | None, data: str | Path, *, mode: Literal["auto"] | Mode = "auto",
    gold: Spec | None = None, columns: CandidateColumns | None = None, seed: int = 0,
    workers: int = 0, timeout: float | None = None, threshold: float = 0.5, compare: Sequence[Spec] = (),
    on_error: OnError | None = None, progress: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> rp.Report:
    """Evaluate a reward on a data file and return the `Report` (`.write(dir)` for HTML + JSON).

    Args:
        spec: the reward under test (spec path, TOML, dict or Reward); for candidate sets it
            may be None to evaluate only the scores shipped in the file.
        data: JSONL/Parquet/saved dataset of candidate sets or preference pairs.
        mode: data shape; "auto" looks at the first row. "rollouts" reads a `rewardlab score`
            output file and reports training diagnostics (the spec, if given, gives the bounds);
            "bestofk" and "rmbench" are described in `run_bench`, "process" (ProcessBench) and
            "prmbench" in `run_process`, "judge" (JudgeBench) in `run_judge`.
        gold: gold reward for candidate sets (e.g. the maths verifier); default the file labels.
        columns: column names of a candidate-set file.
        seed: seed of every bootstrap; stamped into the report.
        workers, timeout: score in a worker pool with a per-sample timeout.
        threshold: ProcessBench: a step scoring below it is predicted wrong; PRMBench: a step
            scoring above it is predicted correct (each benchmark's own rule).
        compare: other rewards to compare with `spec` by paired tests (candidates and pairs).
        on_error: called with the `InputError` of each row of `data` that cannot be read (bad
            JSON, a missing or ill-typed column, lists of the wrong length, a non-finite score);
            the row is left out, the others are evaluated, and the report lists it under
            `unreadable`. Without it the first bad row raises.
        progress, on_batch: called with how many more samples were scored, and before each
            list of samples is scored with its size (every reward of the run, gold and
            comparisons included; see `evaluate._scoring.scorer`). Results do not depend on them.
    """
    note, unreadable = collecting(on_error)
    columns = columns or CandidateColumns()
    mode = _detect_mode(data, columns, on_error is not None) if mode == "auto" else mode
    if mode not in MODES:
        raise UsageError(f"mode must be auto or one of {', '.join(MODES)}; got {mode!r}")
    reward = load_reward(spec) if spec is not None else None
    with reporting_progress(progress, on_batch):
        summary, sections, numbers = _evaluate(mode, reward, data, gold=gold, columns=columns, seed=seed, workers=workers,
                                               timeout=timeout, threshold=threshold, compare=compare,
                                               on_error=note)  # fmt: skip
    numbers = {"mode": mode, "reward": repr(reward) if reward else None, **numbers}
    hash_ = spec_hash(reward) if reward is not None else "none (file scores only)"
    title = f"rewardlab eval: {reward.name if reward else 'file scores'} on {Path(data).name}"
    return rp.Report(title, rp.stamps(spec_hash=hash_, data=data, seed=seed), [("mode", mode), *summary], sections, numbers,
                     unreadable=rp.unreadable_rows(unreadable))  # fmt: skip


def _evaluate(
    mode: Mode, reward: Reward | None, data: str | Path, *, gold: Spec | None, columns: CandidateColumns, seed: int,
    workers: int, timeout: float | None, threshold: float, compare: Sequence[Spec], on_error: OnError | None,
) -> tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]:
    """Summary rows, sections and numbers of one mode (see `run_eval`)."""
    if mode == "judge":
        return run_judge.evaluate_judge(data, on_error=on_error)
    if mode == "rollouts":
        samples, results = read_scored_rollouts(data, on_error=on_error)
        bounds = reward.range if reward is not None and all(np.isfinite(reward.range)) else None
        return evaluate_rollouts(samples, results, bounds=bounds)
    if mode == "candidates":
        gold_reward = load_reward(gold) if gold is not None else None
        return evaluate_candidates(read_candidates(data, columns, on_error=on_error), reward=reward, gold=gold_reward,
                                   others=[load_reward(c) for c in compare], seed=seed, workers=workers, timeout=timeout)  # fmt: skip
    if reward is None:
        raise UsageError(f"{mode} evaluation needs a reward spec to score the responses")
    if mode == "pairs":
        return evaluate_pairs(read_pairs(data, on_error=on_error), reward, others=[load_reward(c) for c in compare],
                              seed=seed, workers=workers, timeout=timeout)  # fmt: skip
    if mode == "bestofk":
        return run_bench.evaluate_bestofk(data, reward, seed=seed, workers=workers, timeout=timeout, on_error=on_error)
    if mode == "rmbench":
        return run_bench.evaluate_rmbench(data, reward, workers=workers, timeout=timeout, on_error=on_error)
    if mode == "process":
        return run_process.evaluate_process(data, reward, threshold=threshold, workers=workers, timeout=timeout, on_error=on_error)
    return run_process.evaluate_prmbench(data, reward, threshold=threshold, workers=workers, timeout=timeout, on_error=on_error)
