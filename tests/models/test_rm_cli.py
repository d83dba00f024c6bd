"""`rewardlab train rm` end to end, in-process: trains, prints per-epoch accuracy, saves a usable model."""

import json

from rewardlab.cli.main import main
from rewardlab.core import Sample, registry


def _write_pairs(path, pairs):
    path.write_text("\n".join(json.dumps({"prompt": p.prompt, "chosen": p.chosen, "rejected": p.rejected})
                              for p in pairs))
    return path


def test_train_rm_writes_a_model_that_model_rm_loads(tmp_path, unbiased_pairs, capsys):
    data = _write_pairs(tmp_path / "prefs.jsonl", unbiased_pairs[0][:400])
    code = main(["train", "rm", str(data), "--out", str(tmp_path / "rm"), "--backbone", "hashing",
                 "--epochs", "3", "--no-progress", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "epoch   1" in out and "val accuracy" in out and "saved to" in out
    rm = registry.create("model.rm", {"path": str(tmp_path / "rm")})
    assert rm.score(Sample(prompt="Compute: 1+2", response="1+2=3")).ok


def test_train_rm_bad_row_exits_1_naming_the_line(tmp_path, capsys):
    data = tmp_path / "prefs.jsonl"
    data.write_text('{"chosen": "a", "rejected": "b"}\n{"chosen": "a"}\n')
    assert main(["train", "rm", str(data), "--backbone", "hashing", "--no-progress"]) == 1
    assert "prefs.jsonl:2: missing field 'rejected'" in capsys.readouterr().err


def test_train_rm_bad_option_is_a_usage_error(tmp_path, capsys):
    data = _write_pairs(tmp_path / "prefs.jsonl", [])
    assert main(["train", "rm", str(data), "--truncation-side", "middle", "--no-progress"]) == 2


def test_train_rm_mlp_ensemble_options_reach_the_checkpoint(tmp_path, unbiased_pairs, capsys):
    data = _write_pairs(tmp_path / "prefs.jsonl", unbiased_pairs[0][:200])
    code = main(["train", "rm", str(data), "--out", str(tmp_path / "rm"), "--backbone", "hashing", "--epochs", "2",
                 "--head", "ensemble", "--members", "3", "--member-hidden", "8", "--no-bootstrap",
                 "--aggregate", "min", "--no-progress"])
    assert code == 0, capsys.readouterr().out
    head = json.loads((tmp_path / "rm" / "config.json").read_text())["head"]
    assert (head["members"], head["hidden"], head["how"]) == (3, 8, "min")
    assert main(["train", "rm", str(data), "--head", "ensemble", "--aggregate", "median", "--no-progress"]) == 2
    assert "median" in capsys.readouterr().err


def test_train_pairs_keeps_going_past_bad_rows_and_names_their_file_lines(tmp_path, capsys):
    import json

    rows = ['{"question": "q0", "code": ["a", "b"], "score": [true, false], "idx": 0}', "", "{broken",
            json.dumps({"question": "q1", "code": ["c", "d"], "score": ["yes", False], "idx": 1}),
            json.dumps({"question": "q2", "code": ["e", "f", "g"], "score": [False, None, True], "idx": 2})]
    data = tmp_path / "sets.jsonl"
    data.write_text("\n".join(rows) + "\n")
    assert main(["train", "pairs", str(data), "--out", str(tmp_path / "pairs.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "2 rows could not be read" in out and "sets.jsonl:3: malformed JSON" in out
    assert "sets.jsonl:4: column 'score' holds 'yes'" in out
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert [(p["chosen"], p["rejected"]) for p in pairs] == [("a", "b"), ("g", "e")]


def test_train_rm_progress_bar_counts_every_batch_with_rate_and_eta(tmp_path, unbiased_pairs, capsys):
    import re

    data = _write_pairs(tmp_path / "prefs.jsonl", unbiased_pairs[0][:100])
    code = main(["train", "rm", str(data), "--out", str(tmp_path / "rm"), "--backbone", "hashing",
                 "--epochs", "2", "--batch-size", "16", "--patience", "5", "--progress", "--seed", "1"])
    err = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", capsys.readouterr().err)
    assert code == 0
    done, total = re.findall(r"training\D*?(\d+)/(\d+)", err)[-1]
    assert done == total and int(total) >= 2  # every batch of both epochs (the split decides how many)
    assert "batches/s" in err and "ETA" in err
