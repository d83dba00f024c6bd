"""Audits of a reward: hacking probes, cross-checks with another reward or labels, rollout
diagnostics, and the HTML/JSON report they are written to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.evaluate.audit.crosscheck import (
        CrossCheck,
        crosscheck_results,
        crosscheck_rewards,
        labels_as_results,
    )
    from rewardlab.evaluate.audit.diagnostics import Diagnostics, rollout_diagnostics
    from rewardlab.evaluate.audit.options import ProbeOptions
    from rewardlab.evaluate.audit.probes import DEFAULT_PROBES, Probe
    from rewardlab.evaluate.audit.probing import ProbeOutcome, run_probes
    from rewardlab.evaluate.audit.report import Report, Section
    from rewardlab.evaluate.audit.run_audit import audit_reward

__all__ = [
    "DEFAULT_PROBES",
    "CrossCheck",
    "Diagnostics",
    "Probe",
    "ProbeOptions",
    "ProbeOutcome",
    "Report",
    "Section",
    "audit_reward",
    "crosscheck_results",
    "crosscheck_rewards",
    "labels_as_results",
    "rollout_diagnostics",
    "run_probes",
]

# name -> module; imported on first use (PEP 562), so importing one light module of the
# package (a column or option class the CLI reads at start-up) does not import every metric
_WHERE = {
    "CrossCheck": "rewardlab.evaluate.audit.crosscheck",
    "crosscheck_results": "rewardlab.evaluate.audit.crosscheck",
    "crosscheck_rewards": "rewardlab.evaluate.audit.crosscheck",
    "labels_as_results": "rewardlab.evaluate.audit.crosscheck",
    "Diagnostics": "rewardlab.evaluate.audit.diagnostics",
    "rollout_diagnostics": "rewardlab.evaluate.audit.diagnostics",
    "DEFAULT_PROBES": "rewardlab.evaluate.audit.probes",
    "Probe": "rewardlab.evaluate.audit.probes",
    "ProbeOptions": "rewardlab.evaluate.audit.options",
    "ProbeOutcome": "rewardlab.evaluate.audit.probing",
    "run_probes": "rewardlab.evaluate.audit.probing",
    "Report": "rewardlab.evaluate.audit.report",
    "Section": "rewardlab.evaluate.audit.report",
    "audit_reward": "rewardlab.evaluate.audit.run_audit",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
