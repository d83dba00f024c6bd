"""Evaluate and audit rewards: benchmark metrics, hacking probes, cross-checks, diagnostics, reports.

Metric modules are small pure functions over numbers (`pairwise`, `calibration`, `stats`,
`overoptimization`, `passk`, `prm_metrics`); `audit` runs rewards on transformed samples and
datasets; `report` renders the results. See docs/evaluate.md for every definition.
"""

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
from rewardlab.evaluate.overoptimization import bon_curve, bon_kl, fit_bon, fit_rl
from rewardlab.evaluate.pairwise import (
    best_of_k_accuracy,
    judge_consistency,
    length_baseline,
    pairwise_accuracy,
    rmbench_grid,
    subset_accuracies,
)
from rewardlab.evaluate.passk import best_of_n_accuracy, pass_at_k, pass_at_k_many, vote_accuracy
from rewardlab.evaluate.prm_metrics import (
    first_error_step,
    processbench_average,
    processbench_f1,
    step_f1,
)
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
    spearman,
)

__all__ = [
    "DEFAULT_PROBES",
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
    "first_error_step",
    "fit_bon",
    "fit_rl",
    "judge_consistency",
    "kendall",
    "length_baseline",
    "mce",
    "pairwise_accuracy",
    "pass_at_k",
    "pass_at_k_many",
    "prmbench_scores",
    "processbench_average",
    "processbench_f1",
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
]
