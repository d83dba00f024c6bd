"""`rewardlab train prm` in-process, and PRM fine-tuning of the top layers of a tiny BERT."""

import json

import numpy as np
import pytest
import torch

from rewardlab.cli.main import main
from rewardlab.core import Sample, Status, registry
from rewardlab.errors import InputError
from rewardlab.models import tiny_bert
from rewardlab.models.data import read_step_rows
from rewardlab.models.prm import PRMConfig, ProcessRewardModel, train_prm
from rewardlab.models.step_labels import mc_soft_labels
from rewardlab.models.synthetic import make_step_samples


def _write_steps(path, n: int, *, soft: bool, seed: int = 0):
    samples, gold, successes = make_step_samples(n, seed=seed)
    with path.open("w") as fh:
        for i, (sample, labels, wins) in enumerate(zip(samples, gold, successes, strict=True)):
            marks = mc_soft_labels(wins, 8).tolist() if soft else [bool(y) for y in labels]
            if i == 0:
                marks[-1] = None  # an unlabelled step: masked out of the loss
            fh.write(json.dumps({"prompt": sample.prompt, "steps": list(sample.steps), "labels": marks}) + "\n")
    return path


def test_train_prm_cli_on_tiny_bert_finetune_saves_a_model_prm(tmp_path, capsys):
    data = _write_steps(tmp_path / "steps.jsonl", 60, soft=True)
    out = tmp_path / "prm"
    code = main(["train", "prm", str(data), "--out", str(out), "--backbone", "tiny-bert", "--mode", "finetune",
                 "--layers", "1", "--epochs", "3", "--lr-backbone", "1e-3", "--max-length", "64",
                 "--val-fraction", "0.2", "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert text.count("val step accuracy") == 4 and "Brier" in text and "saved to" in text  # 3 epochs + summary
    saved = json.loads((out / "config.json").read_text())
    assert saved["report"]["kind"] == "prm" and saved["report"]["config"]["mode"] == "finetune"
    assert saved["trained_params"] and all(".layer.1." in n for n in saved["trained_params"])
    reward = registry.create("model.prm", {"path": str(out), "aggregate": "min"})
    sample = Sample(prompt="Compute: 1+2, 2+2", response="1+2=3 2+2=4", steps=("1+2=3", "2+2=4"))
    result = reward.score(sample)
    assert result.status is Status.OK and len(result.steps) == 2
    assert result.score == pytest.approx(min(result.steps))
    reloaded = ProcessRewardModel.load(out).score_steps(sample.prompt_text, sample.steps)
    np.testing.assert_allclose(reloaded, result.steps, atol=1e-6)


def test_prm_finetune_trains_only_the_top_layers_and_keeps_the_best_epoch():
    """A random tiny BERT cannot learn arithmetic (its held-out BCE is not the point); what is
    checked: only the top block moves, the training loss falls, and the returned model is the
    best-on-validation epoch (its BCE recomputed from scratch equals the logged best)."""
    (train, gold, _), (val, val_gold, _) = make_step_samples(80, seed=0), make_step_samples(30, seed=1)
    backbone = tiny_bert(seed=0)
    before = {n: p.detach().clone() for n, p in backbone.named_parameters()}
    prm, report = train_prm(train, gold, val=(val, val_gold), backbone=backbone,
                            config=PRMConfig(mode="finetune", finetune_layers=1, epochs=4, lr_backbone=1e-3,
                                             batch_size=32, patience=4))
    after = dict(backbone.named_parameters())
    changed = {n for n in before if not torch.equal(before[n], after[n])}
    assert changed and all(".layer.1." in n for n in changed)  # the top block, nothing below it
    assert set(prm.model.trained_params) >= changed
    losses = [e["train_loss"] for e in report["epochs"]]
    assert losses[-1] < losses[0]
    bces = [e["metrics"]["bce"] for e in report["epochs"]]
    assert report["best_val_bce"] == min(bces) and report["best_epoch"] == 1 + bces.index(min(bces))
    probs = np.concatenate(prm.score_many([(s.prompt_text, s.steps) for s in val]))
    truth = np.concatenate(val_gold)
    bce = -np.mean(truth * np.log(probs) + (1 - truth) * np.log(1 - probs))
    assert bce == pytest.approx(report["best_val_bce"], abs=1e-5)
    assert np.mean((probs - truth) ** 2) == pytest.approx(report["best_val_brier"], abs=1e-5)


def test_train_prm_cli_frozen_hashing_learns_steps(tmp_path, capsys):
    data = _write_steps(tmp_path / "steps.jsonl", 300, soft=False)
    val = _write_steps(tmp_path / "val.jsonl", 60, soft=False, seed=1)
    code = main(["train", "prm", str(data), "--val", str(val), "--out", str(tmp_path / "prm"),
                 "--backbone", "hashing", "--epochs", "15", "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0, text
    config = json.loads((tmp_path / "prm" / "config.json").read_text())
    assert config["report"]["best_val_accuracy"] > 0.8  # held-out step accuracy (chance: ~0.6)


def test_read_step_rows_labels_and_errors(tmp_path):
    good = tmp_path / "ok.jsonl"
    good.write_text(json.dumps({"prompt": "p", "steps": ["a", "b", "c"], "labels": [True, 0.25, None]}) + "\n")
    samples, labels = read_step_rows(good)
    assert samples[0].steps == ("a", "b", "c") and labels == [[1.0, 0.25, -1.0]]
    bad = tmp_path / "bad.jsonl"
    for row, message in [({"steps": ["a"], "labels": [1, 0]}, "one label per step"),
                         ({"steps": [], "labels": []}, "non-empty list"),
                         ({"steps": ["a"], "labels": [1.5]}, "is not true/false")]:
        bad.write_text(json.dumps({"prompt": "p", "steps": ["x"], "labels": [1]}) + "\n" + json.dumps(row) + "\n")
        with pytest.raises(InputError, match=message) as info:
            read_step_rows(bad)
        assert "bad.jsonl:2" in str(info.value)


def test_train_prm_cli_bad_input_and_bad_options(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"prompt": "p", "steps": ["a", "b"], "labels": [1]}) + "\n")
    assert main(["train", "prm", str(bad), "--backbone", "hashing", "--no-progress"]) == 1
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert main(["train", "prm", str(bad), "--mode", "sideways", "--no-progress"]) == 2
    assert "mode must be" in capsys.readouterr().err
    good = _write_steps(tmp_path / "good.jsonl", 20, soft=False)
    assert main(["train", "prm", str(good), "--backbone", "hashing", "--mode", "finetune", "--no-progress"]) == 1
    assert "transformer backbone" in capsys.readouterr().err
