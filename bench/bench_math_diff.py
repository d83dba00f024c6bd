"""Differential harness: rewardlab's `math.answer` against Math-Verify over real labelled model answers.

Sources: the graders' labelled suites committed under tests/verify/math (`suite:*`), and real
model answers. Every real-answer source is public model output with a gold answer and a correctness label, read at run time
from where it already is on this machine (nothing is copied into the repository); a source that is
absent is skipped with a note:

- `qwen25-math` — ../shared/data/qwen25-math-cot-100.jsonl: 100 MATH test problems x 8 Qwen2.5-Math
  responses, labelled by the Qwen2.5-Math grader (MIT). The 9 labels that
  tests/verify/math/test_math_real_data.py shows to be wrong are used corrected.
- `gsm8k-openai:<model>` — openai/grade-school-math `grade_school_math/data/example_model_solutions.jsonl`
  (MIT): 1,319 GSM8K test problems x 4 GPT-3 solutions (6B/175B, fine-tuned / verifier-ranked), each
  labelled `is_correct` by OpenAI; the gold is the `A: <n>` line of `ground_truth`.
- `tora-gsm8k:<model>` — microsoft/ToRA `src/outputs/llm-agents/*/gsm8k/*.jsonl` (MIT): 1,319
  tool-integrated ToRA responses (program, its output, a boxed answer) per model. These rows carry
  no label; the label is ToRA's own verdict rebuilt from its stored `pred`: the extracted
  prediction equals `gt` as a number (what its reported mean score counts).

- `mathvista:<model>` — lupantech/MathVista `results/*/output_*.json` (CC BY-SA 4.0): the free-form
  integer and decimal questions of testmini (458 per file) answered in prose by each model, labelled
  `true_false` by MathVista's evaluation (a GPT-4 extraction of the answer, then exact match).
  Many of these labels read number words ("There are two bars") that neither tool reads; files
  whose responses are programs (`*_code*`) are left out, their label being the program's output.

The public repositories are read from snapshots under /work/.mirror (the `fetch` tool brings
them) or from a directory given with `--mirror`, by `git show`, never checked out.

With `--peers`, verl's graders (hendrycks `is_equiv`, prime_math, math_dapo; bench_math_peers.py
says how each is called), Qwen2.5-Math's grader and lm-eval's minerva_math utilities (read from
their snapshots at run time, each case under a time limit; bench/math_mirror_peers.py says how,
and which side packages they need) get a table of their own, on the raw responses.

Both verifiers run with their default calls: rewardlab `MathAnswer().score(Sample(response, reference))`
(score 1.0 = accepted) and Math-Verify `verify(parse("$" + gold + "$"), parse(response))`.

Prints per source: n, agreement with the labels, wrong accepts (label false, accepted), wrong
rejects (label true, rejected) for each tool, and how often the two disagree; then up to
`--examples` disagreements per source (which tool the label sides with, gold, each extraction).
`--out FILE` writes every disagreement (and every case where rewardlab differs from the label
although Math-Verify does too) as JSON lines for adjudication.

Run (the real numbers, a few minutes on a quiet core):
    PYTHONPATH=src .venv/bin/python bench/bench_math_diff.py
A quick look (first 50 rows of every source):
    PYTHONPATH=src .venv/bin/python bench/bench_math_diff.py --limit 50 --examples 3
Speed on the same cases (each tool in a fresh process per round, alternating, one core each; a
cold pass then a warm pass over the same inputs; rewardlab's worker start and Math-Verify's
import are printed apart, not timed in the passes):
    PYTHONPATH=src .venv/bin/python bench/bench_math_diff.py --speed --repeat 3
    PYTHONPATH=src .venv/bin/python bench/bench_math_diff.py --speed --only suite   (graders' cases)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
MIRROR = Path("/work/.mirror")
QWEN = "qwen25-math-cot-100.jsonl"
# Labels of the Qwen2.5-Math file shown wrong in tests/verify/math/test_math_real_data.py
# ((row idx, response index) -> the right label), used corrected here.
QWEN_CORRECTED = {**{(3, k): True for k in range(8)}, (72, 7): True}
GSM8K_REPO, GSM8K_PATH = (
    "openai+grade-school-math",
    "grade_school_math/data/example_model_solutions.jsonl",
)
GSM8K_MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
EXTERNAL = ROOT / "tests" / "verify" / "math" / "external" / "cases.jsonl"
GRADERS = ROOT / "tests" / "verify" / "math" / "test_math_grader_suites.py"
GRADER_TABLES = (
    "EXPRESSION_EQUALS_VALUE",
    "PROSE_AFTER_ANSWER",
    "THINK_BLOCK",
    "CHAT_TOKENS",
    "IMAGINARY_UNIT",
    "OPTIONS_LISTS_WORDS_UNITS",
)
MATHVISTA_REPO = "lupantech+MathVista"
# MathVista labels adjudicated by hand ((file name, pid) -> (right label, why)).
MATHVISTA_CORRECTED = {
    ("claude_2shot_solution", "488"): (
        True,
        "'Therefore, the number of objects left is 2.' answers 2; the label's extraction read the "
        "new 'Question: ...' the model ran on into",
    ),
    ("claude_2shot_solution_use_ocr", "552"): (
        True,
        "'So the answer is: 4' answers 4; the label's extraction read the new 'Question: ...' "
        "the model ran on into",
    ),
    ("gpt4", "1"): (
        True,
        "'... compressed by approximately 0.0115 meters, or 1.2 cm.' answers 1.2 (cm); the label's extraction took 0.0115",
    ),
}
TORA_REPO = "microsoft+ToRA"
TORA_MODELS = ("tora-70b-v1.0", "tora-code-34b-v1.0")
TORA_PATH = "src/outputs/llm-agents/{model}/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl"


@dataclass(frozen=True)
class Case:
    source: str
    key: str  # where the row is in its source
    gold: str
    response: str
    label: bool
    mv_gold: str | None = None  # the gold as Math-Verify is given it, when not `$gold$`


def _git_show(repo_dir: Path, path: str) -> str | None:
    git_dir = repo_dir / "repo"
    if not git_dir.is_dir():
        return None
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else None


def qwen_cases(shared: Path) -> Iterator[Case]:
    path = shared / QWEN
    if not path.is_file():
        return
    for line in path.read_text().splitlines():
        row = json.loads(line)
        for k, (response, label) in enumerate(zip(row["code"], row["score"], strict=True)):
            label = QWEN_CORRECTED.get((row["idx"], k), bool(label))
            yield Case("qwen25-math", f"{row['idx']}/{k}", row["gt"], response, label)


def _final_line_value(text: str) -> str:
    """The answer of a GSM8K-format solution: what follows the last `A:` (or `####`) marker."""
    for marker in ("\nA:", "####"):
        if marker in text:
            return text.rsplit(marker, 1)[1].strip()
    return ""


def gsm8k_cases(mirror: Path) -> Iterator[Case]:
    text = _git_show(mirror / GSM8K_REPO, GSM8K_PATH)
    if text is None:
        return
    for i, line in enumerate(text.splitlines()):
        row = json.loads(line)
        gold = _final_line_value(row["ground_truth"]).replace(",", "")
        for model in GSM8K_MODELS:
            entry = row[model]
            yield Case(
                f"gsm8k-openai:{model}", str(i), gold, entry["solution"], bool(entry["is_correct"])
            )


def _same_number(pred: str, gold: str) -> bool:
    try:
        return Fraction(pred.replace(",", "")) == Fraction(gold.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return pred.strip() == gold.strip()


def tora_cases(mirror: Path) -> Iterator[Case]:
    for model in TORA_MODELS:
        text = _git_show(mirror / TORA_REPO, TORA_PATH.format(model=model))
        if text is None:
            continue
        for line in text.splitlines():
            row = json.loads(line)
            pred = row["pred"][0] if row["pred"] else ""
            yield Case(
                f"tora-gsm8k:{model}",
                str(row["idx"]),
                row["gt"],
                row["code"][0],
                _same_number(str(pred), row["gt"]),
            )


def suite_cases() -> Iterator[Case]:
    """The graders' own labelled tests committed in tests/verify/math: Math-Verify 0.9.0's
    (a disputed label counts corrected) and the failure-class tables built from other graders'
    suites (tests/verify/math/test_math_grader_suites.py)."""
    for i, line in enumerate(EXTERNAL.read_text().splitlines()):
        row = json.loads(line)
        label = bool(row["expected"]) != bool(row.get("disputed"))
        yield Case(
            "suite:math-verify",
            str(i),
            row["reference"],
            row["candidate"],
            label,
            mv_gold=row["reference"],
        )
    spec = importlib.util.spec_from_file_location("grader_suites", GRADERS)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    for name in GRADER_TABLES:
        for i, (response, ref, label) in enumerate(getattr(module, name)):
            yield Case("suite:graders", f"{name.lower()}/{i}", ref, response, bool(label))


def _git_files(repo_dir: Path, under: str) -> list[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(repo_dir / "repo"), "ls-tree", "-r", "--name-only", "HEAD", under],
        capture_output=True,
        text=True,
    )
    return done.stdout.split() if done.returncode == 0 else []


def mathvista_cases(mirror: Path) -> Iterator[Case]:
    """MathVista's free-form (integer and decimal) answers, every model output file present."""
    for path in _git_files(mirror / MATHVISTA_REPO, "results"):
        name = Path(path).stem.removeprefix("output_")
        if (
            not path.endswith(".json")
            or not Path(path).name.startswith("output_")
            or "random" in path
            or "template" in path
        ):
            continue
        if "_code" in name:
            continue  # program responses: the label is the program's output, which is not in the text
        text = _git_show(mirror / MATHVISTA_REPO, path)
        if text is None:
            continue  # files of 4 MiB and more are not in the snapshot
        for pid, row in json.loads(text).items():
            if row.get("question_type") != "free_form" or row.get("answer_type") not in (
                "integer",
                "float",
            ):
                continue
            label = MATHVISTA_CORRECTED.get(
                (name, pid), (str(row.get("true_false")) == "True", "")
            )[0]
            yield Case(
                f"mathvista:{name}", pid, str(row["answer"]), str(row.get("response") or ""), label
            )


def all_cases(shared: Path, mirror: Path, limit: int | None) -> tuple[list[Case], list[str]]:
    cases: list[Case] = []
    missing = []
    loaders: list[tuple[str, Callable[[], Iterator[Case]]]] = [
        (str(EXTERNAL), suite_cases),
        (str(shared / QWEN), lambda: qwen_cases(shared)),
        (f"{mirror / GSM8K_REPO} ({GSM8K_PATH})", lambda: gsm8k_cases(mirror)),
        (f"{mirror / TORA_REPO} (gsm8k outputs)", lambda: tora_cases(mirror)),
        (f"{mirror / MATHVISTA_REPO} (results)", lambda: mathvista_cases(mirror)),
    ]
    for where, load in loaders:
        got = list(load())
        if not got:
            missing.append(where)
        per_source: dict[str, int] = {}
        for case in got:
            per_source[case.source] = per_source.get(case.source, 0) + 1
            if limit is None or per_source[case.source] <= limit:
                cases.append(case)
    return cases, missing


Verdict = tuple[bool, str]  # (accepted, what the tool read as the answer)


def rewardlab_verdicts(cases: list[Case]) -> list[Verdict]:
    from rewardlab.core import Sample
    from rewardlab.verify.math import MathAnswer, extract_answer

    reward = MathAnswer()
    out = []
    for case in cases:
        result = reward.score(Sample(prompt="", response=case.response, reference=case.gold))
        out.append((result.score == 1.0, str(extract_answer(case.response).answer)))
    return out


def math_verify_verdicts(cases: list[Case]) -> list[Verdict]:
    from math_verify import parse, verify

    out = []
    for case in cases:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            pred = parse(case.response)
            ok = bool(verify(parse(case.mv_gold or "$" + case.gold + "$"), pred))
        out.append((ok, str(pred[-1]) if pred else ""))
    return out


def peer_verdicts(cases: list[Case]) -> dict[str, list[bool]]:
    """verl's graders (hendrycks `is_equiv`, prime_math, math_dapo) through their own
    `compute_score`, on the raw response, as bench/bench_math_peers.py calls them; empty when
    verl is not installed."""
    spec = importlib.util.spec_from_file_location(
        "bench_math_peers", ROOT / "bench" / "bench_math_peers.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    try:
        graders = module.peers()
    except ImportError:
        print("skipped: verl's graders (verl is not installed)", file=sys.stderr)
        return {}
    out: dict[str, list[bool]] = {}
    for name, grade in graders.items():
        verdicts = []
        for case in cases:
            try:
                verdicts.append(bool(grade(case.gold, case.response)))
            except Exception:  # a peer's own crash is its wrong answer, not the harness's
                verdicts.append(False)
        out[name] = verdicts
    return out


def _mirror_peers() -> Any:
    spec = importlib.util.spec_from_file_location(
        "math_mirror_peers", ROOT / "bench" / "math_mirror_peers.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def peer_table(cases: list[Case], peers: dict[str, list[bool]]) -> None:
    """Per source: each peer's agreement with the labels and its wrong accepts."""
    groups: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(case.source, []).append(i)
    groups["all"] = list(range(len(cases)))
    print(
        f"{'source':34} {'n':>5}"
        + "".join(f"  {name + ' agree':>18} {'w.acc':>5}" for name in peers)
    )
    for name, idx in groups.items():
        line = f"{name:34} {len(idx):>5}"
        for got in peers.values():
            agree = sum(got[i] == cases[i].label for i in idx)
            wrong = sum(got[i] and not cases[i].label for i in idx)
            line += f"  {f'{agree} ({agree / len(idx):.3f})':>18} {wrong:>5}"
        print(line)


def table(cases: list[Case], ours: list[Verdict], theirs: list[Verdict]) -> list[dict[str, object]]:
    """One row per source (and `all`): n, agreement, wrong accepts and rejects per tool, disagreements."""
    groups: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(case.source, []).append(i)
    groups["all"] = list(range(len(cases)))
    rows = []
    for name, idx in groups.items():
        row: dict[str, object] = {"source": name, "n": len(idx)}
        for tool, got in (("rewardlab", ours), ("math-verify", theirs)):
            row[f"{tool} agree"] = sum(got[i][0] == cases[i].label for i in idx)
            row[f"{tool} wrong accepts"] = sum(got[i][0] and not cases[i].label for i in idx)
            row[f"{tool} wrong rejects"] = sum(not got[i][0] and cases[i].label for i in idx)
        row["disagree"] = sum(ours[i][0] != theirs[i][0] for i in idx)
        rows.append(row)
    return rows


def disagreements(
    cases: list[Case], ours: list[Verdict], theirs: list[Verdict]
) -> list[dict[str, object]]:
    return [
        {
            "source": case.source,
            "key": case.key,
            "label": case.label,
            "label sides with": _sides(ours[i][0], theirs[i][0], case.label),
            "gold": case.gold,
            "rewardlab": {"accepted": ours[i][0], "extracted": ours[i][1]},
            "math-verify": {"accepted": theirs[i][0], "parsed": theirs[i][1]},
            "response tail": case.response[-300:],
        }
        for i, case in enumerate(cases)
        if ours[i][0] != theirs[i][0] or ours[i][0] != case.label
    ]


def _sides(ours: bool, theirs: bool, label: bool) -> str:
    if ours == theirs:
        return "neither"  # both tools differ from the label
    return "rewardlab" if ours == label else "math-verify"


def _print_table(rows: list[dict[str, object]]) -> None:
    head = f"{'source':34} {'n':>5}  {'rewardlab agree':>15} {'w.acc':>5} {'w.rej':>5}  {'math-verify agree':>17} {'w.acc':>5} {'w.rej':>5}  {'differ':>6}"
    print(head)
    for row in rows:
        n = int(row["n"])  # type: ignore[call-overload]
        line = f"{row['source']!s:34} {n:>5}"
        for tool in ("rewardlab", "math-verify"):
            agree = int(row[f"{tool} agree"])  # type: ignore[call-overload]
            width = 15 if tool == "rewardlab" else 17
            cell = f"{agree} ({agree / n:.3f})" if n else "-"
            line += f"  {cell:>{width}} {row[f'{tool} wrong accepts']!s:>5} {row[f'{tool} wrong rejects']!s:>5}"
        print(line + f"  {row['disagree']!s:>6}")


def _accept_fn(tool: str) -> Callable[[Case], bool]:
    if tool == "rewardlab":
        from rewardlab.core import Sample
        from rewardlab.verify.math import MathAnswer

        reward = MathAnswer()
        return lambda case: bool(
            reward.score(Sample(prompt="", response=case.response, reference=case.gold)).score
            == 1.0
        )
    from math_verify import parse, verify

    def accept(case: Case) -> bool:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return bool(verify(parse(case.mv_gold or "$" + case.gold + "$"), parse(case.response)))

    return accept


def speed_child(tool: str, cases: list[Case]) -> None:
    """In a fresh process: start the tool (rewardlab's sympy worker; Math-Verify's import), each
    parsing the same warm-up LaTeX once (rewardlab's worker does at start), then score every
    case twice: the first pass is cold (empty caches, ANTLR's parser not yet
    trained), the second warm (rewardlab's verdict cache full). Prints seconds as JSON."""
    started = time.perf_counter()
    accept = _accept_fn(tool)
    if tool == "rewardlab":
        from rewardlab.verify.math import warm_up

        warm_up()  # the worker's start and its parser warm-up, paid before timing
    else:
        from math_verify import parse

        from rewardlab.verify.math.symbolic import _WARM_UP

        for latex in _WARM_UP:  # the same warm-up of the same LaTeX parser, for a fair start
            parse("$" + latex + "$")
    start = time.perf_counter() - started
    passes = []
    for _ in range(2):
        began = time.perf_counter()
        for case in cases:
            accept(case)
        passes.append(time.perf_counter() - began)
    print(json.dumps({"start": start, "cold": passes[0], "warm": passes[1]}))


def speed_main(argv: list[str], repeat: int, n: int) -> None:
    """Each tool in its own fresh subprocess per round, alternating, one core each (one sympy
    worker); best of `repeat` rounds."""
    runs: dict[str, list[dict[str, float]]] = {"rewardlab": [], "math-verify": []}
    env = {**os.environ, "REWARDLAB_MATH_WORKERS": "1"}
    for _ in range(repeat):
        for tool in runs:
            command = [sys.executable, __file__, *argv, "--speed-child", tool]
            done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
            runs[tool].append(json.loads(done.stdout.strip().splitlines()[-1]))
    best = {
        tool: {k: min(run[k] for run in runs[tool]) for k in ("start", "cold", "warm")}
        for tool in runs
    }
    for tool, b in best.items():
        print(
            f"{tool:12} start {b['start']:.2f} s  cold {n / b['cold']:8.0f} cases/s  warm {n / b['warm']:8.0f} cases/s"
        )
    for phase in ("cold", "warm"):
        ratio = best["math-verify"][phase] / best["rewardlab"][phase]
        print(
            f"{phase}: rewardlab / math-verify throughput {ratio:.1f}x ({n} cases, best of {repeat})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared data directory")
    parser.add_argument(
        "--mirror",
        type=Path,
        default=MIRROR,
        help="where the fetched snapshots are (owner+name/repo)",
    )
    parser.add_argument("--limit", type=int, default=None, help="at most this many rows per source")
    parser.add_argument("--only", default=None, help="only sources whose name contains this")
    parser.add_argument("--examples", type=int, default=5, help="disagreements printed per source")
    parser.add_argument(
        "--out", type=Path, default=None, help="write every disagreement here (JSON lines)"
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="time both tools on the cases instead: cold and warm passes, fresh process each",
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds of --speed (best is kept)")
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also verl's graders (hendrycks, prime_math, math_dapo), Qwen2.5-Math's and lm-eval's"
        " minerva_math: agreement and wrong accepts",
    )
    parser.add_argument(
        "--speed-child", choices=("rewardlab", "math-verify"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()

    cases, missing = all_cases(args.shared, args.mirror, args.limit)
    if args.only:
        cases = [case for case in cases if args.only in case.source]
    if args.speed_child:
        speed_child(args.speed_child, cases)
        return
    for where in missing:
        print(f"skipped (absent): {where}", file=sys.stderr)
    if not cases:
        sys.exit("no source found: nothing to compare")
    if args.speed:
        argv = [a for a in sys.argv[1:] if a != "--speed"]
        speed_main(argv, args.repeat, len(cases))
        return
    with tempfile.TemporaryDirectory() as work:
        # the snapshot peers run in child processes meanwhile
        children = (
            _mirror_peers().start(args.mirror, [(c.gold, c.response) for c in cases], Path(work))
            if args.peers
            else {}
        )
        ours = rewardlab_verdicts(cases)
        theirs = math_verify_verdicts(cases)
        _print_table(table(cases, ours, theirs))
        if args.peers:
            peers = peer_verdicts(cases)
            for name, verdicts, note in _mirror_peers().collect(children):
                print(note, file=sys.stderr)
                if verdicts is not None:
                    peers[name] = verdicts
            if peers:
                peer_table(cases, peers)
    found = disagreements(cases, ours, theirs)
    shown: dict[str, int] = {}
    for item in found:
        source = str(item["source"])
        shown[source] = shown.get(source, 0) + 1
        if shown[source] <= args.examples:
            print(json.dumps(item, ensure_ascii=False))
    if args.out is not None:
        args.out.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in found))
        print(f"{len(found)} disagreements written to {args.out}")


if __name__ == "__main__":
    main()
