import json
from pathlib import Path

import pytest

from rewardlab.cli.main import main

SPEC = """
[reward]
name = "t"
[[reward.components]]
name = "format"
use = "format.tags"
weight = 0.1
[[reward.components]]
name = "correct"
use = "text.exact"
requires = ["format"]
params = { extract = '<answer>(.*?)</answer>' }
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    rows = [
        {"id": "1", "response": "<think>t</think><answer>4</answer>", "reference": "4"},
        {"id": "2", "response": "4", "reference": "4"},
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    return path


def test_score_writes_one_row_per_input_row_and_prints_a_summary(spec, data, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    summary = tmp_path / "summary.json"
    code = main(["score", str(spec), str(data), "-o", str(out), "--workers", "1", "--no-progress", "--summary-json", str(summary)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward"] for r in rows] == [pytest.approx(1.1), 0.0, None]
    printed = capsys.readouterr().out
    assert "3 rows" in printed and "invalid_input 1" in printed and "row 3: invalid_input" in printed
    assert json.loads(summary.read_text())["total"]["errors"] == {"invalid_input": 1}


def test_score_default_output_path_and_field_mapping(spec, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"completion": "<think>t</think><answer>4</answer>", "gold": "4"}) + "\n")
    code = main(["score", str(spec), str(data), "--response-field", "completion", "--reference-field", "gold", "-w", "0", "--no-progress"])
    assert code == 0
    assert json.loads((tmp_path / "d.scored.jsonl").read_text())["reward"] == pytest.approx(1.1)


def test_strict_exits_1_on_the_first_bad_row(spec, data, tmp_path, capsys):
    code = main(["score", str(spec), str(data), "-o", str(tmp_path / "o.jsonl"), "--strict", "-w", "1", "--no-progress"])
    assert code == 1
    assert "data.jsonl:3" in capsys.readouterr().err


def test_check_ok_prints_the_tree(spec, capsys):
    assert main(["check", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "spec_hash=" in out and "└─ correct ×1 requires[format]" in out


def test_check_reports_problems_and_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace("text.exact", "text.exakt").replace("extract =", "extrakt ="))
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "did you mean 'text.exact'" in out


def test_score_with_a_bad_spec_exits_1(tmp_path, data, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[reward]\nname = 'x'\n")
    assert main(["score", str(bad), str(data), "--no-progress"]) == 1
    assert "invalid reward spec" in capsys.readouterr().err


def test_usage_errors_exit_2(spec, data):
    assert main(["score", str(spec)]) == 2
    assert main(["score", str(spec), str(data), "--workers", "-3", "--no-progress"]) == 2
    assert main(["score", str(spec), str(data), "--field", "nonsense", "--no-progress"]) == 2
    assert main(["no-such-command"]) == 2


def test_list_shows_builtins_with_params_and_ranges(capsys):
    assert main(["list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["text.exact"]["range"] == [0.0, 1.0]
    assert "case_sensitive" in [p["name"] for p in rows["text.exact"]["params"]]
    assert main(["list", "text."]) == 0


def test_demo_runs_on_bundled_data(tmp_path, capsys):
    out = tmp_path / "demo.jsonl"
    assert main(["demo", "-o", str(out), "-w", "1"]) == 0
    rows = out.read_text().splitlines()
    bundled = Path(__import__("rewardlab.demo").demo.__file__).with_name("rlvr_sample.jsonl")
    assert len(rows) == len([line for line in bundled.read_text().splitlines() if line.strip()])
    assert "rewardlab demo" in capsys.readouterr().out


def test_version():
    assert main(["--version"]) == 0


def test_score_limit_keeps_the_group_it_would_cut(tmp_path):
    spec = tmp_path / "vote.toml"
    spec.write_text('[reward]\nname = "vote"\n[[reward.components]]\nname = "vote"\nuse = "labelfree.majority_vote"\nparams = { min_group = 3 }\n')
    rows = [{"response": f"\\boxed{{{a}}}", "group": g} for g in ("q1", "q2", "q3") for a in ("1", "1", "2")]
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    assert main(["score", str(spec), str(data), "-o", str(out), "--limit", "4", "-w", "0", "--no-progress"]) == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scored) == 6  # q1 whole, and q2 whole although the limit cut it after one row
    assert [r["reward"] for r in scored] == [1.0, 1.0, 0.0] * 2


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["-w", "-1"], "workers"),
        (["--timeout", "0"], "timeout"),
        (["--backend", "bogus"], "backend"),
        (["--log-every", "0"], "log_every"),
        (["--field", "answer=gold"], "--field"),
    ],
)
def test_an_unusable_score_option_is_a_usage_error_naming_it(spec, data, tmp_path, capsys, flags, named):
    """`ScoreFileOptions` checks its own values; the command turns its refusal into exit code 2."""
    code = main(["score", str(spec), str(data), "-o", str(tmp_path / "o.jsonl"), "--no-progress", *flags])
    assert code == 2 and named in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
