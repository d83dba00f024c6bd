"""Reading candidate files for `rewardlab eval` and `rewardlab train pairs`, and writing picks:
the column-at-a-time paths against the row-at-a-time ones they replaced and a plain script.

One generated JSONL file (`bench_select_file.write_file`: Qwen2.5-Math format, 100,000
problems x 10 candidates by default) is read three ways for each task:

- eval rows: `read_candidates(path)` (rows checked a column at a time by
  `runner.candidate_batch`, one `Sample` per candidate) against the row-at-a-time reading it
  replaced (`read_candidate_rows`, every row through `parse_candidate_row`, then the samples
  built row by row), and against the plain script a user writes: `json.loads` per line, one
  `Sample` per response, nothing checked;
- training pairs: the file's rows (`read_objects`) through `graded_pairs`, as `rewardlab train
  pairs` reads them, against its row-at-a-time form and a plain loop of `json.loads` per line
  (each right response paired with each wrong one, nothing checked);
- writing the pairs: `write_pairs` against the `json.dumps` loop per pair that `rewardlab train
  pairs` had (which is also the script a user writes);
- picks: `write_picks` of a best-of-n selection against the row-at-a-time writer it replaced
  and a plain `json.dumps` loop over the problems.

The old and new paths' outputs are checked to be identical (same samples, same pairs, the same
bytes) and the plain scripts' to agree on what they share, before any time is printed. Times
are CPU seconds of this process (`time.process_time`), best of `--rounds` alternating rounds;
the ratio is the other side's time over the new path's. Run:

    .venv/bin/python bench/bench_eval_rows.py                   # 100,000 problems
    .venv/bin/python bench/bench_eval_rows.py --problems 5000   # smoke run
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from bench_select_file import write_file

from rewardlab._version import __version__
from rewardlab.core import Sample
from rewardlab.core.sample import content_hash, text_of
from rewardlab.evaluate.datasets import CandidateSet, read_candidate_rows, read_candidates
from rewardlab.models.data import PreferencePair, graded_pairs, write_pairs
from rewardlab.runner.candidate_rows import CandidateColumns, file_columns, parse_candidate_row
from rewardlab.runner.io import RowWriter, parse_each, read_objects
from rewardlab.select import best_of_n, load_candidates
from rewardlab.select.pick import _lines, pick_config, write_picks

# --- the row-at-a-time paths, as they were before the column-at-a-time ones replaced them ---


def old_read_candidates(path: Path) -> CandidateSet:
    rows = read_candidate_rows(path, CandidateColumns(), required=("responses",))
    samples, problem = [], []
    for index, row in enumerate(rows):
        for j, text in enumerate(row.responses or ()):
            label = {} if row.labels is None else {"label": row.labels[j]}
            samples.append(Sample(prompt=row.prompt, response=text, reference=row.reference,
                                  meta={**row.meta, "problem": index, "candidate": j, **label}, group=str(index)))  # fmt: skip
            problem.append(index)

    def joined(values: list[Any]) -> list[Any] | None:
        return None if values[0] is None else [v for part in values for v in part]

    return CandidateSet(samples, problem, joined([r.labels for r in rows]), joined([r.scores for r in rows]),
                        joined([r.answers for r in rows]), source=str(path))  # fmt: skip


def old_graded_pairs(rows: list[dict[str, Any]], source: str) -> list[PreferencePair]:
    numbered = list(enumerate(rows, start=1))
    columns = CandidateColumns(prompt="question", responses="code", labels="score", reference=None, scores=None, answers=None)
    present = file_columns(numbered, columns, source, required=("responses", "labels"))
    checked = parse_each(numbered, lambda line, row: (row, parse_candidate_row(line, row, columns, present, source)), None)[0]
    pairs = []
    for row, c in checked:
        prompt, labels, responses = text_of(row["question"]), c.labels or [], c.responses or []
        group = str(row.get("idx", prompt))
        right = [r for r, ok in zip(responses, labels, strict=True) if ok is True]
        wrong = [r for r, ok in zip(responses, labels, strict=True) if ok is False]
        pairs += [PreferencePair(prompt, a, b, group=group) for a in right for b in wrong]
    return pairs


def old_write_picks(candidates: Any, selection: Any, method: str, output: Path) -> Path:
    stamps = {"rewardlab_version": __version__, "spec_hash": content_hash(pick_config(method))}
    credit = selection.credit(candidates.correct) if candidates.correct is not None else None
    rows = []
    for p, line in enumerate(_lines(candidates)):
        j = int(selection.chosen[p])
        row: dict[str, object] = {"problem": p, "line": line, "method": method, "status": "ok", "chosen": None if j < 0 else j}
        if candidates.answers is not None:
            row["answer"] = None if j < 0 else candidates.answers[p, j]
        if candidates.scores is not None:
            row["score"] = None if j < 0 or np.isnan(candidates.scores[p, j]) else float(candidates.scores[p, j])
        if credit is not None:
            row["credit"] = float(credit[p])
        rows.append((line, row))
    with RowWriter(output) as writer:
        for _, row in sorted(rows, key=lambda pair: pair[0]):
            writer.write({**row, **stamps})
    return output


# --- the plain scripts a user writes (nothing checked: a bad row would stop them) ---


def plain_samples(path: Path) -> list[Sample]:
    samples = []
    with path.open("rb") as f:
        for index, line in enumerate(f):
            row = json.loads(line)
            for j, text in enumerate(row["code"]):
                samples.append(Sample(prompt=row["question"], response=text, reference=row["gt"],
                                      meta={"problem": index, "candidate": j, "label": row["score"][j]}, group=str(index)))  # fmt: skip
    return samples


def plain_pairs(path: Path) -> list[PreferencePair]:
    pairs = []
    with path.open("rb") as f:
        for line in f:
            row = json.loads(line)
            right = [r for r, ok in zip(row["code"], row["score"], strict=True) if ok]
            wrong = [r for r, ok in zip(row["code"], row["score"], strict=True) if not ok]
            pairs += [PreferencePair(row["question"], a, b, group=str(row["idx"])) for a in right for b in wrong]
    return pairs


def plain_picks(candidates: Any, selection: Any, output: Path) -> Path:
    credit = selection.credit(candidates.correct)
    with output.open("w", encoding="utf-8") as f:
        for p in range(candidates.n_problems):
            j = int(selection.chosen[p])
            row = {"problem": p, "chosen": j, "answer": candidates.answers[p, j], "score": float(candidates.scores[p, j]),
                   "credit": float(credit[p])}  # fmt: skip
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return output


# --- agreement checks, then times ---


def same_set(a: CandidateSet, b: CandidateSet) -> None:
    key = [(s.prompt, s.response, s.reference, dict(s.meta), s.group) for s in a.samples]
    assert key == [(s.prompt, s.response, s.reference, dict(s.meta), s.group) for s in b.samples], "samples differ"
    assert a.problem == b.problem and a.labels == b.labels and a.answers == b.answers
    assert np.array_equal(np.asarray(a.scores), np.asarray(b.scores), equal_nan=True)


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def race(title: str, sides: dict[str, Callable[[], Any]], rounds: int, check: Callable[[dict[str, Any]], None]) -> None:
    """Best CPU time of each side over alternating rounds; the first side is the new path."""
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(rounds):
        results: dict[str, Any] = {}
        for name, fn in sides.items():
            took, results[name] = cpu(fn)
            best[name] = min(best[name], took)
        check(results)
        del results
        gc.collect()
    new = next(iter(best.values()))
    print(f"\n{title}\n{'side':44s} {'cpu s':>7s} {'x new':>7s}")
    for name, took in best.items():
        print(f"{name:44s} {took:7.2f} {took / new:6.2f}x")


def race_pair_writing(pairs: list[PreferencePair], folder: Path, rounds: int) -> None:
    written = {side: folder / f"pairs_{side}.jsonl" for side in ("new", "old")}

    def old_write_pairs() -> Path:  # the loop `rewardlab train pairs` had: also the plain script
        with written["old"].open("w", encoding="utf-8") as handle:
            for p in pairs:
                handle.write(json.dumps({"prompt": p.prompt, "chosen": p.chosen, "rejected": p.rejected, "group": p.group},
                                        ensure_ascii=False) + "\n")  # fmt: skip
        return written["old"]

    def check(r: dict[str, Any]) -> None:
        assert written["new"].read_bytes() == written["old"].read_bytes(), "pair files differ"

    race(f"writing {len(pairs):,} pairs as JSONL, as `rewardlab train pairs`", {
        "new: write_pairs": lambda: write_pairs(pairs, written["new"]),
        "old = plain script: json.dumps per pair": old_write_pairs,
    }, rounds, check)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "candidates.jsonl"
        write_file(path, args.problems, args.n)
        print(f"{args.problems:,} problems x {args.n} candidates, {path.stat().st_size / 1e6:.0f} MB of JSONL")

        def check_sets(r: dict[str, Any]) -> None:
            new, old, plain = r.values()
            same_set(new, old)
            assert [(s.response, s.meta["label"]) for s in plain] == [(s.response, s.meta["label"]) for s in new.samples]

        race("eval rows: a Sample per candidate", {
            "new: read_candidates": lambda: read_candidates(path),
            "old: read_candidate_rows + samples by row": lambda: old_read_candidates(path),
            "plain script, json.loads + Sample": lambda: plain_samples(path),
        }, args.rounds, check_sets)  # fmt: skip

        def file_rows() -> list[dict[str, Any]]:  # as `rewardlab train pairs` reads them
            return [row for _, row in read_objects(path)]

        def check_pairs(r: dict[str, Any]) -> None:
            new, old, plain = r.values()
            assert new == old, "pairs differ"
            assert [(p.chosen, p.rejected, p.group) for p in plain] == [(p.chosen, p.rejected, p.group) for p in new]

        race("training pairs: read_objects + graded_pairs, as `rewardlab train pairs`", {
            "new: graded_pairs": lambda: graded_pairs(file_rows(), source=str(path)),
            "old: graded_pairs by row": lambda: old_graded_pairs(file_rows(), str(path)),
            "plain script, json.loads + pairs": lambda: plain_pairs(path),
        }, args.rounds, check_pairs)  # fmt: skip

        race_pair_writing(graded_pairs(file_rows()), Path(tmp), args.rounds)

        candidates = load_candidates(path)
        selection = best_of_n(candidates.scores, candidates.mask)
        outputs = {side: Path(tmp) / f"{side}.jsonl" for side in ("new", "old", "plain")}

        def check_picks(r: dict[str, Any]) -> None:
            assert outputs["new"].read_bytes() == outputs["old"].read_bytes(), "pick files differ"
            with outputs["new"].open("rb") as ours, outputs["plain"].open("rb") as theirs:
                for a, b in zip(ours, theirs, strict=True):
                    row, other = json.loads(a), json.loads(b)
                    assert {k: row[k] for k in other} == other

        race("picks: one best-of-n row per problem, written as JSONL", {
            "new: write_picks": lambda: write_picks(candidates, selection, "best_of_n", outputs["new"]),
            "old: write_picks by row": lambda: old_write_picks(candidates, selection, "best_of_n", outputs["old"]),
            "plain script, json.dumps per row": lambda: plain_picks(candidates, selection, outputs["plain"]),
        }, args.rounds, check_picks)  # fmt: skip
        print("\nold and new outputs identical (samples, pairs, bytes); the plain scripts agree on what they write")


if __name__ == "__main__":
    main()
