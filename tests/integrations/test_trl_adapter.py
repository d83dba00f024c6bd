"""The TRL adapter called with TRL's reward-function arguments (the trainer run is in
test_trl_grpo.py)."""

from __future__ import annotations

import math
import pickle
from collections import defaultdict

import pytest
from integration_spec import GOOD, WRONG

from rewardlab.errors import RewardLabError
from rewardlab.integrations.trl import as_trl_reward, samples_from_trl


class Hooks:
    """Collects what the adapter sends to TRL's `log_metric` / `log_extra` hooks."""

    def __init__(self):
        self.metrics = defaultdict(list)
        self.extra = defaultdict(list)

    def log_metric(self, name, value):
        self.metrics[name].append(value)

    def log_extra(self, column, values):
        self.extra[column].extend(values)


def test_scores_match_the_spec_weights(spec_text):
    f = as_trl_reward(spec_text)
    out = f(prompts=["q", "q"], completions=[GOOD, WRONG], solution=["Paris", "Paris"])
    assert out == pytest.approx([0.2 + 1.0 + 0.1, 0.2 + 0.0 + 0.1])
    assert f.__name__ == "qa"


def test_conversational_completions(spec_text):
    f = as_trl_reward(spec_text)
    completions = [[{"role": "assistant", "content": GOOD}]]
    prompts = [[{"role": "user", "content": "Capital of France?"}]]
    assert f(prompts=prompts, completions=completions, answer=["Paris"]) == pytest.approx([1.3])


def test_components_are_logged_through_trl_hooks(spec_text):
    hooks = Hooks()
    f = as_trl_reward(spec_text)
    f(
        prompts=["q"] * 3,
        completions=[GOOD, WRONG, 42],
        solution=["Paris"] * 3,
        log_metric=hooks.log_metric,
        log_extra=hooks.log_extra,
        trainer_state=object(),
    )
    assert hooks.metrics["rewardlab/exact/mean"] == [pytest.approx(0.5)]
    assert hooks.metrics["rewardlab/error_rate"] == [pytest.approx(1 / 3)]
    assert hooks.extra["rewardlab/exact"] == [1.0, 0.0, None]
    assert hooks.extra["rewardlab/status"] == ["ok", "ok", "error"]


def test_bad_rows_become_none_and_the_rest_are_scored(spec_text):
    f = as_trl_reward(spec_text)
    out = f(prompts=["q"] * 3, completions=[GOOD, None, {"x": 1}], solution=["Paris"] * 3)
    assert out[0] == pytest.approx(1.3)
    assert out[1:] == [None, None]
    assert f.last_results[1].error.kind == "component"
    assert "response must be a string" in f.last_results[1].error.message


def test_missing_reference_column_is_an_error_per_row_not_a_zero(spec_text):
    hooks = Hooks()
    out = as_trl_reward(spec_text)(prompts=["q"], completions=[GOOD], log_metric=hooks.log_metric)
    assert out == [None]
    assert hooks.metrics["rewardlab/error_rate"] == [1.0]


def test_on_error_number_and_raise(spec_text):
    assert as_trl_reward(spec_text, on_error=-1.0)(prompts=["q"], completions=[None], solution=["x"]) == [-1.0]
    with pytest.raises(RewardLabError, match="could not score"):
        as_trl_reward(spec_text, on_error="raise")(prompts=["q"], completions=[None], solution=["x"])
    with pytest.raises(RewardLabError, match="on_error"):
        as_trl_reward(spec_text, on_error="zero")


def test_named_reference_column_must_exist(spec_text):
    f = as_trl_reward(spec_text, reference_column="gold")
    with pytest.raises(RewardLabError, match="'gold' is not in the dataset columns"):
        f(prompts=["q"], completions=[GOOD], solution=["Paris"])


def test_columns_go_to_meta_and_token_counts_are_passed():
    samples = samples_from_trl(["p"], ["r"], [[5, 6, 7]], columns={"answer": ["a"], "level": [3]}, token_ids=True)
    assert samples[0].reference == "a"
    assert samples[0].meta == {"level": 3, "num_tokens": 3, "completion_ids": [5, 6, 7]}


def test_length_mismatch_is_a_typed_error():
    with pytest.raises(RewardLabError, match="has 1 values for 2 completions"):
        samples_from_trl(["p", "p"], ["a", "b"], columns={"answer": ["x"]})


def test_adapter_pickles(spec_text):
    f = pickle.loads(pickle.dumps(as_trl_reward(spec_text)))
    assert f(prompts=["q"], completions=[GOOD], solution=["Paris"]) == pytest.approx([1.3])


def test_worker_pool_mode_gives_the_same_scores(spec_text):
    f = as_trl_reward(spec_text, workers=1, timeout=30)
    try:
        out = f(prompts=["q", "q"], completions=[GOOD, WRONG], solution=["Paris", "Paris"])
    finally:
        f.close()
    assert out == pytest.approx([1.3, 0.3])
    assert not any(math.isnan(x) for x in out)


def test_token_repetition_through_the_adapter_equals_trl():
    from trl.rewards import get_repetition_penalty_reward

    spec = '[reward]\nname = "rep"\n[[reward.components]]\nname = "rep"\nuse = "shaping.repetition"\nparams = { ngram_size = 2, unit = "tokens" }\n'
    ids = [[1, 2, 3, 4], [5, 5, 5, 5, 5], [1, 2, 1, 2, 1, 2]]
    ours = as_trl_reward(spec, token_ids=True)(prompts=["p"] * 3, completions=["x"] * 3, completion_ids=ids)
    assert ours == pytest.approx(get_repetition_penalty_reward(ngram_size=2)(ids))
    # without token_ids the term cannot see the tokens: an error per row, not a 0
    assert as_trl_reward(spec)(prompts=["p"], completions=["x"], completion_ids=[[1, 1, 1]]) == [None]


def test_spec_hash_is_exposed(spec_text):
    from rewardlab import build

    assert as_trl_reward(spec_text).spec_hash == build(spec_text).spec_hash


def test_async_variant_is_awaited_by_trl_and_gives_the_same_scores(spec_text):
    import asyncio

    from trl.trainer.utils import is_async_callable

    sync_f, async_f = as_trl_reward(spec_text), as_trl_reward(spec_text, asynchronous=True)
    assert is_async_callable(async_f) and not is_async_callable(sync_f)
    kwargs = {"prompts": ["q"] * 3, "completions": [GOOD, WRONG, None], "solution": ["Paris"] * 3}
    assert asyncio.run(async_f(**kwargs)) == sync_f(**kwargs)


QUICKSTART = "examples/quickstart.toml"  # `correct` is gated by format and has on_error = "skip"
IN_FORMAT = "<think>6*7 = 42</think>\n<answer>42</answer>"
IN_FORMAT_WRONG = "<think>6*7 = 48</think>\n<answer>48</answer>"


@pytest.fixture
def quickstart(monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    return QUICKSTART


def test_in_format_answer_without_reference_warns_once(quickstart):
    from rewardlab.integrations.trl import MissingReferenceWarning

    f = as_trl_reward(quickstart)
    logged = {}
    with pytest.warns(MissingReferenceWarning, match=r"1 of 2 completions have no reference, so 'correct'"):
        scores = f(prompts=["q"] * 2, completions=[IN_FORMAT, IN_FORMAT_WRONG], answer=[None, "42"], log_metric=logged.__setitem__)
    assert scores == pytest.approx([0.15, 0.15])  # the default keeps the spec's total...
    assert logged["rewardlab/missing_reference_rate"] == 0.5  # ...and counts it
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingReferenceWarning)  # the second batch does not warn again
        f(prompts=["q"], completions=[IN_FORMAT], answer=[None])


def test_on_missing_reference_skip_returns_none_for_them(quickstart):
    from rewardlab.integrations.trl import MissingReferenceWarning

    f = as_trl_reward(quickstart, on_missing_reference="skip")
    with pytest.warns(MissingReferenceWarning, match="on_missing_reference='skip'"):
        scores = f(prompts=["q"] * 3, completions=[IN_FORMAT, IN_FORMAT_WRONG, "no tags"], answer=[None, "42", None])
    # the unformatted row is gated, not unreferenced: its 0.05 is a real (format) score
    assert scores[0] is None and scores[1:] == pytest.approx([0.15, 0.05])


def test_missing_reference_option_is_checked(quickstart):
    with pytest.raises(RewardLabError, match="on_missing_reference"):
        as_trl_reward(quickstart, on_missing_reference="none")


VOTE_SPEC = {"reward": {"name": "ttrl", "components": [
    {"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3, "answer_key": "ans"}},
]}}  # fmt: skip


def _vote_call(f, prompts, answers):
    return f(prompts=prompts, completions=[f"\\boxed{{{a}}}" for a in answers], ans=list(answers))


def test_group_reward_gets_trl_groups_from_runs_of_the_same_prompt():
    f = as_trl_reward(VOTE_SPEC)
    scores = _vote_call(f, ["p"] * 4 + ["q"] * 4, ["1", "1", "1", "2", "5", "6", "6", "6"])
    assert scores == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert {r.components["vote"].info["group_size"] for r in f.last_results} == {4}


def test_group_reward_with_num_generations_groups_blocks_of_g():
    f = as_trl_reward(VOTE_SPEC, num_generations=4)
    # the same prompt twice in a row is still two TRL groups
    assert _vote_call(f, ["p"] * 8, ["1", "1", "1", "2", "2", "2", "2", "1"]) == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]


def test_group_split_across_processes_is_a_group_split_error_not_a_partial_vote():
    from rewardlab.errors import GroupSplitError

    f = as_trl_reward(VOTE_SPEC, num_generations=4)
    with pytest.raises(GroupSplitError, match="not a multiple of num_generations=4"):
        _vote_call(f, ["p"] * 6, ["1"] * 6)
    with pytest.raises(GroupSplitError, match="different prompts"):
        _vote_call(f, ["p", "p", "q", "q"], ["1"] * 4)


def test_group_reward_in_the_worker_pool_scores_whole_groups():
    f = as_trl_reward(VOTE_SPEC, workers=2)
    try:
        scores = _vote_call(f, ["p"] * 4 + ["q"] * 4, ["1", "1", "1", "2", "5", "6", "6", "6"])
    finally:
        f.close()
    assert scores == [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_a_label_too_deep_for_the_worker_pool_is_that_rows_none_and_the_next_call_is_scored(spec_text):
    """A reference nested too deep to pickle, in the pool mode (`workers=2`): that completion
    gets None with an `invalid_input` result, the others their scores, and the next call is
    scored (it hung forever when the refused chunk kept a worker busy)."""
    from deadlines import nested, within_deadline
    from rewardlab.core import ErrorKind

    f = as_trl_reward(spec_text, workers=2, timeout=30)
    hooks = Hooks()
    try:
        out = within_deadline(
            f, prompts=["q"] * 3, completions=[GOOD, GOOD, WRONG], solution=["Paris", nested(500, "Paris"), "Paris"],
            log_metric=hooks.log_metric, log_extra=hooks.log_extra,
        )  # fmt: skip
        assert out[0] == pytest.approx(1.3) and out[1] is None and out[2] == pytest.approx(0.3)
        assert f.last_results[1].error.kind is ErrorKind.INVALID_INPUT
        assert hooks.extra["rewardlab/status"] == ["ok", "error", "ok"]
        again = within_deadline(f, prompts=["q"] * 4, completions=[GOOD, WRONG] * 2, solution=["Paris"] * 4)
        assert again == pytest.approx([1.3, 0.3] * 2)
    finally:
        f.close()
