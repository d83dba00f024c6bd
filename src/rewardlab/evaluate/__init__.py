"""Evaluate and audit rewards: benchmark metrics, hacking probes, cross-checks, diagnostics, reports.

Metric modules are small pure functions over numbers (`pairwise`, `calibration`, `stats`,
`overoptimization`, `passk`, `prm_metrics`); `audit` runs rewards on transformed samples and
datasets; `report` renders the results. See docs/evaluate.md for every definition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.evaluate.audit import (
        DEFAULT_PROBES,
        Probe,
        Report,
        audit_reward,
        crosscheck_results,
        crosscheck_rewards,
        rollout_diagnostics,
        run_probes,
    )
    from rewardlab.evaluate.calibration import brier_score, ece, mce, reliability, sigmoid
    from rewardlab.evaluate.front import (
        FrontVectors,
        front_report,
        read_scored_vectors,
        write_front,
    )
    from rewardlab.evaluate.overoptimization import bon_curve, bon_kl, fit_bon, fit_rl
    from rewardlab.evaluate.pairwise import (
        best_of_k_accuracy,
        judge_consistency,
        length_baseline,
        pairwise_accuracy,
        rmbench_grid,
        subset_accuracies,
    )
    from rewardlab.evaluate.passk import best_of_n_accuracy, pass_at_k, vote_accuracy
    from rewardlab.evaluate.prm_metrics import processbench_average, processbench_f1, step_f1
    from rewardlab.evaluate.prmbench import PRMBenchSolution, prmbench_scores
    from rewardlab.evaluate.rewardbench import (
        TiesItem,
        rewardbench_overall,
        rewardbench_sections,
        ties_score,
    )
    from rewardlab.evaluate.run_eval import run_eval
    from rewardlab.evaluate.stats import (
        Interval,
        bootstrap_ci,
        cluster_bootstrap_ci,
        compare_paired,
        kendall,
        mean_intervals,
        spearman,
    )

__all__ = [
    "DEFAULT_PROBES",
    "FrontVectors",
    "Interval",
    "PRMBenchSolution",
    "Probe",
    "Report",
    "TiesItem",
    "audit_reward",
    "best_of_k_accuracy",
    "best_of_n_accuracy",
    "bon_curve",
    "bon_kl",
    "bootstrap_ci",
    "brier_score",
    "cluster_bootstrap_ci",
    "compare_paired",
    "crosscheck_results",
    "crosscheck_rewards",
    "ece",
    "fit_bon",
    "fit_rl",
    "front_report",
    "judge_consistency",
    "kendall",
    "length_baseline",
    "mce",
    "mean_intervals",
    "pairwise_accuracy",
    "pass_at_k",
    "prmbench_scores",
    "processbench_average",
    "processbench_f1",
    "read_scored_vectors",
    "reliability",
    "rewardbench_overall",
    "rewardbench_sections",
    "rmbench_grid",
    "rollout_diagnostics",
    "run_eval",
    "run_probes",
    "sigmoid",
    "spearman",
    "step_f1",
    "subset_accuracies",
    "ties_score",
    "vote_accuracy",
    "write_front",
]

# name -> module; imported on first use (PEP 562), so importing one light module of the
# package (a column or option class the CLI reads at start-up) does not import every metric
_WHERE = {
    "DEFAULT_PROBES": "rewardlab.evaluate.audit",
    "Probe": "rewardlab.evaluate.audit",
    "Report": "rewardlab.evaluate.audit",
    "audit_reward": "rewardlab.evaluate.audit",
    "crosscheck_results": "rewardlab.evaluate.audit",
    "crosscheck_rewards": "rewardlab.evaluate.audit",
    "rollout_diagnostics": "rewardlab.evaluate.audit",
    "run_probes": "rewardlab.evaluate.audit",
    "brier_score": "rewardlab.evaluate.calibration",
    "ece": "rewardlab.evaluate.calibration",
    "mce": "rewardlab.evaluate.calibration",
    "reliability": "rewardlab.evaluate.calibration",
    "sigmoid": "rewardlab.evaluate.calibration",
    "FrontVectors": "rewardlab.evaluate.front",
    "front_report": "rewardlab.evaluate.front",
    "read_scored_vectors": "rewardlab.evaluate.front",
    "write_front": "rewardlab.evaluate.front",
    "bon_curve": "rewardlab.evaluate.overoptimization",
    "bon_kl": "rewardlab.evaluate.overoptimization",
    "fit_bon": "rewardlab.evaluate.overoptimization",
    "fit_rl": "rewardlab.evaluate.overoptimization",
    "best_of_k_accuracy": "rewardlab.evaluate.pairwise",
    "judge_consistency": "rewardlab.evaluate.pairwise",
    "length_baseline": "rewardlab.evaluate.pairwise",
    "pairwise_accuracy": "rewardlab.evaluate.pairwise",
    "rmbench_grid": "rewardlab.evaluate.pairwise",
    "subset_accuracies": "rewardlab.evaluate.pairwise",
    "best_of_n_accuracy": "rewardlab.evaluate.passk",
    "pass_at_k": "rewardlab.evaluate.passk",
    "vote_accuracy": "rewardlab.evaluate.passk",
    "processbench_average": "rewardlab.evaluate.prm_metrics",
    "processbench_f1": "rewardlab.evaluate.prm_metrics",
    "step_f1": "rewardlab.evaluate.prm_metrics",
    "PRMBenchSolution": "rewardlab.evaluate.prmbench",
    "prmbench_scores": "rewardlab.evaluate.prmbench",
    "TiesItem": "rewardlab.evaluate.rewardbench",
    "rewardbench_overall": "rewardlab.evaluate.rewardbench",
    "rewardbench_sections": "rewardlab.evaluate.rewardbench",
    "ties_score": "rewardlab.evaluate.rewardbench",
    "run_eval": "rewardlab.evaluate.run_eval",
    "Interval": "rewardlab.evaluate.stats",
    "bootstrap_ci": "rewardlab.evaluate.stats",
    "cluster_bootstrap_ci": "rewardlab.evaluate.stats",
    "compare_paired": "rewardlab.evaluate.stats",
    "kendall": "rewardlab.evaluate.stats",
    "mean_intervals": "rewardlab.evaluate.stats",
    "spearman": "rewardlab.evaluate.stats",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
