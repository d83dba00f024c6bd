"""What a reward model reads: pair truncation, pooling of decoders, validation splits, pairs
built from graded candidate sets (library and CLI)."""

from __future__ import annotations

import json

from rewardlab.cli.main import main
from rewardlab.models.backbones import HFBackbone, tiny_bert
from rewardlab.models.checkpoint import pair_text
from rewardlab.models.config import EncodeConfig
from rewardlab.models.data import held_out, read_pairs, split_warning

PROMPT = "QUESTION: what is the sum of the numbers below? " + " ".join(f"n{i}" for i in range(200))
RESPONSE = " ".join(f"step{i}" for i in range(200)) + " so the final answer is 42"


def test_split_truncation_keeps_the_question_and_the_final_answer():
    backbone = tiny_bert(encode=EncodeConfig(max_length=64))
    text = pair_text(backbone, PROMPT, RESPONSE)
    assert text.startswith("QUESTION: what is the sum")  # the prompt's head
    assert text.endswith("the final answer is 42")  # the response's tail
    assert len(backbone.tokenizer(text)["input_ids"]) <= 64
    assert backbone.n_truncated == 1


def test_left_truncation_drops_the_question():
    # the old behaviour, still available: the joined text loses its start
    backbone = tiny_bert(encode=EncodeConfig(max_length=64, truncation_side="left"))
    text = pair_text(backbone, PROMPT, RESPONSE)
    ids = backbone.tokenize([text])["input_ids"][0]
    kept = backbone.tokenizer.decode(ids, skip_special_tokens=True)
    assert "question" not in kept and kept.endswith("is 42")


def test_short_pairs_are_not_cut():
    backbone = tiny_bert(encode=EncodeConfig(max_length=64))
    assert pair_text(backbone, "2+2?", "4") == "2+2?\n\n4"
    assert backbone.n_truncated == 0


def test_auto_pooling_reads_the_last_token_of_a_decoder_and_means_an_encoder():
    gpt2 = HFBackbone.from_config({"model_type": "gpt2", "n_embd": 32, "n_layer": 1, "n_head": 2, "vocab_size": 30522,
                                   "n_positions": 128}, encode=EncodeConfig(max_length=32))
    assert gpt2.encode_config.pooling == "last"
    assert tiny_bert().encode_config.pooling == "mean"
    assert gpt2.spec()["encode"]["pooling"] == "last"  # the resolved rule is what a checkpoint stores


def test_split_warning_for_few_prompts_and_for_one_prompt():
    few = ["a"] * 5 + ["b"] * 5 + ["c"] * 90
    held = held_out(few, val_fraction=0.1, seed=0)
    message = split_warning(few, held, val_fraction=0.1)
    assert message is not None and "1 of 3 prompts" in message and "asked 10%" in message
    one = ["p"] * 20
    assert "only one prompt" in split_warning(one, held_out(one, val_fraction=0.1), val_fraction=0.1)
    many = [f"p{i}" for i in range(300)]
    assert split_warning(many, held_out(many, val_fraction=0.1), val_fraction=0.1) is None


def test_cli_train_pairs_from_graded_candidates(tmp_path, capsys):
    rows = [{"idx": 0, "question": "2+2?", "code": ["4", "5", "four"], "score": [True, False, True]},
            {"idx": 1, "question": "3+3?", "code": ["6", "6"], "score": [True, True]}]  # all right: no pair
    data = tmp_path / "cands.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "pairs.jsonl"
    assert main(["train", "pairs", str(data), "-o", str(out)]) == 0
    pairs = read_pairs(out)
    assert [(p.chosen, p.rejected) for p in pairs] == [("4", "5"), ("four", "5")]
    assert {p.group for p in pairs} == {"0"}
    assert "2 pairs from 1 of 2 prompts" in capsys.readouterr().out


def test_cli_train_rm_warns_when_validation_has_few_prompts(tmp_path, capsys):
    rows = [{"prompt": f"q{i % 3}", "chosen": "good answer", "rejected": "bad"} for i in range(30)]
    data = tmp_path / "prefs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["train", "rm", str(data), "-o", str(tmp_path / "rm"), "--backbone", "hashing", "--epochs", "1",
                 "--no-progress"]) == 0
    assert "warning:" in capsys.readouterr().out


def test_cli_eval_prints_training_free_baselines_next_to_a_learned_model(tmp_path, capsys):
    # graded candidates -> pairs -> a learned model -> `rewardlab eval` with the model as a selector
    rows = []
    for i in range(30):
        right, wrong = f"{i} + {i} = {2 * i}, the answer is {2 * i}", f"{i} + {i} = {2 * i + 1}, so the answer is {2 * i + 1}"
        rows.append({"idx": i, "question": f"{i}+{i}?", "gt": str(2 * i), "code": [right, wrong, wrong + " indeed"],
                     "score": [True, False, False], "pred": [str(2 * i), str(2 * i + 1), str(2 * i + 1)]})
    cands = tmp_path / "cands.jsonl"
    cands.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["train", "pairs", str(cands), "-o", str(tmp_path / "pairs.jsonl")]) == 0
    assert main(["train", "rm", str(tmp_path / "pairs.jsonl"), "-o", str(tmp_path / "rm"), "--backbone", "hashing",
                 "--epochs", "2", "--no-progress"]) == 0
    spec = tmp_path / "rm.toml"
    spec.write_text(f'[reward]\nname = "learned"\n[[reward.components]]\nname = "rm"\nuse = "model.rm"\n'
                    f'params = {{ path = "{tmp_path / "rm"}" }}\n')
    capsys.readouterr()
    assert main(["eval", str(spec), "--data", str(cands), "-o", str(tmp_path / "eval")]) == 0
    printed = capsys.readouterr().out
    for row in ("best-of-N by learned", "best-of-N by length baseline", "best-of-N by shorter-wins baseline",
                "majority vote (self-consistency)"):
        assert row in printed, row
    payload = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert payload["selectors"]["shorter-wins baseline"]["best_of_n"]["estimate"] == 1.0  # the right answer is shortest
