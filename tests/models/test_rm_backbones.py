"""Scores do not depend on batch composition, batch size or padding side; the default loads offline."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from rewardlab.models import RewardModel, tiny_bert
from rewardlab.models.backbones import HFBackbone
from rewardlab.models.config import EncodeConfig
from rewardlab.models.heads import ScalarHead

TEXTS = [
    "short",
    "a somewhat longer response that says the answer is 42",
    "x " * 40 + "the end",
    "Great question! ## Answer **3+4=7**",
]


def _model(backbone) -> RewardModel:
    torch.manual_seed(0)
    head = ScalarHead(backbone.dim)
    torch.nn.init.normal_(head.net.weight)
    return RewardModel(backbone, head)


def _assert_invariant(model: RewardModel) -> None:
    together = model.score_texts(TEXTS, batch_size=len(TEXTS))
    alone = np.array([model.score_texts([t])[0] for t in TEXTS])
    mixed = model.score_texts([TEXTS[2], "filler " * 7, TEXTS[0], TEXTS[3], TEXTS[1]], batch_size=2)
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mixed[[2, 4, 0, 3]], together, rtol=1e-5, atol=1e-5)
    model.backbone.tokenizer.padding_side = "left"
    try:
        np.testing.assert_allclose(model.score_texts(TEXTS, batch_size=len(TEXTS)), together, rtol=1e-5, atol=1e-5)
    finally:
        model.backbone.tokenizer.padding_side = "right"


def test_tiny_bert_scores_ignore_batch_and_padding_side():
    _assert_invariant(_model(tiny_bert(encode=EncodeConfig(max_length=32))))


@pytest.mark.parametrize("backbone", ["tiny-bert", "hashing"])
def test_a_lone_surrogate_is_embedded_as_the_replacement_character(backbone):
    # The tokenizers (and sklearn's hashing, which encodes UTF-8) refuse a lone surrogate.
    from rewardlab.models.backbones import EmbeddingCache, load_backbone

    model = _model(load_backbone(backbone, encode=EncodeConfig(max_length=32)))
    cut, shown = ["w \ud83d cut", "a \udc00"], ["w \ufffd cut", "a \ufffd"]
    np.testing.assert_allclose(model.score_texts(cut), model.score_texts(shown), rtol=1e-6)
    cache = EmbeddingCache(model.backbone)
    assert cache(["\ud800", "\ud801", "\ufffd"]).shape[0] == 3 and len(cache) == 3  # distinct texts, distinct keys


@pytest.mark.parametrize("pooling", ["cls", "last"])
def test_other_poolings_ignore_padding_side(pooling):
    _assert_invariant(_model(tiny_bert(encode=EncodeConfig(max_length=32, pooling=pooling))))


@pytest.mark.slow
def test_minilm_scores_ignore_batch_and_padding_side():
    _assert_invariant(_model(HFBackbone.pretrained()))


@pytest.mark.slow
def test_default_backbone_loads_with_hub_offline():
    code = ("from rewardlab.models.backbones import HFBackbone; b = HFBackbone.pretrained(); "
            "print(b.dim, tuple(b.embed(['hello']).shape))")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": "/nonexistent-hf-home"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "384 (1, 384)"


def test_truncation_side_decides_which_end_is_kept():
    text = "alpha " * 50 + "omega"
    left = tiny_bert(encode=EncodeConfig(max_length=8, truncation_side="left"))
    right = tiny_bert(encode=EncodeConfig(max_length=8, truncation_side="right"))
    omega = left.tokenizer.convert_tokens_to_ids("omega")
    assert omega in left.tokenize([text])["input_ids"][0].tolist()
    assert omega not in right.tokenize([text])["input_ids"][0].tolist()
    assert left.n_truncated == 1 and right.n_truncated == 1


def test_bad_encode_options_are_rejected():
    with pytest.raises(ValueError, match="truncation_side"):
        EncodeConfig(truncation_side="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_length"):
        EncodeConfig(max_length=2)


def test_missing_model_directory_is_an_input_error(tmp_path):
    from rewardlab.errors import InputError

    with pytest.raises(InputError, match="cannot load backbone"):
        HFBackbone.pretrained(str(tmp_path / "nope"))


def test_bf16_autocast_scores_are_close_to_fp32_and_batch_independent():
    fp32 = _model(tiny_bert(encode=EncodeConfig(max_length=32)))
    bf16 = _model(tiny_bert(encode=EncodeConfig(max_length=32, precision="bf16")))
    reference = fp32.score_texts(TEXTS)
    fast = bf16.score_texts(TEXTS, batch_size=len(TEXTS))
    alone = np.array([bf16.score_texts([t])[0] for t in TEXTS])
    scale = np.abs(reference).max()
    np.testing.assert_allclose(fast, reference, atol=0.05 * scale)
    np.testing.assert_allclose(alone, fast, atol=0.02 * scale)
