"""`model.hf` with `trust_remote_code`: a model directory whose own Python code returns ArmoRM's
output (`rewards` per objective, `gating_output`, `score`), loaded through transformers' real
remote-code path and read with `combine = "model"`."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from rewardlab.core import Sample
from rewardlab.errors import MissingWeightsError
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import save_tiny

# ArmoRM's layout in miniature (RLHFlow/ArmoRM-Llama3-8B-v0.1, modeling_custom.py): a Llama body,
# a regression layer with one reward per objective, a softmax gate, score = Σ gate · rewards.
MODELING = '''
from dataclasses import dataclass
import torch
from torch import nn
from transformers import LlamaModel, LlamaPreTrainedModel
from transformers.utils import ModelOutput


@dataclass
class GatedOutput(ModelOutput):
    rewards: torch.FloatTensor = None
    gating_output: torch.FloatTensor = None
    score: torch.FloatTensor = None


class TinyGatedRM(LlamaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.regression_layer = nn.Linear(config.hidden_size, config.num_labels, bias=False)
        self.gating = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kwargs):
        hidden = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids).last_hidden_state
        last = hidden[:, -1]  # left-padded input: the last position is the last real token
        rewards = self.regression_layer(last)
        gate = torch.softmax(self.gating(last), dim=-1)
        return GatedOutput(rewards=rewards, gating_output=gate, score=(rewards * gate).sum(-1, keepdim=True))
'''


@pytest.fixture(scope="module")
def remote_dir(tmp_path_factory):
    path = save_tiny(tmp_path_factory.mktemp("remote") / "armo", "llama", num_labels=3, seed=50)
    (path / "modeling_tiny_gated.py").write_text(MODELING)
    config = json.loads((path / "config.json").read_text())
    config["auto_map"] = {"AutoModelForSequenceClassification": "modeling_tiny_gated.TinyGatedRM"}
    config["architectures"] = ["TinyGatedRM"]
    (path / "config.json").write_text(json.dumps(config))
    # weights for the custom heads: load through the remote class once and save again
    model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True)
    torch.manual_seed(51)
    with torch.no_grad():
        for p in (*model.regression_layer.parameters(), *model.gating.parameters()):
            p.normal_(0, 1.0)
    model.save_pretrained(path)
    (path / "modeling_tiny_gated.py").write_text(MODELING)  # save_pretrained may not copy it back
    return path


def test_remote_code_score_and_objectives_match_the_direct_call(remote_dir):
    samples = [Sample(prompt="w1 w2", response="w3 w4 w5"), Sample(prompt="w9", response=" ".join(["w7"] * 30))]
    tok = AutoTokenizer.from_pretrained(remote_dir)
    model = AutoModelForSequenceClassification.from_pretrained(remote_dir, trust_remote_code=True).eval()
    rm = HFReward(model=str(remote_dir), trust_remote_code=True)
    assert rm.combine == "model"
    for sample, result in zip(samples, rm.score_batch(samples), strict=True):
        enc = tok.apply_chat_template([{"role": "user", "content": sample.prompt},
                                       {"role": "assistant", "content": sample.response}],
                                      return_dict=True, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc)
        assert result.score == pytest.approx(float(out.score[0, 0]), abs=1e-5)
        objectives = [result.components[name].score for name in ("LABEL_0", "LABEL_1", "LABEL_2")]
        assert objectives == pytest.approx(out.rewards[0].tolist(), abs=1e-5)


def test_without_trust_remote_code_the_missing_standard_head_is_refused(remote_dir):
    """Loaded as a plain LlamaForSequenceClassification, the remote model has no `score` head:
    refused, naming the weight and the option, rather than scored by a random head."""
    with pytest.raises(MissingWeightsError, match=r"score\.weight.*trust_remote_code = true"):
        HFReward(model=str(remote_dir))
