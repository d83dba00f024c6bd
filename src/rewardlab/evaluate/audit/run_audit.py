"""`rewardlab audit`: probe a reward for hacks, cross-check it, diagnose its scores, report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from rewardlab.core import JSON, Reward, Sample, spec_hash
from rewardlab.errors import InputError
from rewardlab.evaluate._scoring import error_counts, load_reward, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.audit.crosscheck import CrossCheck, crosscheck_results, labels_as_results
from rewardlab.evaluate.audit.diagnostics import Diagnostics, rollout_diagnostics
from rewardlab.evaluate.audit.probes import DEFAULT_PROBES, Probe, ProbeOutcome, run_probes
from rewardlab.evaluate.datasets import CandidateColumns, read_candidates

__all__ = ["audit_reward", "crosscheck_section", "diagnostics_section", "load_samples"]


def load_samples(
    data: str | Path,
    *,
    fields: Mapping[str, str] | None = None,
    candidates: CandidateColumns | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> list[Sample]:
    """Samples of a data file (one per row, or one per candidate of a candidate-set file);
    with `limit`, a seeded random subset kept in file order."""
    if candidates is not None:
        samples = read_candidates(data, candidates).samples
    else:
        from rewardlab.runner.io import read_samples

        samples = read_samples(data, fields=fields)
    if not samples:
        raise InputError("no samples", source=str(data))
    if limit is not None and limit < len(samples):
        keep = np.sort(np.random.default_rng(seed).choice(len(samples), size=limit, replace=False))
        samples = [samples[i] for i in keep]
    return samples


def _labels(samples: Sequence[Sample], label_field: str | None) -> list[bool] | None:
    if label_field is None:
        return None
    out = []
    for s in samples:
        value = s.meta.get(label_field)
        if not isinstance(value, bool | int) or value not in (0, 1):
            raise InputError(f"label field {label_field!r} is {value!r}; expected true/false", source=f"sample {s.id}")
        out.append(bool(value))
    return out


def _probe_section(outcomes: Sequence[ProbeOutcome]) -> rp.Section:
    rows = [[o.probe, o.expect, o.applied, o.compared, o.increased, o.decreased, o.flagged,
             f"{o.flag_rate:.1%}", _fmt(o.mean_delta), _fmt(o.max_abs_delta),
             ", ".join(f"{k}:{v}" for k, v in o.errors.items())] for o in outcomes]
    examples = [f"[{o.probe}] {ex['original_score']} -> {ex['probed_score']}\n--- original:\n"
                f"{ex['original_response']}\n--- probed:\n{ex['probed_response']}"
                for o in outcomes for ex in o.examples[:1]]
    figure = rp.plot_probe_deltas([o.probe for o in outcomes], [o.mean_delta for o in outcomes], [o.flag_rate for o in outcomes])
    return rp.Section(
        "Hacking probes",
        text="flagged = samples where the probe broke its expectation (rose for not_higher, moved at all for unchanged). "
             "Errors on probed samples are counted, never scored.",
        columns=["probe", "expect", "applied", "compared", "up", "down", "flagged", "flag rate", "mean Δ", "max |Δ|", "errors"],
        rows=rows, figures=[("probe deltas", figure)], examples=examples, flag_cols=(6,), terminal_cols=(0, 1, 6, 3, 8, 10),
    )


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:+.4f}"


def crosscheck_section(check: CrossCheck) -> rp.Section:
    """Report section of a cross-check: confusion, categories, groups, example disagreements."""
    rows = [[k, v] for k, v in check.confusion.items()] + [[f"category: {k}", v] for k, v in check.by_category.items()]
    rows += [[f"group {k}", f"{v.get('disagree', 0)}/{v['total']}"] for k, v in check.by_group.items()]
    kappa = "—" if check.kappa is None else f"{check.kappa:.3f}"
    agreement = "—" if check.agreement is None else f"{check.agreement:.1%}"
    examples = [f"{d['category']} (reference {d['reference']!r}, id {d['id']})\n…{d['response_tail']}" for d in check.disagreements[:5]]
    return rp.Section(f"Cross-check: {check.names[0]} vs {check.names[1]}",
                      text=f"agreement {agreement}, Cohen's kappa {kappa}, both scored {check.both_scored}/{check.n}",
                      columns=["pass/fail of a / b", "count"], rows=rows, examples=examples)


def audit_reward(
    spec: str | Path | dict[str, JSON] | Reward,
    data: str | Path,
    *,
    probes: Sequence[Probe] = DEFAULT_PROBES,
    fields: Mapping[str, str] | None = None,
    candidates: CandidateColumns | None = None,
    limit: int | None = None,
    seed: int = 0,
    against: str | Path | dict[str, JSON] | Reward | None = None,
    label_field: str | None = None,
    group_by: str | None = None,
    workers: int = 0,
    timeout: float | None = None,
) -> rp.Report:
    """Audit a reward on a dataset: probes, optional cross-check (against another reward or the
    data's labels), score diagnostics; returns a `Report` (call `.write(dir)`)."""
    reward = load_reward(spec)
    samples = load_samples(data, fields=fields, candidates=candidates, limit=limit, seed=seed)
    with scorer(reward, workers=workers, timeout=timeout) as score:
        originals, outcomes = run_probes(reward, samples, probes, score_fn=score)
    labels = _labels(samples, label_field)
    sections = [_probe_section(outcomes)]
    numbers: dict[str, JSON] = {"reward": repr(reward), "n_samples": len(samples),
                                "errors": error_counts(originals), "probes": [o.to_dict() for o in outcomes]}
    checks = []
    if against is not None:
        other = load_reward(against)
        with scorer(other, workers=workers, timeout=timeout) as score:
            checks.append(crosscheck_results(originals, score(samples), samples, names=(reward.name, other.name), group_by=group_by))
    if labels is not None:
        checks.append(crosscheck_results(originals, labels_as_results(labels), samples, names=(reward.name, label_field or "labels"), group_by=group_by))
    for check in checks:
        sections.append(crosscheck_section(check))
    numbers["crosschecks"] = [c.to_dict() for c in checks]
    diag = rollout_diagnostics(samples, originals, bounds=_bounds(reward))
    sections.append(diagnostics_section(diag, labels))
    numbers["diagnostics"] = {k: v for k, v in diag.to_dict().items() if k not in ("scores", "lengths")}
    flagged = [o.probe for o in outcomes if o.flagged]
    summary = [("reward", repr(reward)), ("samples", str(len(samples))),
               ("errors on originals", str(error_counts(originals) or "none")),
               ("probes flagged", ", ".join(f"{o.probe} ({o.flagged}/{o.compared})" for o in outcomes if o.flagged) or "none")]
    numbers["flagged_probes"] = flagged
    stamps = rp.stamps(spec_hash=spec_hash(reward), data=data, seed=seed)
    return rp.Report(f"rewardlab audit: {reward.name}", stamps, summary, sections, numbers)


def _bounds(reward: Reward) -> tuple[float, float] | None:
    lo, hi = reward.range
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None


def diagnostics_section(diag: Diagnostics, labels: list[bool] | None) -> rp.Section:
    """Report section of rollout diagnostics, with a length scatter (and histogram by label)."""
    d = diag.to_dict()
    keys = ["n", "ok", "errors", "skipped", "mean", "std", "groups", "zero_variance_share",
            "saturated_high_share", "saturated_low_share", "at_bound_share", "length_spearman"]
    rows = [[k, d[k] if not isinstance(d[k], float) else round(d[k], 4)] for k in keys]
    rows += [[f"component {k}", v] for k, v in d["components"].items()]
    names = list(d["component_correlation"])
    rows += [[f"corr({a}, {b})", "—" if d["component_correlation"][a][b] is None else round(d["component_correlation"][a][b], 4)]
             for i, a in enumerate(names) for b in names[i + 1:]]
    figures = []
    scores, lengths = d["scores"], d["lengths"]
    if scores:
        use_labels = labels if labels is not None and len(labels) == len(scores) else None
        figures.append(("length scatter", rp.plot_length_scatter(lengths, scores, use_labels)))
        if use_labels is not None:
            figures.append(("scores by label", rp.plot_hist_by_label(scores, use_labels)))
    return rp.Section("Score diagnostics", text="Groups are the data's `group` (or prompt); errors are counted, never averaged.",
                      columns=["quantity", "value"], rows=rows, figures=figures)
