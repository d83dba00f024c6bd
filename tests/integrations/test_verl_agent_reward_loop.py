"""An agent spec through verl 0.9.1's own reward loop: the multi-turn rollout decoded to one string
(Hermes <tool_call>/<tool_response> text, as verl's agent loop writes it with a Qwen template),
scored by rewardlab's `compute_score` inside verl's `RewardLoopWorker`, equals the library's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integration_spec import tiny_tokenizer
from test_verl_reward_loop import PROMPT, documented_overrides, verl_config

from rewardlab import Sample, build

verl = pytest.importorskip("verl", reason="verl is not installed (make installs verl==0.9.1 --no-deps)")
pytest.importorskip("hydra", reason="hydra-core is not installed (dev extra)")
pytestmark = pytest.mark.slow

SPEC = """
[reward]
name = "agent"

[[reward.components]]
name = "calls"
use = "agent.tool_calls"
weight = 0.8
params = { score = "arguments" }

[[reward.components]]
name = "terms"
use = "agent.terms"
weight = 0.2
"""
GOLD = {"calls": [{"name": "cancel", "arguments": {"id": "A"}}]}


def _turn(name: str, args: dict[str, str], result: str) -> str:
    call = json.dumps({"name": name, "arguments": args})
    return f"<tool_call>\n{call}\n</tool_call>\nuser\n<tool_response>\n{result}\n</tool_response>\nassistant\n"


RESPONSES = [
    _turn("cancel", {"id": "A"}, "cancelled") + "Order A is cancelled.",
    _turn("cancel", {"id": "B"}, "Error: no such order") + _turn("cancel", {"id": "A"}, "cancelled") + "Done.",
    "I cannot help with that.",
]


def _batch(tokenizer, responses: list[str]):
    """A `DataProto` shaped as verl's rollout hands it to the reward loop (see test_verl_reward_loop)."""
    import numpy as np
    import torch

    n = len(responses)
    p = tokenizer([PROMPT] * n, padding="max_length", max_length=24, return_tensors="pt", padding_side="left")
    r = tokenizer([x + tokenizer.eos_token for x in responses], padding="max_length", max_length=512, return_tensors="pt", padding_side="right")
    assert r["attention_mask"].sum(1).max() < 512
    return verl.DataProto.from_dict(
        tensors={"prompts": p["input_ids"], "responses": r["input_ids"],
                 "attention_mask": torch.cat([p["attention_mask"], r["attention_mask"]], dim=1)},
        non_tensors={"data_source": np.array(["agent"] * n, dtype=object),
                     "reward_model": np.array([{"ground_truth": GOLD}] * n, dtype=object),
                     "extra_info": np.array([{"index": i} for i in range(n)], dtype=object),
                     "uid": np.array([f"u{i}" for i in range(n)], dtype=object)},
    )  # fmt: skip


def test_agent_spec_through_verls_reward_loop(tmp_path: Path) -> None:
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    (tmp_path / "reward.toml").write_text(SPEC)
    tiny_tokenizer().save_pretrained(tmp_path / "tokenizer")
    overrides = [*documented_overrides(tmp_path, "name=compute_score"), f"actor_rollout_ref.model.path={tmp_path / 'tokenizer'}"]
    worker = RewardLoopWorker(verl_config(overrides))
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(_batch(worker.input_tokenizer, RESPONSES)))
    reward = build(SPEC)
    expected = [reward.score(Sample(response=r, reference=GOLD)).score for r in RESPONSES]
    # 1: right call -> 0.8 + 0.2; 2: the right call and an extra one (credit 1 over 2 calls), one
    # tool error -> 0.8 * 0.5 + 0.2 * 0.9; 3: no call -> 0 + 0.2
    assert expected == pytest.approx([1.0, 0.8 * 0.5 + 0.2 * 0.9, 0.2])
    assert [o["reward_score"] for o in outputs] == pytest.approx(expected)
