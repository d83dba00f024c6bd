"""Process rewards on ProcessBench and PRMBench files, scored the way each benchmark scores.

Row shapes (the benchmarks' own releases):

- ProcessBench: `problem`, `steps` (list of strings), `label` (index of the first wrong step, −1
  when all are right), the subset in `subset` (the release's split name: gsm8k, math,
  olympiadbench, omnimath). A step scoring below `threshold` is predicted wrong; the prediction is
  the first such step, or −1.
- PRMBench: `modified_question`, `modified_process` (the steps), `error_steps` (1-based indices),
  `classification`, `idx`, and for the "redundency" rows the `original_question` and
  `original_process` from which the fully correct solutions are built (as the official loader
  does). A step scoring above `threshold` is predicted correct.

The reward must return one score per step (`RewardResult.steps`). Rows whose result is an error,
or has no or a different number of step scores, are dropped and counted by reason; the official
PRMBench scorer also skips invalid predictions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardlab.core import Reward, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.evaluate import prm_metrics, prmbench
from rewardlab.evaluate._scoring import error_counts, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.datasets import OnError, read_parsed

__all__ = ["evaluate_prmbench", "evaluate_process"]

Outcome = tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]


def _steps(value: Any, column: str, source: str, line: int) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise InputError(f"column {column!r} must be a non-empty list of strings", source=source, line=line)
    return value


def _usable(samples: list[Sample], results: list[RewardResult], reward: Reward, source: str) -> tuple[list[int], dict[str, int]]:
    """Indices whose result has one score per step, and the others counted by reason."""
    usable = [i for i, r in enumerate(results) if r.steps is not None and len(r.steps) == len(samples[i].steps or ())]
    unusable = sorted(set(range(len(results))) - set(usable))
    dropped = error_counts([results[i] for i in unusable])
    no_steps = sum(1 for i in unusable if results[i].score is not None and results[i].steps is None)
    mismatch = sum(1 for i in unusable if results[i].score is not None and results[i].steps is not None)
    if no_steps:
        dropped["no_step_scores"] = no_steps
    if mismatch:
        dropped["step_count_mismatch"] = mismatch
    if not usable:
        raise InputError(f"no sample got one score per step from {reward.name}; dropped: {dropped}", source=source)
    return usable, dropped


def _score(reward: Reward, samples: list[Sample], workers: int, timeout: float | None) -> list[RewardResult]:
    with scorer(reward, workers=workers, timeout=timeout) as score:
        return score(samples)


def _processbench_rows(path: str | Path, on_error: OnError | None = None) -> tuple[list[Sample], list[int], list[str]]:
    source = str(path)

    def solution(line: int, row: dict[str, Any]) -> tuple[Sample, int, str]:
        steps = _steps(row.get("steps"), "steps", source, line)
        label = row.get("label")
        if isinstance(label, bool) or not isinstance(label, int) or not -1 <= label < len(steps):
            raise InputError(f"label must be -1 or a step index below {len(steps)}, got {label!r}", source=source, line=line)
        sample = Sample(prompt=str(row.get("problem", row.get("prompt", ""))), response="\n\n".join(steps),
                        steps=tuple(steps), meta={"line": line})
        return sample, label, str(row.get("subset", "all"))

    rows = read_parsed(path, solution, on_error=on_error)
    return [s for s, _, _ in rows], [label for _, label, _ in rows], [sub for _, _, sub in rows]


def _known_step_labels(label: int, n_steps: int) -> list[int]:
    """Steps before the first error are right (1), the first error is wrong (0); later steps are
    unknown in ProcessBench and left out. All steps are right when label is −1."""
    return [1] * n_steps if label == -1 else [1] * label + [0]


def evaluate_process(path: str | Path, reward: Reward, *, threshold: float = 0.5, workers: int = 0,
                     timeout: float | None = None, on_error: OnError | None = None) -> Outcome:
    """ProcessBench F1 per subset and its headline, the mean of the subsets' F1. With
    `on_error`, a row that cannot be read is handed to it and left out."""
    samples, labels, subsets = _processbench_rows(path, on_error)
    results = _score(reward, samples, workers, timeout)
    usable, dropped = _usable(samples, results, reward, str(path))
    preds = {i: prm_metrics.first_error_step(results[i].steps or (), threshold=threshold) for i in usable}
    by_subset: dict[str, prm_metrics.ProcessBenchScore] = {}
    undefined: dict[str, str] = {}
    for name in sorted({subsets[i] for i in usable}):
        idx = [i for i in usable if subsets[i] == name]
        try:
            by_subset[name] = prm_metrics.processbench_f1([labels[i] for i in idx], [preds[i] for i in idx])
        except InputError as exc:  # a subset with only correct or only flawed solutions
            undefined[name] = str(exc)
    pooled = prm_metrics.processbench_f1([labels[i] for i in usable], [preds[i] for i in usable]) \
        if len({labels[i] == -1 for i in usable}) == 2 else None
    average = prm_metrics.processbench_average(by_subset) if by_subset and not undefined else None
    truth = [t for i in usable for t in _known_step_labels(labels[i], len(samples[i].steps or ()))]
    guess = [int(s >= threshold) for i in usable
             for s in (results[i].steps or ())[: len(_known_step_labels(labels[i], len(samples[i].steps or ())))]]
    step = prm_metrics.step_f1(truth, guess)
    headline = "—" if average is None else f"{average:.4f}"
    if undefined:
        headline += f" (undefined: F1 needs flawed and correct solutions in {sorted(undefined)})"
    summary = [("solutions scored", f"{len(usable)}/{len(samples)}"), ("dropped", str(dropped or "none")),
               (f"ProcessBench F1, mean of {len(by_subset)} subsets (the official headline)", headline)]
    if pooled is not None:
        summary.append(("F1 of the pooled solutions (not the official headline)", f"{pooled.f1:.4f}"))
    summary.append(("step F1+ / F1− over steps up to the first error (not PRMBench)",
                    f"{step.f1_positive:.4f} / {step.f1_negative:.4f}"))
    rows = [[n, f"{v.acc_error:.4f}", f"{v.acc_correct:.4f}", f"{v.f1:.4f}", v.n_error, v.n_correct] for n, v in by_subset.items()]
    rows += [[n, "—", "—", msg, "—", "—"] for n, msg in undefined.items()]
    section = rp.Section("First-error detection (ProcessBench)",
                         text=f"a step scoring below {threshold} is predicted wrong; the headline is the mean of the subsets' F1.",
                         columns=["subset", "acc (flawed)", "acc (correct)", "F1", "flawed", "correct"], rows=rows)
    numbers = {"threshold": threshold, "dropped": dropped, "subsets": by_subset, "undefined_subsets": undefined,
               "average_f1": average, "pooled": pooled, "step_f1_known_steps": step}
    return summary, [section], numbers


_Solution = tuple[str, str, Any, list[str], tuple[int, ...], int]  # idx, class, question, steps, error steps, line


def _prmbench_row(line: int, row: dict[str, Any], source: str) -> list[_Solution]:
    """The solutions one PRMBench row gives: its modified process, and for a "redundency" row
    first the correct original (the official loader's source of fully correct solutions)."""
    cls = row.get("classification")
    errors = row.get("error_steps")
    if not isinstance(cls, str) or not isinstance(errors, list) or not all(
            isinstance(e, int) and not isinstance(e, bool) and e >= 1 for e in errors):
        raise InputError("PRMBench rows need `classification` (a string) and `error_steps` (1-based step indices)",
                         source=source, line=line)
    steps = _steps(row.get("modified_process"), "modified_process", source, line)
    out: list[_Solution] = []
    if cls == "redundency":
        original = _steps(row.get("original_process"), "original_process", source, line)
        out.append((f"correct_{row.get('idx')}", "correct", row.get("original_question", ""), original, (), line))
    out.append((f"{cls}_{row.get('idx')}", cls, row.get("modified_question", ""), steps, tuple(errors), line))
    return out


def _prmbench_rows(path: str | Path, on_error: OnError | None = None) -> tuple[list[Sample], list[tuple[str, str, tuple[int, ...]]]]:
    """Samples and (idx, classification, error_steps) as the official `load_data_function` builds
    them: each row once per "<classification>_<idx>", plus "correct_<idx>" from redundency rows."""
    source = str(path)
    samples: list[Sample] = []
    keys: list[tuple[str, str, tuple[int, ...]]] = []
    seen: set[str] = set()
    for solutions in read_parsed(path, lambda line, row: _prmbench_row(line, row, source), on_error=on_error):
        for idx, cls, question, steps, errors, line in solutions:
            if idx in seen:
                continue
            seen.add(idx)
            samples.append(Sample(prompt=str(question), response="\n\n".join(steps), steps=tuple(steps),
                                  meta={"line": line, "idx": idx, "classification": cls}))
            keys.append((idx, cls, errors))
    return samples, keys


def evaluate_prmbench(path: str | Path, reward: Reward, *, threshold: float = 0.5, workers: int = 0,
                      timeout: float | None = None, on_error: OnError | None = None) -> Outcome:
    """PRMBench PRMScore overall, per class and per category (official scorer's rules). With
    `on_error`, a row that cannot be read is handed to it and left out."""
    samples, keys = _prmbench_rows(path, on_error)
    results = _score(reward, samples, workers, timeout)
    usable, dropped = _usable(samples, results, reward, str(path))
    solutions = [prmbench.PRMBenchSolution(keys[i][0], keys[i][1], keys[i][2],
                                           tuple(s > threshold for s in results[i].steps or ())) for i in usable]
    result = prmbench.prmbench_scores(solutions)
    o = result.overall
    summary = [("solutions scored", f"{len(usable)}/{len(samples)} (correct originals included, scored apart)"),
               ("dropped", str(dropped or "none")),
               ("PRMScore (PRMBench overall)", f"{o['prm_score']:.4f}"),
               ("F1 / negative F1", f"{o['f1']:.4f} / {o['negative_f1']:.4f}")]
    summary += [(f"category {k}", f"{v:.4f}") for k, v in result.by_category.items()]
    rows = [[c, f"{v['prm_score']:.4f}", f"{v['f1']:.4f}", f"{v['negative_f1']:.4f}", f"{v['first_error_acc']:.4f}",
             f"{v['similarity']:.4f}"] for c, v in result.by_class.items()]
    section = rp.Section("Step classification (PRMBench)",
                         text=f"a step scoring above {threshold} is predicted correct; every step not in error_steps is "
                              "correct; 'correct' originals are not in the total; -1 marks an undefined value, as in the "
                              "official scorer; multi_solutions is scored by F1 alone.",
                         columns=["class", "PRMScore", "F1", "negative F1", "first-error acc", "similarity"], rows=rows)
    return summary, [section], {"threshold": threshold, "dropped": dropped, "prmbench": result}
