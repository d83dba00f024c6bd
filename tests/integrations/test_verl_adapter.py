"""The verl adapter: `compute_score` shape, error policy, and a run of verl's own
`NaiveRewardManager` over a `DataProto` (skipped when verl is not installed)."""

from __future__ import annotations

import math

import pytest
from integration_spec import GOOD, WRONG, tiny_tokenizer

from rewardlab.errors import RewardLabError
from rewardlab.integrations.verl import compute_score, compute_score_batch, make_compute_score


def test_compute_score_returns_score_and_components(spec_text):
    f = make_compute_score(spec_text)
    out = f("qa_set", GOOD, "Paris", {"index": 3})
    assert out == {
        "score": pytest.approx(1.3), "format": 1.0, "exact": 1.0, "length": 1.0,
        "format/scored": 1.0, "exact/scored": 1.0, "length/scored": 1.0, "rewardlab_error": 0.0, "rewardlab_skipped": 0.0,
    }  # fmt: skip
    assert f("qa_set", WRONG, "Paris")["score"] == pytest.approx(0.3)


def test_error_without_policy_raises_naming_the_fix(spec_text):
    with pytest.raises(RewardLabError, match="error_score"):
        make_compute_score(spec_text)("qa_set", None, "Paris")


def test_error_with_policy_is_counted_and_unscored_components_are_masked(spec_text):
    out = make_compute_score(spec_text, error_score=-1.0)("qa_set", None, "Paris")
    assert out["score"] == -1.0 and out["rewardlab_error"] == 1.0
    # finite (verl averages the column), and the mask says it is not a real 0
    assert out["exact"] == 0.0 and out["exact/scored"] == 0.0
    assert all(math.isfinite(v) for v in out.values())


def test_every_row_has_the_same_keys(spec_text):
    f = make_compute_score(spec_text, error_score=0.0)
    rows = f.batch(["a", "a", "a"], [GOOD, WRONG, None], ["Paris"] * 3, [None, {"k": 1}, None])
    assert len({tuple(r) for r in rows}) == 1
    assert [r["rewardlab_error"] for r in rows] == [0.0, 0.0, 1.0]


def test_module_level_functions_take_the_spec_from_reward_kwargs(spec_path):
    assert compute_score("a", GOOD, "Paris", spec=str(spec_path))["score"] == pytest.approx(1.3)
    batch = compute_score_batch(["a"], [WRONG], ["Paris"], spec=str(spec_path))
    assert batch[0]["score"] == pytest.approx(0.3)
    with pytest.raises(RewardLabError, match=r"reward_kwargs\.spec"):
        compute_score("a", GOOD, "Paris")


def test_batch_length_mismatch(spec_text):
    with pytest.raises(RewardLabError, match="differ in length"):
        make_compute_score(spec_text).batch(["a"], [GOOD, GOOD], ["x", "x"])


@pytest.mark.slow
def test_verl_naive_reward_manager_uses_the_adapter(spec_text):
    verl = pytest.importorskip("verl", reason="verl is not installed (pip install --no-deps verl tensordict omegaconf)")
    import numpy as np
    import torch
    from verl.workers.reward_manager.naive import NaiveRewardManager

    tokenizer = tiny_tokenizer()
    prompts = ["What is the capital of France?"] * 3
    responses = [GOOD, WRONG, "<answer>Paris</answer>"]
    p = tokenizer(prompts, padding="max_length", max_length=24, return_tensors="pt", padding_side="left")
    r = tokenizer(responses, padding="max_length", max_length=40, return_tensors="pt", padding_side="right")
    assert p["attention_mask"].sum(1).max() < 24 and r["attention_mask"].sum(1).max() < 40
    data = verl.DataProto.from_dict(
        tensors={
            "prompts": p["input_ids"],
            "responses": r["input_ids"],
            "attention_mask": torch.cat([p["attention_mask"], r["attention_mask"]], dim=1),
        },
        non_tensors={
            "data_source": np.array(["qa"] * 3, dtype=object),
            "reward_model": np.array([{"ground_truth": "Paris"}] * 3, dtype=object),
            "extra_info": np.array([{"i": i} for i in range(3)], dtype=object),
        },
    )
    manager = NaiveRewardManager(tokenizer, num_examine=0, compute_score=make_compute_score(spec_text, error_score=0.0))
    out = manager(data, return_dict=True)
    totals = out["reward_tensor"].sum(dim=1).tolist()
    # format needs <think>: the third response gets exact + length only.
    assert totals == pytest.approx([1.3, 0.3, 1.1])
    info = out["reward_extra_info"]
    assert info["exact"] == [1.0, 0.0, 1.0] and info["format"] == [1.0, 1.0, 0.0]
    assert info["rewardlab_error"] == [0.0, 0.0, 0.0]
