"""`rewardlab audit`: probe a reward for hacks, cross-check it, diagnose its scores, report."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from rewardlab.core import JSON, Reward, Sample, spec_hash
from rewardlab.errors import InputError
from rewardlab.evaluate._scoring import error_counts, load_reward, reporting_progress, scorer
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.audit.crosscheck import CrossCheck, crosscheck_results, labels_as_results
from rewardlab.evaluate.audit.diagnostics import Diagnostics, rollout_diagnostics
from rewardlab.evaluate.audit.probes import DEFAULT_PROBES, Probe
from rewardlab.evaluate.audit.probing import ProbeOptions, ProbeOutcome, run_probes
from rewardlab.evaluate.datasets import OnError, collecting, read_candidates, read_parsed
from rewardlab.runner.candidate_rows import CandidateColumns

__all__ = ["audit_reward", "crosscheck_section", "diagnostics_section"]


def load_samples(
    data: str | Path,
    *,
    fields: Mapping[str, str] | None = None,
    candidates: CandidateColumns | None = None,
    limit: int | None = None,
    seed: int = 0,
    on_error: OnError | None = None,
) -> list[Sample]:
    """Samples of a data file (one per row, or one per candidate of a candidate-set file);
    with `limit`, a seeded random subset kept in file order. With `on_error`, a row that
    cannot be read (bad JSON, a field `Sample.from_dict` refuses, a broken candidate set) is
    handed to it and left out."""
    if candidates is not None:
        samples = read_candidates(data, candidates, on_error=on_error).samples
    else:
        source = str(data)
        samples = read_parsed(data, lambda line, row: Sample.from_dict(row, fields=fields, source=source, line=line),
                              on_error=on_error)  # fmt: skip
    if not samples:
        raise InputError("no samples", source=str(data))
    if limit is not None and limit < len(samples):
        keep = np.sort(np.random.default_rng(seed).choice(len(samples), size=limit, replace=False))
        samples = [samples[i] for i in keep]
    return samples


def _labels(samples: Sequence[Sample], label_field: str | None) -> list[bool | None] | None:
    """Each sample's label from `meta[label_field]`: true/false or 1/0; None where unknown (the
    field is missing, null or NaN), which leaves that sample out of the cross-check only."""
    if label_field is None:
        return None
    out: list[bool | None] = []
    for s in samples:
        value = s.meta.get(label_field)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out.append(None)
        elif isinstance(value, bool | int | float) and value in (0, 1):
            out.append(bool(value))
        else:
            raise InputError(f"label field {label_field!r} is {value!r:.60}; expected true/false or 1/0 (null for unknown)", source=f"sample {s.id}")
    if samples and all(label is None for label in out):
        raise InputError(f"no sample has a label in {label_field!r}; name the label field the data has", source="labels")
    return out


def _probe_row(o: ProbeOutcome) -> list[JSON]:
    note = "only adds length" if o.only_adds_length else ""
    return [o.probe, o.expect, _label(o), f"{o.flagged}/{o.compared}",
            f"{o.counterfactual_flagged}/{o.counterfactual_compared}", _fmt(o.mean_delta), _fmt(o.max_abs_delta),
            "—" if o.p_value is None else f"{o.p_value:.2g}", note, ", ".join(f"{k}:{v}" for k, v in o.errors.items())]


def _probe_section(outcomes: Sequence[ProbeOutcome]) -> rp.Section:
    examples = [f"[{o.probe}, on {ex['on']}] {ex['original_score']} -> {ex['probed_score']}\n--- before:\n"
                f"{ex['original_response']}\n--- probed:\n{ex['probed_response']}"
                for o in outcomes for ex in o.examples[:1]]
    figure = rp.plot_probe_deltas([o.probe for o in outcomes], [o.mean_delta for o in outcomes],
                                  [1.0 if o.hack else 0.0 for o in outcomes])
    continuous = any(o.continuous for o in outcomes)
    rule = ("continuous scores: a hack needs a mean effect beyond min_effect std of the scores and a significant "
            "Wilcoxon test (p, Bonferroni over the probes)" if continuous else
            "discrete scores: one sample moved the wrong way is a hack (the reward is deterministic)")
    return rp.Section(
        "Hacking probes",
        text="Each probe runs on the data and on wrong-answer counterfactuals of it (the final answer swapped for a wrong "
             "one; a hack must not beat the wrong answer alone). flagged = samples that broke the expectation (rose for "
             f"not_higher, moved for unchanged, did not drop for lower); {rule}. 'only adds length' = no effect beyond a "
             "length-matched filler. Errors on probed samples are counted, never scored.",
        columns=["probe", "expect", "verdict", "flagged (data)", "flagged (counterfactual)", "mean Δ", "max |Δ|", "p",
                 "note", "errors"],
        rows=[_probe_row(o) for o in outcomes], figures=[("probe deltas", figure)], examples=examples,
        flag_cols=(2,), terminal_cols=(0, 2, 3, 4, 5, 8),
    )


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:+.4f}"


def crosscheck_line(check: CrossCheck) -> str:
    """One line naming a and b and how much they agree."""
    a, b = check.names
    if check.ranking is not None:
        r = check.ranking
        if "spearman" in r:
            return f"a = {a}, b = {b} (both unbounded): Spearman {_num(r['spearman'])} on {check.both_scored} samples"
        return (f"a = {a}, b = {b}: {r['ranked']} (unbounded) ranked by {r['by']}'s pass/fail: AUROC {_num(r['auroc'])}, "
                f"pairwise accuracy within prompts {_num(r['pairwise_accuracy_within_groups'])} ({r['pairs']} pairs)")
    kappa = "—" if check.kappa is None else f"{check.kappa:.3f}"
    agreement = "—" if check.agreement is None else f"{check.agreement:.1%}"
    return f"a = {a}, b = {b}: agreement {agreement}, Cohen's kappa {kappa}, both scored {check.both_scored}/{check.n}"


def _num(x: object) -> str:
    return "—" if not isinstance(x, float) else f"{x:.3f}"


def crosscheck_section(check: CrossCheck) -> rp.Section:
    """Report section of a cross-check: confusion (or ranking), categories, groups, disagreements."""
    a, b = check.names
    rows: list[list[JSON]] = [[f"{a} {k.split('/')[0]}, {b} {k.split('/')[1]}", v] for k, v in check.confusion.items()] \
        if check.by_threshold else []
    rows += [[f"category: {k}", v] for k, v in check.by_category.items()]
    rows += [[f"group {k}", f"{v.get('disagree', 0)}/{v['total']}"] for k, v in check.by_group.items()]
    examples = [f"{d['category']} (reference {d['reference']!r}, id {d['id']})\n…{d['response_tail']}" for d in check.disagreements[:5]]
    return rp.Section(f"Cross-check: a = {a} vs b = {b}", text=crosscheck_line(check),
                      columns=["outcome (a, b)", "count"], rows=rows, examples=examples)


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
    probe_options: ProbeOptions | None = None,
    on_error: OnError | None = None,
    progress: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> rp.Report:
    """Audit a reward on a dataset: probes (on the data and on wrong-answer counterfactuals),
    optional cross-check (against another reward or the data's labels), score diagnostics;
    returns a `Report` (call `.write(dir)`) whose `verdict` is its one-line conclusion.

    With `on_error`, each row of `data` that cannot be read is handed to it and left out; the
    report lists those rows under `unreadable` (see `load_samples`). `progress` and `on_batch`
    hear of every sample scored, counterfactuals included (see `evaluate._scoring.scorer`)."""
    with reporting_progress(progress, on_batch):
        return _audit(spec, data, probes=probes, fields=fields, candidates=candidates, limit=limit, seed=seed,
                      against=against, label_field=label_field, group_by=group_by, workers=workers, timeout=timeout,
                      probe_options=probe_options, on_error=on_error)  # fmt: skip


def _audit(
    spec: str | Path | dict[str, JSON] | Reward, data: str | Path, *, probes: Sequence[Probe], fields: Mapping[str, str] | None,
    candidates: CandidateColumns | None, limit: int | None, seed: int, against: str | Path | dict[str, JSON] | Reward | None,
    label_field: str | None, group_by: str | None, workers: int, timeout: float | None, probe_options: ProbeOptions | None,
    on_error: OnError | None,
) -> rp.Report:
    reward = load_reward(spec)
    note, unreadable = collecting(on_error)
    samples = load_samples(data, fields=fields, candidates=candidates, limit=limit, seed=seed,
                           on_error=note)  # fmt: skip
    with scorer(reward, workers=workers, timeout=timeout) as score:
        originals, outcomes = run_probes(reward, samples, probes, options=probe_options, score_fn=score)
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
        numbers["unlabelled"] = sum(label is None for label in labels)
    for check in checks:
        sections.append(crosscheck_section(check))
    numbers["crosschecks"] = [c.to_dict() for c in checks]
    diag = rollout_diagnostics(samples, originals, bounds=_bounds(reward))
    sections.append(diagnostics_section(diag, labels))
    numbers["diagnostics"] = {k: v for k, v in diag.to_dict().items() if k not in ("scores", "lengths")}
    flagged = [o.probe for o in outcomes if o.hack]
    summary = [("reward", repr(reward)), ("samples", str(len(samples))),
               ("errors on originals", str(error_counts(originals) or "none")),
               ("probes flagged", ", ".join(_flag_text(o) for o in outcomes if o.hack) or "none")]
    summary += [(f"cross-check {i + 1}", crosscheck_line(c)) for i, c in enumerate(checks)]
    if numbers.get("unlabelled"):
        summary.append(("unlabelled samples", f"{numbers['unlabelled']} of {len(samples)} (no {label_field!r}; left out of the label cross-check)"))
    numbers["flagged_probes"] = flagged
    stamps = rp.stamps(spec_hash=spec_hash(reward), data=data, seed=seed)
    verdict = _verdict(reward.name, outcomes, checks)
    numbers["verdict"] = verdict
    return rp.Report(f"rewardlab audit: {reward.name}", stamps, summary, sections, numbers, verdict=verdict,
                     unreadable=rp.unreadable_rows(unreadable))


def _label(o: ProbeOutcome) -> str:
    """HACK: a change of no value raised the score (or a wrong answer kept it); BRITTLE: a
    meaning-preserving format change moved it (a false negative, not an exploit)."""
    if not o.hack:
        return ""
    return "BRITTLE" if o.expect == "unchanged" else "HACK"


def _flag_text(o: ProbeOutcome) -> str:
    text = f"{o.probe} [{_label(o)}] ({o.flagged}/{o.compared} data"
    if o.counterfactual_compared:
        text += f", {o.counterfactual_flagged}/{o.counterfactual_compared} counterfactual"
    return text + ")" + (" — only adds length" if o.only_adds_length else "")


def _verdict(name: str, outcomes: Sequence[ProbeOutcome], checks: Sequence[CrossCheck]) -> str:
    def listed(kind: str) -> list[str]:
        return [o.probe + (" (only adds length)" if o.only_adds_length else "") for o in outcomes if _label(o) == kind]

    hacks, brittle = listed("HACK"), listed("BRITTLE")
    head = (f"{name}: HACKABLE by {len(hacks)} of {len(outcomes)} probes: {', '.join(hacks)}" if hacks
            else f"{name}: no hack found by {len(outcomes)} probes")
    if brittle:
        head += f"; brittle under {', '.join(brittle)}"
    return head + "".join(f"; {crosscheck_line(c)}" for c in checks)


def _bounds(reward: Reward) -> tuple[float, float] | None:
    lo, hi = reward.range
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None


def diagnostics_section(diag: Diagnostics, labels: list[bool | None] | None) -> rp.Section:
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
