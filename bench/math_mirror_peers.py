"""Peers loaded from fetched snapshots at run time, for bench/bench_math_diff.py `--peers`.

- `qwen25math` — Qwen2.5-Math's `evaluation/` (grader.py `math_equal`, parser.py `extract_answer`
  with data name "math", the gold through its `strip_string`), as its evaluate.py grades MATH;
- `minerva` — lm-eval's `lm_eval/tasks/minerva_math/utils.py`: `get_unnormalized_answer`
  ("Final Answer: The final answer is ... I hope it is correct."), `normalize_final_answer`
  on both sides, then its `is_equiv` (sympy `parse_latex` and `simplify`), as its exact_match does.

Nothing is copied into the repository: the Python files of Qwen's `evaluation/` are written from the
snapshot (`git show`) into a temporary directory, lm-eval's file is read with `git show` and executed as
a module. Both need antlr4-python3-runtime 4.11 (sympy's LaTeX parser and Qwen's bundled
latex2sympy are generated for it; the project's environment has 4.9) and Qwen's parser needs
word2number, so they run in a child process with a side directory of those first on its path:
    .venv/bin/python -m pip install --target /tmp/mathpeer-deps antlr4-python3-runtime==4.11.1 word2number
A peer whose snapshot or import is missing is skipped with a note. Each case runs under a
SIGALRM time limit (some inputs make sympy run for minutes); a case over it counts as rejected.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

QWEN_REPO = "QwenLM+Qwen2.5-Math"
LM_EVAL_REPO, MINERVA_PATH = (
    "EleutherAI+lm-evaluation-harness",
    "lm_eval/tasks/minerva_math/utils.py",
)
DEPS = Path("/tmp/mathpeer-deps")
CASE_SECONDS = 3

Grader = Callable[[str, str], bool]  # (gold, response) -> accepted


class CaseTimeout(Exception):
    pass


def _git(mirror: Path, repo: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "--git-dir", str(mirror / repo / "repo"), *args], capture_output=True
    )


def qwen_grader(mirror: Path, work: Path) -> Grader:
    listed = _git(mirror, QWEN_REPO, "ls-tree", "-r", "--name-only", "HEAD", "evaluation")
    sources = [p for p in listed.stdout.decode().split() if p.endswith(".py")]
    if listed.returncode != 0 or "evaluation/grader.py" not in sources:
        raise FileNotFoundError(f"{mirror / QWEN_REPO}: no evaluation/grader.py in the snapshot")
    for path in sources:  # the Python sources only: the snapshot lacks its large data files
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(mirror, QWEN_REPO, "show", f"HEAD:{path}").stdout)
    sys.path[:0] = [str(work / "evaluation"), str(work / "evaluation" / "latex2sympy")]
    from grader import math_equal  # type: ignore[import-not-found]
    from parser import extract_answer, strip_string  # type: ignore[import-not-found]

    def grade(gold: str, response: str) -> bool:
        pred = extract_answer(response, "math")
        return bool(math_equal(pred, strip_string(gold), timeout=False))

    return grade


def minerva_grader(mirror: Path) -> Grader:
    done = _git(mirror, LM_EVAL_REPO, "show", f"HEAD:{MINERVA_PATH}")
    if done.returncode != 0:
        raise FileNotFoundError(f"{mirror / LM_EVAL_REPO}: no {MINERVA_PATH} in the snapshot")
    module = types.ModuleType("minerva_math_utils")
    exec(compile(done.stdout, MINERVA_PATH, "exec"), module.__dict__)
    norm, unnormalized, equiv = (
        module.normalize_final_answer,
        module.get_unnormalized_answer,
        module.is_equiv,
    )

    def grade(gold: str, response: str) -> bool:
        answer = unnormalized(response)
        if answer == "[invalidanswer]":
            # no "Final Answer: The final answer is" line: its exact_match is 0; skipping the
            # two sympy parses of the marker keeps the run to minutes
            return False
        return bool(equiv(norm(answer), norm(gold)))

    return grade


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout


def _verdicts(grade: Grader, pairs: list[list[str]]) -> tuple[list[bool], int]:
    out, slow = [], 0
    for gold, response in pairs:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(CASE_SECONDS)
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                out.append(bool(grade(gold, response)))
        except CaseTimeout:
            out.append(False)
            slow += 1
        except Exception:  # a peer's own crash is its wrong answer, not the harness's
            out.append(False)
        finally:
            signal.alarm(0)
    return out, slow


def child(name: str, mirror: Path, cases: Path) -> None:
    """Grade the [gold, response] pairs in `cases`; print {"verdicts", "timeouts"} or {"skipped"}."""
    pairs = json.loads(cases.read_text())
    with tempfile.TemporaryDirectory() as work:
        try:
            grade = (
                qwen_grader(mirror, Path(work)) if name == "qwen25math" else minerva_grader(mirror)
            )
        except (ImportError, FileNotFoundError, AssertionError) as exc:
            print(json.dumps({"skipped": f"{type(exc).__name__}: {exc}"[:300]}))
            return
        verdicts, slow = _verdicts(grade, pairs)
    print(json.dumps({"verdicts": verdicts, "timeouts": slow}))


def start(
    mirror: Path, pairs: list[tuple[str, str]], work: Path, deps: Path = DEPS
) -> dict[str, subprocess.Popen[str]]:
    """Start one child per peer now, so they run while the caller scores the other tools."""
    cases = work / "pairs.json"
    cases.write_text(json.dumps(pairs))
    path = os.pathsep.join(p for p in (str(deps), os.environ.get("PYTHONPATH", "")) if p)
    return {
        name: subprocess.Popen(
            [sys.executable, __file__, name, str(mirror), str(cases)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        for name in ("qwen25math", "minerva")
    }


def collect(
    procs: dict[str, subprocess.Popen[str]],
) -> Iterator[tuple[str, list[bool] | None, str]]:
    """`(name, verdicts or None, note)` per peer, waiting for each child."""
    for name, proc in procs.items():
        out, err = proc.communicate()
        last = out.strip().splitlines()[-1:]
        if proc.returncode != 0 or not last:
            yield name, None, f"{name} failed: {err.strip().splitlines()[-1:]}"
            continue
        got = json.loads(last[0])
        if "skipped" in got:
            yield name, None, f"{name} skipped: {got['skipped']}"
        else:
            yield name, got["verdicts"], f"{name}: {got['timeouts']} cases over {CASE_SECONDS} s"


if __name__ == "__main__":
    child(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
