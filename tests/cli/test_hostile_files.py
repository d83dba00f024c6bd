"""The commands that read data files, on files where some rows are hostile.

Rows with a value of the wrong type in each column (objects, numbers, booleans, NaN, lone
surrogates, 100 KB strings, nested lists), lines that are not JSON or not objects: each command
either finishes (exit 0, the bad rows reported or written as errors) or stops with an error that
names the file and line (exit 1). Never a traceback, never a usage error, and a finished run
writes a row for every input row it promises one for.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rewardlab.cli.main import main
from serve._rewards import EXACT_SPEC as SPEC

WEIRD = [None, 1, 1.5, True, [], {}, ["a", None], {"x": 1}, "", "\ud800 cut", "x" * 100_000, float("nan"), -1e308, 10**30]


def candidate_rows(rng: random.Random, n: int = 30) -> list[dict]:
    """Candidate sets (the Qwen eval layout: a list of responses and of labels per problem)."""
    rows = []
    for i in range(n):
        code = [f"so \\boxed{{{rng.choice([4, 5])}}}" for _ in range(4)]
        row = {"idx": i, "question": f"q{i}", "gt": "4", "code": code, "score": [c.endswith("{4}") for c in code],
               "pred_score": [[rng.random()] for _ in code]}  # fmt: skip
        if i % 3 == 0:
            row[rng.choice(["code", "score", "gt", "question", "pred_score", "idx"])] = rng.choice(WEIRD)
        elif i % 3 == 1:
            row[rng.choice(["code", "score", "pred_score"])][rng.randrange(4)] = rng.choice(WEIRD)
        rows.append(row)
    return rows


def scored_rows(rng: random.Random, n: int = 40) -> list[dict]:
    """Rows as `rewardlab score` writes them, some edited by hand."""
    rows = []
    for i in range(n):
        row = {"response": "4", "reference": "4", "group": f"g{i // 4}", "reward": i / n, "reward_status": "ok",
               "meta": {"label": i % 2 == 0, "level": f"L{i % 3}"}}  # fmt: skip
        if i % 4 == 0:
            row[rng.choice(["response", "reference", "group", "reward", "meta"])] = rng.choice(WEIRD)
        rows.append(row)
    return rows


def pair_rows(rng: random.Random, n: int = 40) -> list[dict]:
    """Preference pairs, some with a bad field."""
    rows = []
    for i in range(n):
        row = {"prompt": f"p{i // 2}", "chosen": "a good answer " * 3, "rejected": "bad", "margin": 1.0}
        if i % 4 == 0:
            row[rng.choice(["prompt", "chosen", "rejected", "margin"])] = rng.choice(WEIRD)
        rows.append(row)
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n[1, 2]\n\"a string\"\n")
    return path


COMMANDS = [
    ["select", "curves", "{candidates}", "-o", "{out}/curves"],
    ["select", "pick", "{candidates}", "-m", "weighted", "-o", "{out}/picks.jsonl"],
    ["train", "pairs", "{candidates}", "-o", "{out}/pairs.jsonl"],
    ["eval", "--data", "{candidates}", "--out", "{out}/eval"],
    ["eval", "{spec}", "--data", "{scored}", "--out", "{out}/eval2"],
    ["audit", "{spec}", "-d", "{scored}", "-o", "{out}/audit", "--label-field", "label", "--group-by", "level"],
    ["score", "{spec}", "{scored}", "-o", "{out}/scored.jsonl"],
    ["advantages", "{scored}", "--group-by", "group", "--score-column", "reward", "-o", "{out}/adv.jsonl"],
    ["eval", "{spec}", "--data", "{pairs}", "--out", "{out}/eval3"],
    ["train", "rm", "{pairs}", "--out", "{out}/rm", "--epochs", "1", "--backbone", "hashing"],
]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:4]).replace("{", "").replace("}", ""))
def test_a_command_on_hostile_rows_finishes_or_names_the_line(tmp_path, capfd, argv, seed):
    rng = random.Random(seed)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    paths = {"spec": spec, "out": tmp_path / "out", "candidates": write(tmp_path / "cands.jsonl", candidate_rows(rng)),
             "scored": write(tmp_path / "scored.jsonl", scored_rows(rng)), "pairs": write(tmp_path / "pairs.jsonl", pair_rows(rng))}  # fmt: skip
    code = main([a.format(**paths) for a in argv])
    printed = capfd.readouterr()
    said = printed.out + printed.err
    assert "Traceback" not in said
    assert code in (0, 1), said[-2000:]
    if code == 1:
        assert "error:" in said and (".jsonl:" in said or "no " in said), said[-2000:]
    if argv[0] == "score":  # one output row per input line, the bad ones as error rows
        assert code == 0 and len((tmp_path / "out" / "scored.jsonl").read_text().splitlines()) == 43
