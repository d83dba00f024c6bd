"""Audits of a reward: hacking probes, cross-checks with another reward or labels, rollout
diagnostics, and the HTML/JSON report they are written to."""

from rewardlab.evaluate.audit.crosscheck import (
    CrossCheck,
    crosscheck_results,
    crosscheck_rewards,
    labels_as_results,
)
from rewardlab.evaluate.audit.diagnostics import Diagnostics, rollout_diagnostics
from rewardlab.evaluate.audit.probes import DEFAULT_PROBES, Probe
from rewardlab.evaluate.audit.probing import ProbeOptions, ProbeOutcome, run_probes
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
