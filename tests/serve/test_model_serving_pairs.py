"""A BERT cross-encoder behind `rewardlab serve`, over a real socket: the server's scores equal the
model card recipe (`tokenizer(queries, passages)` → `model(**features)`, segment ids included)."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertForSequenceClassification,
)

from rewardlab.compose import build
from rewardlab.core import Sample
from rewardlab.models.hf_tiny import WORDS, save_tiny
from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    path = save_tiny(tmp_path_factory.mktemp("serve") / "ce", "bert", chat_template=False, seed=41)
    model = BertForSequenceClassification.from_pretrained(path)
    emb = model.bert.embeddings.token_type_embeddings.weight
    with torch.no_grad():  # segment B far from segment A: dropping the segment ids would show
        emb[1] = emb[0] + torch.linspace(-1.0, 1.0, emb.shape[1])
    model.save_pretrained(path)
    return path


def test_served_pairs_equal_the_card_recipe(make_app, cross_encoder):
    rng = random.Random(4)
    samples = [Sample(prompt=" ".join(rng.choices(WORDS[:200], k=rng.randint(1, 10))),
                      response=" ".join(rng.choices(WORDS[:200], k=rng.randint(1, 30)))) for _ in range(9)]
    reward = build({"reward": {"name": "ce", "components": [
        {"name": "ce", "use": "model.hf", "params": {"model": str(cross_encoder)}}]}})
    tok = AutoTokenizer.from_pretrained(cross_encoder)
    model = AutoModelForSequenceClassification.from_pretrained(cross_encoder).eval()
    features = tok([s.prompt for s in samples], [s.response for s in samples], padding=True, return_tensors="pt")
    with torch.no_grad():
        card = model(**features).logits[:, 0]
        without = model(input_ids=features["input_ids"], attention_mask=features["attention_mask"]).logits[:, 0]
    assert (card - without).abs().max() > 0.05
    app = make_app({"ce": reward}, None, ServeSettings())
    with LiveServer(app) as server, Client(server.url, retries=0) as client:
        got = client.score("ce", samples)
    torch.testing.assert_close(torch.tensor([r.score for r in got]), card, atol=1e-5, rtol=0)
