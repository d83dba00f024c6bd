"""The OpenRLHF reward-function module and the `/get_reward` mapping."""

from __future__ import annotations

import math

import pytest
import torch
from integration_spec import GOOD, WRONG

from rewardlab import build
from rewardlab.errors import RewardLabError
from rewardlab.integrations import openrlhf
from rewardlab.integrations.openrlhf import MappingError, get_reward_mapping, make_reward_func

PROMPT = "<|user|>Capital of France?<|assistant|>"


def test_reward_func_returns_tensors_and_component_logs(spec_text):
    f = make_reward_func(spec_text, error_reward=0.0)
    out = f([PROMPT + GOOD, PROMPT + WRONG], [PROMPT, PROMPT], ["Paris", "Paris"])
    assert isinstance(out["rewards"], torch.Tensor)
    assert out["rewards"].tolist() == pytest.approx([1.3, 0.3])
    assert out["scores"].tolist() == pytest.approx([1.3, 0.3])
    assert out["extra_logs"]["rewardlab/exact"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["rewardlab/error"].tolist() == [0.0, 0.0]


def test_response_is_the_query_after_the_prompt(spec_text):
    # The prompt text must not count towards the response (its tags would change `format`).
    reply = get_reward_mapping(build(spec_text), {"query": [PROMPT + GOOD], "prompts": [PROMPT], "labels": ["Paris"]}, error_reward=0.0)
    assert reply["rewards"] == pytest.approx([1.3])


def test_reward_func_without_an_error_reward_is_refused_at_construction(spec_text):
    with pytest.raises(RewardLabError, match="error_reward=<number>"):
        make_reward_func(spec_text, error_reward=None)


def test_errors_become_the_error_reward_and_are_counted(spec_text):
    payload = {"query": [PROMPT + GOOD, PROMPT + GOOD], "prompts": [PROMPT, PROMPT], "labels": ["Paris", None]}
    reply = get_reward_mapping(build(spec_text), payload, error_reward=-1.0)
    assert reply["rewards"] == pytest.approx([1.3, -1.0])
    assert reply["extra_logs"]["rewardlab/error"] == [0.0, 1.0]
    assert reply["statuses"] == ["ok", "error"]


def test_bad_payloads_are_mapping_errors(spec_text):
    with pytest.raises(MappingError, match="'query' list"):
        get_reward_mapping(build(spec_text), {"prompts": []}, error_reward=0.0)
    with pytest.raises(MappingError, match="one per query"):
        get_reward_mapping(build(spec_text), {"query": ["a", "b"], "labels": ["x"]}, error_reward=0.0)


def test_module_level_reward_func_reads_the_spec_from_the_environment(spec_path, monkeypatch):
    monkeypatch.setattr(openrlhf, "_DEFAULT", None)
    monkeypatch.delenv("REWARDLAB_SPEC", raising=False)
    monkeypatch.delenv("REWARDLAB_ERROR_REWARD", raising=False)
    with pytest.raises(RewardLabError, match="REWARDLAB_SPEC and REWARDLAB_ERROR_REWARD"):
        openrlhf.reward_func([GOOD])
    monkeypatch.setenv("REWARDLAB_SPEC", str(spec_path))
    with pytest.raises(RewardLabError, match="set REWARDLAB_ERROR_REWARD"):
        openrlhf.reward_func([GOOD])
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", "0")
    out = openrlhf.reward_func([GOOD, "bad"], None, ["Paris", None])
    assert out["rewards"].tolist() == pytest.approx([1.3, 0.0])
    assert not math.isnan(out["rewards"][1])
    monkeypatch.setattr(openrlhf, "_DEFAULT", None)


def test_module_file_loads_like_openrlhf_loads_it(spec_path, monkeypatch):
    # OpenRLHF imports the --remote_rm_url file with importlib and takes `reward_func`.
    import importlib.util

    monkeypatch.setenv("REWARDLAB_SPEC", str(spec_path))
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", "0")
    spec = importlib.util.spec_from_file_location("reward_func_module", openrlhf.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.reward_func([GOOD], [""], ["Paris"])["rewards"].tolist() == pytest.approx([1.3])


def test_special_tokens_are_stripped_from_query_and_prompt(spec_text):
    chat = "<|im_start|>user\nCapital of France?<|im_end|>\n<|im_start|>assistant\n"
    payload = {"query": [chat + GOOD + "<|im_end|>"], "prompts": [chat], "labels": ["Paris"]}
    stripped = get_reward_mapping(build(spec_text), payload, error_reward=0.0)
    assert stripped["rewards"] == pytest.approx([1.3])  # format passes: nothing after </answer>
    kept = get_reward_mapping(build(spec_text), payload, error_reward=0.0, special_tokens=())
    assert kept["extra_logs"]["rewardlab/format"] == [0.0]


def test_a_tokenizers_own_special_tokens_replace_the_default(spec_text):
    from integration_spec import tiny_tokenizer

    f = make_reward_func(spec_text, error_reward=0.0, tokenizer=tiny_tokenizer())
    assert set(f.special_tokens) == {"<pad>", "<eos>", "<unk>"}
    assert f([PROMPT + GOOD + "<eos>"], [PROMPT], ["Paris"])["rewards"].tolist() == pytest.approx([1.3])


def test_every_row_carries_every_extra_logs_key(spec_text):
    from integration_spec import GATED_SPEC, UNFORMATTED

    reply = get_reward_mapping(build(GATED_SPEC), {"query": [GOOD, UNFORMATTED], "labels": ["Paris", "Paris"]}, error_reward=0.0)
    logs = reply["extra_logs"]
    assert logs["rewardlab/correct"] == [1.0, 0.0] and logs["rewardlab/correct/scored"] == [1.0, 0.0]
    assert all(len(v) == 2 for v in logs.values())


def test_trusted_networks_must_be_cidrs():
    from pydantic import ValidationError

    from rewardlab.serve.settings import ServeSettings

    assert ServeSettings(openrlhf_trusted_networks=("10.0.0.0/8", "::1/128")).openrlhf_trusted_networks
    with pytest.raises(ValidationError, match="is not a network; write it as CIDR"):
        ServeSettings(openrlhf_trusted_networks=("10.0.0/8x",))


# (text, prompt, where the prompt ends in `text`): a tokenizer may normalise the prompt it
# encodes, so the decoded query holds the prompt's normal form; the cut is in `text`'s offsets.
PROMPT_ENDS = [
    ("Q: caf\u00e9? A", "Q: caf\u00e9?", 8),  # as sent
    ("Q: caf\u00e9? A", "Q: cafe\u0301?", 8),  # prompt NFD, query NFC (Qwen2's normaliser)
    ("Q: cafe\u0301? A", "Q: caf\u00e9?", 9),  # prompt NFC, query NFD
    ("\ufb01le: x", "file:", 4),  # NFKC: the ligature is one character of the query
    ("\uac00\ub098 x", "\u1100\u1161\ub098", 2),  # Hangul jamo composed into syllables
    ("Q: caf\u00e9? A", "Q: cafe?", None),  # another letter: not found
    ("late start Q: caf\u00e9? A", "Q: cafe\u0301?", 19),  # found after a template prefix
    ("Q: a\ufffd? A", "Q: a\ud83d?", 6),  # a prompt cut inside a surrogate pair, decoded as U+FFFD
    ("Q: a\ud83d? A \udc00", "Q: a\ud83d?", 6),  # sent as is, with a cut response after it
]


@pytest.mark.parametrize(("text", "prompt", "end"), PROMPT_ENDS)
def test_prompt_end_finds_the_prompt_by_its_unicode_normal_form(text, prompt, end):
    from rewardlab.serve.openrlhf import prompt_end

    assert prompt_end(text, prompt) == end


def test_the_response_keeps_its_own_code_points_after_a_normalised_prompt():
    from rewardlab.serve.openrlhf import openrlhf_rows

    (sample,) = openrlhf_rows(["Q: caf\u00e9?A: cafe\u0301"], ["Q: cafe\u0301?"])
    assert sample.response == "A: cafe\u0301"  # the query's own text, not renormalised


def test_a_prompt_not_in_its_query_is_that_rows_error_never_the_whole_query(spec_text):
    """A prompt cut at the front (OpenRLHF keeps a long prompt's last tokens) is not in its query."""
    payload = {"query": [PROMPT + GOOD, "of France?<|assistant|>" + GOOD], "prompts": [PROMPT, PROMPT], "labels": ["Paris"] * 2}
    reply = get_reward_mapping(build(spec_text), payload, error_reward=-1.0)
    assert reply["rewards"] == pytest.approx([1.3, -1.0])
    assert reply["statuses"] == ["ok", "error"] and reply["extra_logs"]["rewardlab/error"] == [0.0, 1.0]
    from rewardlab.serve.openrlhf import openrlhf_rows, samples_from_openrlhf

    error = openrlhf_rows(payload["query"], payload["prompts"])[1].error
    assert error.kind.value == "invalid_input" and "row 1: the prompt" in error.message and "truncated" in error.message
    with pytest.raises(MappingError, match="row 1: the prompt"):
        samples_from_openrlhf(payload["query"], payload["prompts"])


def test_a_prompt_of_special_tokens_only_that_the_decoder_dropped_leaves_the_whole_query():
    from rewardlab.serve.openrlhf import openrlhf_rows

    (sample,) = openrlhf_rows(["<answer>Paris</answer>"], ["<s>"])
    assert sample.response == "<answer>Paris</answer>"
