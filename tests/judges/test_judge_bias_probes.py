"""Length bias of a judge, measured by the audit probes of `rewardlab.evaluate` (real probes, real server)."""

from __future__ import annotations

import pytest

from rewardlab import Sample
from rewardlab.evaluate.audit.probes import probe_by_name
from rewardlab.evaluate.audit.probing import run_probes
from rewardlab.judges import LLMJudge

pytestmark = pytest.mark.network


def _padding_outcome(server, word):
    judge = LLMJudge(base_url=server.base_url, model="m", backoff=0.01)
    samples = [Sample(prompt="q", response=f"{word} answer {i}", reference=str(i)) for i in range(4)]
    _, outcomes = run_probes(judge, samples, probe_by_name(["length_padding"]))
    return next(o for o in outcomes if o.probe == "length_padding")


def test_length_padding_probe_flags_a_judge_with_a_length_bias(server):
    outcome = _padding_outcome(server, "LENGTHY")
    assert outcome.compared == 4 and outcome.flagged == 4 and outcome.mean_delta > 0


def test_length_padding_probe_passes_a_judge_without_one(server):
    outcome = _padding_outcome(server, "GOOD")
    assert outcome.compared == 4 and outcome.flagged == 0
