"""Label-free rewards and judge throughput.

(1) Majority-vote pseudo-labels (`labelfree.majority_vote`, TTRL) on the 100 problems x 8
    Qwen2.5-Math responses of ../shared/data/qwen25-math-cot-100.jsonl, whose `score` column is
    the true per-response correctness. The pseudo-label reward of a response is compared with its
    true label. Answers are extracted from the full responses by rewardlab's extractor and
    clustered with the maths verifier; the same run also votes on exact strings of the
    dataset's own `pred` column (what a naive majority vote does) for comparison.
    Then the agreement vs group size: for k = 2..8, `--draws` random k-subsets of each
    problem's responses (seeded), with min_group=2.

(2) Judge throughput (`--calls`, default 10,000) against the loopback fake server with a fixed
    per-request latency (default 50 ms): the concurrency-bounded batch vs sequential calls
    (sequential measured on `--sequential` calls and scaled per call).

Run:  .venv/bin/python bench/bench_judges.py [--only vote|throughput] [--draws 20]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path

from rewardlab.judges.client import ChatClient

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"
sys.path.insert(0, str(ROOT / "tests" / "judges"))  # the fake OpenAI-compatible server


def load() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines()]


def vote_metrics(problems: list[dict], min_agreement: float) -> dict[str, float]:
    """Pseudo-label vs true labels, over the problems whose group is trusted."""
    from rewardlab import Sample, Status
    from rewardlab.judges.consensus import MajorityVote

    reward = MajorityVote(min_group=2, min_agreement=min_agreement)
    trusted = matched = responses = majority_right = all_match = 0
    for p in problems:
        samples = [Sample(prompt=p["question"], response=r, group=str(p["idx"])) for r in p["responses"]]
        results = reward.score_batch(samples)
        if results[0].status is not Status.OK:
            continue
        trusted += 1
        hits = [(r.score == 1.0) == bool(label) for r, label in zip(results, p["labels"], strict=True)]
        matched += sum(hits)
        responses += len(hits)
        all_match += all(hits)
        majority_right += any(r.score == 1.0 and label for r, label in zip(results, p["labels"], strict=True))
    return {
        "trusted": trusted / len(problems),
        "label_agreement": matched / responses if responses else float("nan"),
        "all_labels_match": all_match / trusted if trusted else float("nan"),
        "majority_correct": majority_right / trusted if trusted else float("nan"),
    }


def auroc(scores: list[float], labels: list[bool]) -> float:
    """P(a right response scores above a wrong one), ties half (Mann-Whitney U / (n+ n-))."""
    pos = [x for x, y in zip(scores, labels, strict=True) if y]
    neg = [x for x, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def mode_metrics(problems: list[dict], mode: str, min_agreement: float) -> dict[str, float]:
    """A distribution-aware mode's reward vs the true labels, over the responses of trusted groups."""
    from rewardlab import Sample, Status
    from rewardlab.judges.consensus import MajorityVote

    reward = MajorityVote(min_group=2, min_agreement=min_agreement, mode=mode, answer_key="pred")  # type: ignore[arg-type]
    scores: list[float] = []
    labels: list[bool] = []
    trusted = 0
    for p in problems:
        samples = [Sample(prompt=p["question"], response="", meta={"pred": x}, group=str(p["idx"])) for x in p["preds"]]
        results = reward.score_batch(samples)
        if results[0].status is not Status.OK:
            continue
        trusted += 1
        scores += [float(r.score or 0.0) for r in results]
        labels += [bool(t) for t in p["labels"]]
    right = [x for x, y in zip(scores, labels, strict=True) if y]
    wrong = [x for x, y in zip(scores, labels, strict=True) if not y]
    return {
        "trusted": trusted / len(problems), "auroc": auroc(scores, labels),
        "mean_right": sum(right) / len(right) if right else float("nan"),
        "mean_wrong": sum(wrong) / len(wrong) if wrong else float("nan"),
    }  # fmt: skip


def naive_metrics(problems: list[dict], min_agreement: float) -> dict[str, float]:
    """The same rule on exact `pred` strings (no equivalence)."""
    trusted = matched = responses = 0
    for p in problems:
        counts = Counter(x for x in p["preds"] if x)
        ranked = counts.most_common(2)
        n = len(p["preds"])
        if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]) or ranked[0][1] / n < min_agreement:
            continue
        trusted += 1
        label = ranked[0][0]
        matched += sum((x == label) == bool(t) for x, t in zip(p["preds"], p["labels"], strict=True))
        responses += n
    return {"trusted": trusted / len(problems), "label_agreement": matched / responses if responses else float("nan")}


def subsample(rows: list[dict], k: int, draws: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for row in rows:
        for d in range(draws):
            pick = rng.sample(range(len(row["code"])), k)
            out.append({
                "idx": f"{row['idx']}-{d}", "question": row["question"], "responses": [row["code"][i] for i in pick],
                "preds": [row["pred"][i] for i in pick], "labels": [row["score"][i] for i in pick],
            })  # fmt: skip
    return out


def bench_vote(draws: int) -> None:
    rows = load()
    full = subsample(rows, 8, 1, 0)
    started = time.perf_counter()
    print(f"(1) majority vote on {len(rows)} problems x 8 responses ({DATA.name})")
    print("min_agreement  tool                trusted  label_agreement  all_labels_match  majority_correct")
    for threshold in (0.5, 0.6, 0.75):
        ours = vote_metrics(full, threshold)
        naive = naive_metrics(full, threshold)
        print(f"{threshold:<13}  rewardlab (verify)  {ours['trusted']:.2f}     {ours['label_agreement']:.3f}            {ours['all_labels_match']:.3f}             {ours['majority_correct']:.3f}")
        print(f"{threshold:<13}  exact `pred` vote   {naive['trusted']:.2f}     {naive['label_agreement']:.3f}")
    print(f"    ({time.perf_counter() - started:.1f} s)")
    print("\ndistribution-aware modes on the `pred` answers (rewards vs true labels, trusted groups)")
    print("mode       min_agreement  trusted  auroc  mean(right)  mean(wrong)")
    for mode in ("binary", "frequency", "entropy"):
        for threshold in (0.5, 0.25):
            m = mode_metrics(full, mode, threshold)
            print(f"{mode:<10} {threshold:<13}  {m['trusted']:.2f}     {m['auroc']:.3f}  {m['mean_right']:.3f}        {m['mean_wrong']:.3f}")
    print(f"\nagreement vs group size ({draws} random subsets per problem, min_group=2, min_agreement=0.5)")
    print("k  trusted  label_agreement  majority_correct")
    for k in range(2, 9):
        m = vote_metrics(subsample(rows, k, draws if k < 8 else 1, k), 0.5)
        print(f"{k}  {m['trusted']:.2f}     {m['label_agreement']:.3f}            {m['majority_correct']:.3f}")


def _serve(latency: float, port: Connection) -> None:
    from judge_server import JudgeServer

    with JudgeServer(latency=latency) as server:
        port.send(server.base_url)
        port.recv()  # until the parent is done


def bench_throughput(calls: int, sequential: int, latency: float, concurrency: int) -> None:
    """The server runs in its own process, so it does not share the client's GIL."""
    from rewardlab import Sample
    from rewardlab.judges import LLMJudge

    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=_serve, args=(latency, child), daemon=True)
    proc.start()
    base_url = parent.recv()
    try:
        samples = [Sample(prompt="q", response=f"GOOD {i}") for i in range(calls)]
        client = ChatClient(base_url)
        t0 = time.perf_counter()
        for s in samples[:sequential]:  # one call after another, the plain client
            client.complete("m", [{"role": "user", "content": s.response_text}])
        per_call = (time.perf_counter() - t0) / sequential
        judge = LLMJudge(base_url=base_url, model="m", concurrency=concurrency)
        t0 = time.perf_counter()
        results = judge.score_batch(samples)
        batch = time.perf_counter() - t0
    finally:
        parent.send("stop")
        proc.join(10)
    ok = sum(r.is_ok for r in results)
    print(
        f"(2) {calls} judge calls, {latency * 1000:.0f} ms server latency: sequential {per_call * 1000:.1f} ms/call "
        f"(measured on {sequential}; -> {per_call * calls:.0f} s for {calls}), judge.llm batch with concurrency "
        f"{concurrency}: {batch:.1f} s, {ok}/{calls} ok, speed-up x{per_call * calls / batch:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["vote", "throughput"])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--sequential", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    if args.only in (None, "vote"):
        bench_vote(args.draws)
    if args.only in (None, "throughput"):
        bench_throughput(args.calls, args.sequential, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
