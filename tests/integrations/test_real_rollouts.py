"""The same spec through TRL, verl, OpenRLHF and `rewardlab.score` on 800 real model responses
(Qwen2.5-Math CoT on MATH, /work/shared/data): every path gives the same numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab import score
from rewardlab.integrations.openrlhf import make_reward_func
from rewardlab.integrations.trl import as_trl_reward
from rewardlab.integrations.verl import make_compute_score

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "qwen25-math-cot-100.jsonl"

# Cheap, text-only components, so the test is about the adapters, not about maths parsing.
SPEC = """
[reward]
name = "rollout_checks"

[[reward.components]]
name = "boxed"
use = "text.regex"
params = { pattern = '\\\\boxed\\{' }

[[reward.components]]
name = "answer"
use = "text.exact"
params = { extract = '\\\\boxed\\{([^{}]*)\\}' }

[[reward.components]]
name = "repetition"
use = "shaping.repetition"
weight = 0.5
params = { ngram_size = 4 }

[[reward.components]]
name = "length"
use = "length.tokens"
weight = 0.1
params = { budget = 300, unit = "words" }
"""


@pytest.fixture(scope="module")
def rows():
    if not DATA.is_file():
        pytest.skip(f"real data not found at {DATA} (see /work/shared/data/SOURCES.md)")
    out = []
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        out += [{"prompt": row["question"], "response": r, "gt": row["gt"]} for r in row["code"]]
    return out


def test_every_adapter_gives_the_same_totals(rows):
    assert len(rows) == 800
    direct = [r.score for r in score(SPEC, [{"prompt": r["prompt"], "response": r["response"], "reference": r["gt"]} for r in rows])]
    trl = as_trl_reward(SPEC)(prompts=[r["prompt"] for r in rows], completions=[r["response"] for r in rows], answer=[r["gt"] for r in rows])
    verl = make_compute_score(SPEC).batch(["math"] * len(rows), [r["response"] for r in rows], [r["gt"] for r in rows])
    openrlhf = make_reward_func(SPEC, error_reward=-100.0)([r["prompt"] + r["response"] for r in rows], [r["prompt"] for r in rows], [r["gt"] for r in rows])
    assert None not in direct
    assert trl == pytest.approx(direct)
    assert [v["score"] for v in verl] == pytest.approx(direct)
    assert openrlhf["rewards"].tolist() == pytest.approx(direct, abs=1e-6)  # float32 tensor
    # The exact-match component finds real answers, and the data has wrong ones too.
    exact = [v["answer"] for v in verl]
    assert 0.3 < sum(exact) / len(exact) < 1.0
