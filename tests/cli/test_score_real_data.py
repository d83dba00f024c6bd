"""`rewardlab score` with `math.answer` on the real best-of-8 file (issue 3's acceptance run)."""

import json

from rewardlab.cli.main import main

SPEC = """
[reward]
name = "math"
[[reward.components]]
name = "correct"
use = "math.answer"
"""


def test_score_the_real_qwen_file_with_the_maths_verifier(shared_data, tmp_path):
    spec = tmp_path / "math.toml"
    spec.write_text(SPEC)
    out = tmp_path / "scored.jsonl"
    argv = [
        "score", str(spec), str(shared_data / "qwen25-math-cot-100.jsonl"),
        "--response-field", "code", "--reference-field", "gt",
        "--explode", "code,score,pred_score", "-o", str(out), "--no-progress", "-w", "2",
    ]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 800
    decided = [r for r in rows if r["reward_status"] == "ok"]
    agree = sum((r["reward"] == 1.0) == bool(r["score"]) for r in decided)
    # every row is accounted for: decided ones mostly agree with the file's grader labels, and
    # the undecided ones are typed errors (a corrupted gold answer), never silent zeros
    assert agree >= 0.98 * len(decided)
    assert all(r["reward_error_kind"] for r in rows if r["reward_status"] != "ok")
