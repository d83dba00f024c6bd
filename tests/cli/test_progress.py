"""Progress bars of the commands that read a data file (`score`, `eval`, `audit`, `advantages`),
and the library hook under `eval` and `audit` (`evaluate._scoring.scorer(progress=...)`).

The bar is on by default when stderr is a terminal: checked under a real pseudo-terminal (`pty`)
in a subprocess, and off with stderr a pipe."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rewardlab.cli.main import main
from rewardlab.compose import build
from rewardlab.core import Sample
from rewardlab.evaluate._scoring import scorer
from rewardlab.evaluate.audit.run_audit import audit_reward
from rewardlab.evaluate.run_eval import run_eval

SRC = Path(__file__).resolve().parents[2] / "src"
DIGIT_TOML = '[reward]\nname = "digit"\n[[reward.components]]\nname = "digit"\nuse = "text.regex"\nparams = { pattern = "[0-9]" }\n'
BAR = re.compile(r"(\d+)/(\d+)\s")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _files(tmp_path: Path) -> dict[str, Path]:
    spec = tmp_path / "digit.toml"
    spec.write_text(DIGIT_TOML)
    pairs = _jsonl(tmp_path / "pairs.jsonl", [
        {"prompt": f"q{i}", "chosen": str(i), "rejected": "no", "reference": str(i)} for i in range(7)
    ])  # fmt: skip
    maths = _jsonl(tmp_path / "maths.jsonl", [
        {"prompt": f"{i}+0?", "response": f"it is \\boxed{{{i}}}", "reference": str(i)} for i in range(5)
    ])  # fmt: skip
    scored = _jsonl(tmp_path / "scored.jsonl", [
        {"group": f"g{i % 3}", "reward": float(i % 2), "reward_status": "ok"} for i in range(11)
    ])  # fmt: skip
    return {"spec": spec, "pairs": pairs, "maths": maths, "scored": scored}


def _final_count(err: str) -> tuple[int, int]:
    """The last `done/total` a bar printed."""
    found = BAR.findall(ANSI.sub("", err))
    assert found, f"no progress bar on stderr: {err!r}"
    done, total = found[-1]
    return int(done), int(total)


# -- the library hook -----------------------------------------------------------------------

def _votes() -> list[Sample]:
    """Four groups of 3 to 7 answers, interleaved: a cut every few positions would split them."""
    answers = {"a": "1121311", "b": "454", "c": "9998", "d": "72777"}
    samples = [(g, a) for g, text in answers.items() for a in text]
    order = sorted(range(len(samples)), key=lambda i: (i * 7) % len(samples))
    return [Sample(response=f"\\boxed{{{samples[i][1]}}}", group=samples[i][0]) for i in order]


def _same(left: list, right: list) -> None:
    assert [(r.score, r.status, r.info) for r in left] == [(r.score, r.status, r.info) for r in right]


def test_scorer_cuts_chunks_between_groups_and_reports_every_sample():
    reward = build({"reward": {"name": "ttrl", "components": [{"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3}}]}})
    samples = _votes()
    whole = reward.score_batch(samples)
    assert sum(r.score is not None for r in whole) == len(samples)  # every group big enough to vote
    steps: list[int] = []
    announced: list[int] = []
    with scorer(reward, chunk_size=2, progress=steps.append, on_batch=announced.append) as score:
        chunked = score(samples)
    _same(chunked, whole)  # a group cut in two would fall below min_group and be skipped
    assert announced == [len(samples)] and sum(steps) == len(samples) and len(steps) == 4  # one step per group
    with scorer(reward, chunk_size=2) as score:
        _same(score(samples), whole)  # the same without a hook


def test_scorer_in_a_worker_pool_reports_progress_and_the_same_results():
    vote = build({"reward": {"name": "ttrl", "components": [{"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3}}]}})
    digit = build(DIGIT_TOML)
    samples = [Sample(response=s.response, reference="1", group=s.group) for s in _votes()]
    for reward in (vote, digit):
        steps: list[int] = []
        with scorer(reward, workers=1, progress=steps.append) as score:
            pooled = score(samples)
        with scorer(reward, workers=1) as score:
            _same(score(samples), pooled)
        _same(pooled, reward.score_batch(samples))
        assert sum(steps) == len(samples)


def test_run_eval_and_audit_report_every_sample_without_changing_results(tmp_path):
    files = _files(tmp_path)
    steps: list[int] = []
    report = run_eval(files["spec"], files["pairs"], progress=steps.append)
    assert sum(steps) == 14  # chosen and rejected of 7 pairs
    assert report.numbers == run_eval(files["spec"], files["pairs"]).numbers
    steps.clear()
    audited = audit_reward(files["spec"], files["maths"], progress=steps.append)
    assert sum(steps) > 5  # the rows and their counterfactuals
    assert audited.numbers == audit_reward(files["spec"], files["maths"]).numbers


# -- the commands, in-process ---------------------------------------------------------------

def _commands(files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    return {
        "eval": ["eval", str(files["spec"]), "--data", str(files["pairs"]), "-o", str(out / "eval")],
        "audit": ["audit", str(files["spec"]), "--data", str(files["maths"]), "-o", str(out / "audit")],
        "advantages": ["advantages", str(files["scored"]), "-o", str(out / "adv.jsonl")],
        "score": ["score", str(files["spec"]), str(files["maths"]), "-o", str(out / "s.jsonl"), "-w", "0"],
    }


@pytest.mark.parametrize("command", ["eval", "audit", "advantages", "score"])
def test_progress_bar_reaches_the_count_and_no_progress_prints_none(tmp_path, capsys, command):
    files = _files(tmp_path)
    argv = _commands(files, tmp_path)[command]
    assert main([*argv, "--progress"]) == 0
    done, total = _final_count(capsys.readouterr().err)
    assert done == total
    expected = {"eval": 14, "advantages": 11, "score": 5}
    if command in expected:
        assert total == expected[command]
    else:  # audit: the rows and their counterfactuals, as the library counts them
        steps: list[int] = []
        audit_reward(files["spec"], files["maths"], progress=steps.append)
        assert total == sum(steps)
    assert main([*argv, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert not BAR.search(err) and "ETA" not in err


def test_eval_that_scores_nothing_shows_no_empty_bar(tmp_path, capsys):
    files = _files(tmp_path)
    rollouts = tmp_path / "rollouts.jsonl"
    assert main([*_commands(files, tmp_path)["score"][:3], "-o", str(rollouts), "-w", "0", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["eval", "--data", str(rollouts), "--mode", "rollouts", "-o", str(tmp_path / "r"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "samples/s" not in err and "0/?" not in err


def test_default_is_decided_when_the_command_runs(tmp_path, capsys, monkeypatch):
    files = _files(tmp_path)
    argv = _commands(files, tmp_path)["score"]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # the module was imported long before
    assert main(argv) == 0
    assert _final_count(capsys.readouterr().err) == (5, 5)


# -- the default under a real terminal ------------------------------------------------------

def _run(argv: list[str], *, terminal: bool) -> str:
    """stderr of `rewardlab ARGV` in a subprocess, with stderr a pseudo-terminal or a pipe."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")}
    env.update(PYTHONPATH=str(SRC), TERM="xterm-256color")
    cmd = [sys.executable, "-c", "import sys; from rewardlab.cli.main import main; sys.exit(main(sys.argv[1:]))", *argv]
    if not terminal:
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300, check=True)
        return done.stderr.decode()
    leader, follower = pty.openpty()
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=follower) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=300) == 0, b"".join(chunks).decode(errors="replace")
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("command", ["advantages", "eval", "audit", "score"])
def test_bar_is_on_by_default_on_a_terminal_and_off_on_a_pipe(tmp_path, command):
    argv = _commands(_files(tmp_path), tmp_path)[command]
    on_terminal = ANSI.sub("", _run(argv, terminal=True))
    done, total = _final_count(on_terminal)
    assert done == total and total == {"advantages": 11, "eval": 14, "audit": total, "score": 5}[command]
    assert "ETA" in on_terminal
    on_pipe = _run(argv, terminal=False)
    assert not BAR.search(on_pipe) and "ETA" not in on_pipe


def test_demo_shows_its_bar_when_asked(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path / "scored.jsonl"), "-w", "0", "--progress"]) == 0
    done, total = _final_count(capsys.readouterr().err)
    assert done == total == len((tmp_path / "scored.jsonl").read_text().splitlines())


REAL = Path("/work/shared/data/qwen25-math-cot-100.jsonl")


def test_train_pairs_bar_counts_every_prompt_of_a_real_file(tmp_path, capsys):
    if not REAL.exists():
        pytest.skip(f"real data not found at {REAL}; see /work/shared/data/SOURCES.md")
    argv = ["train", "pairs", str(REAL), "-o", str(tmp_path / "prefs.jsonl")]
    assert main([*argv, "--progress"]) == 0
    assert _final_count(capsys.readouterr().err) == (100, 100)  # 100 MATH problems
    assert main([*argv, "--no-progress"]) == 0
    assert not BAR.search(capsys.readouterr().err)

