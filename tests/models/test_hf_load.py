"""Loading for `model.hf`: hub ids through the local cache only, typed errors for what is not
there, device and dtype checks, token-budget batches."""

from __future__ import annotations

import shutil

import pytest
import torch

from rewardlab.core import Sample, registry
from rewardlab.errors import ConfigError, InputError, ModelNotFoundError
from rewardlab.models.hf_batch import token_budget_batches
from rewardlab.models.hf_load import resolve_device, resolve_dtype
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import save_tiny

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return save_tiny(tmp_path_factory.mktemp("load") / "rm", "llama", seed=20)


def populate_cache(home, repo_id: str, source) -> None:
    """The layout `huggingface_hub` writes: refs/main names a snapshot folder with the files."""
    repo = home / "hub" / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    shutil.copytree(source, repo / "snapshots" / COMMIT)


def test_a_hub_id_resolves_through_the_local_cache(saved, tmp_path, monkeypatch):
    populate_cache(tmp_path, "acme/tiny-rm", saved)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    sample = Sample(prompt="w1 w2", response="w3 w4 w5")
    by_id = registry.create("model.hf", {"model": "acme/tiny-rm"})
    assert by_id.loaded.directory == (tmp_path / "hub" / "models--acme--tiny-rm" / "snapshots" / COMMIT).resolve()
    assert by_id.score(sample).score == pytest.approx(HFReward(model=str(saved)).score(sample).score, abs=1e-6)


def test_a_pinned_revision_that_is_not_cached_is_a_model_not_found_error(saved, tmp_path, monkeypatch):
    populate_cache(tmp_path, "acme/tiny-rm", saved)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(ModelNotFoundError, match="--revision v2"):
        HFReward(model="acme/tiny-rm", revision="v2")


def test_a_missing_hub_id_says_how_to_download_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(ModelNotFoundError) as err:
        registry.create("model.hf", {"model": "acme/not-downloaded"})
    message = str(err.value)
    assert "hf download acme/not-downloaded" in message and str(tmp_path) in message
    assert isinstance(err.value, InputError) and err.value.model == "acme/not-downloaded"


def test_a_directory_without_config_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"no config\.json"):
        HFReward(model=str(tmp_path))


def test_a_path_that_does_not_exist_is_an_input_error_not_a_hub_lookup(tmp_path):
    with pytest.raises(InputError, match="no such model directory"):
        HFReward(model=str(tmp_path / "nope" / "model"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_without_a_gpu_is_a_config_error(saved, device):
    with pytest.raises(ConfigError, match="no CUDA device"):
        HFReward(model=str(saved), device=device)


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda:-1"])
def test_an_unknown_device_name_is_a_config_error(device):
    if torch.cuda.is_available() and device != "gpu":
        pytest.skip("the index check needs no GPU")
    with pytest.raises(ConfigError, match="device"):
        resolve_device(device)


def test_auto_device_and_dtype_follow_the_machine():
    device = resolve_device("auto")
    assert device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32


def test_fp16_on_cpu_is_a_config_error():
    with pytest.raises(ConfigError, match="fp16"):
        resolve_dtype("fp16", torch.device("cpu"))


def test_bf16_on_cpu_scores_close_to_fp32(saved):
    sample = Sample(prompt="w1 w2 w9", response="w3 w4 w5 w6")
    full = HFReward(model=str(saved)).score(sample).score
    half = HFReward(model=str(saved), dtype="bf16")
    assert half.loaded.dtype == torch.bfloat16 and half.loaded is not HFReward(model=str(saved)).loaded
    assert half.score(sample).score == pytest.approx(full, abs=0.1)


def test_token_budget_batches_cover_every_index_once_within_the_budget():
    lengths = [5, 300, 17, 17, 90, 1, 64, 64, 64, 2000, 33]
    batches = token_budget_batches(lengths, max_tokens=256, max_batch=4)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        assert len(batch) <= 4 and (padded <= 256 or len(batch) == 1)
    widths = [max(lengths[i] for i in b) for b in batches]
    assert widths == sorted(widths, reverse=True)  # length-sorted buckets


def test_token_budget_must_be_positive():
    with pytest.raises(ConfigError):
        token_budget_batches([1, 2], max_tokens=0, max_batch=4)
