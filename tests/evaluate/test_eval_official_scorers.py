"""rewardlab's benchmark numbers equal the benchmarks' own scorers on the same inputs.

Each `official_*` function below is a line-by-line transcription of the benchmark's scorer
(source file and commit in its docstring), changed only to take plain lists instead of a
HuggingFace dataset. Synthetic files in the benchmarks' formats go through `rewardlab eval`
and through the transcription, and the numbers must match.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from rewardlab import RewardResult, reward
from rewardlab.errors import InputError
from rewardlab.evaluate import prmbench, rewardbench
from rewardlab.evaluate.run_eval import run_eval


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- RewardBench 2 Ties ------------------------------------------------------------------------
def official_ties(rows):
    """allenai/reward-bench@05a9005 `rewardbench/utils.py::process_single_model` and
    `_compute_prompt_stats`; `rows` are dicts with `id`, `scores`, `num_correct`."""
    def stats(samples):
        correct_scores = [s for is_corr, s in samples if is_corr]
        incorrect_scores = [s for is_corr, s in samples if not is_corr]
        best_correct, worst_correct = max(correct_scores), min(correct_scores)
        best_incorrect = max(incorrect_scores)
        different_correct_margin = best_correct - worst_correct if len(correct_scores) > 1 else None
        correct_incorrect_margin = worst_correct - best_incorrect
        return correct_incorrect_margin > 0, different_correct_margin, correct_incorrect_margin

    grouped = defaultdict(list)
    for sample in rows:
        sample_type, prompt_id_str = sample["id"].split(":")
        for i, raw_score in enumerate(sample["scores"]):
            grouped[(sample_type, int(prompt_id_str))].append((i < sample["num_correct"], raw_score))
    ref_stats, tied_stats = {}, {}
    for (sample_type, prompt_id), samples in grouped.items():
        (ref_stats if sample_type == "ref" else tied_stats)[prompt_id] = stats(samples)
    ref_accuracy = np.mean([s[0] for s in ref_stats.values()]) if ref_stats else 0.0
    tied_accuracy = np.mean([s[0] for s in tied_stats.values()]) if tied_stats else 0.0
    all_prompts = set(ref_stats) & set(tied_stats)
    diff_corr_margin = np.array([tied_stats[pid][1] for pid in all_prompts])
    corr_incorrect_ties = np.array([tied_stats[pid][2] for pid in all_prompts])
    corr_incorrect_ref = np.array([ref_stats[pid][2] for pid in all_prompts])
    correctness_preferred = np.mean(corr_incorrect_ties > diff_corr_margin)
    correctness_preferred_hard = np.mean(np.minimum(corr_incorrect_ref, corr_incorrect_ties) > diff_corr_margin)
    with np.errstate(divide="ignore", invalid="ignore"):
        margin_scores = np.tanh(np.minimum(corr_incorrect_ref, corr_incorrect_ties) / diff_corr_margin - 1)
    margin_scores = np.nan_to_num(margin_scores, nan=0.0)
    correctness_margin_score = float(np.mean(margin_scores))
    return float(0.30 * tied_accuracy + 0.30 * ref_accuracy + 0.20 * correctness_preferred
                 + 0.20 * correctness_preferred_hard + 0.01 * correctness_margin_score)


def _ties_rows(seed, n_prompts=12):
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        # scores drawn from a few levels so that exact ties and a zero spread both happen
        rows.append({"id": f"ref:{p}", "num_correct": 1, "scores": rng.integers(0, 4, size=4).astype(float).tolist()})
        k = int(rng.integers(2, 5))
        rows.append({"id": f"tied:{p}", "num_correct": k, "scores": rng.integers(0, 4, size=k + 3).astype(float).tolist()})
    return rows


@pytest.mark.parametrize("seed", range(8))
def test_ties_score_equals_reward_bench_process_single_model(seed):
    rows = _ties_rows(seed)
    ours = rewardbench.ties_score([rewardbench.TiesItem(r["id"], tuple(r["scores"]), r["num_correct"]) for r in rows])
    assert ours.score == pytest.approx(official_ties(rows), abs=1e-12)


def test_ties_score_hand_computed():
    # prompt 0: ref correct 3 > wrong 1 (margin 2); tied correct (5, 4) > wrong 2 (margin 2, spread 1)
    items = [rewardbench.TiesItem("ref:0", (3.0, 1.0), 1), rewardbench.TiesItem("tied:0", (5.0, 4.0, 2.0), 2)]
    s = rewardbench.ties_score(items)
    assert (s.ref_accuracy, s.tied_accuracy, s.correctness_preferred, s.correctness_preferred_hard) == (1, 1, 1, 1)
    assert s.margin_score == pytest.approx(np.tanh(2 / 1 - 1))
    assert s.score == pytest.approx(0.3 + 0.3 + 0.2 + 0.2 + 0.01 * np.tanh(1.0))


def test_ties_id_without_kind_is_an_error():
    with pytest.raises(InputError, match="ref:<n>"):
        rewardbench.ties_score([rewardbench.TiesItem("7", (1.0, 0.0), 1)])


@reward("test.leading_number")
def leading_number(sample):
    """Scores a response by the number it starts with (so tests choose every score)."""
    return float(sample.response_text.split()[0])


def test_eval_bestofk_scores_ties_with_the_official_formula(tmp_path):
    ties = _ties_rows(3, n_prompts=6)
    rows = [{"id": r["id"], "prompt": f"q{r['id']}", "subset": "Ties", "num_correct": r["num_correct"],
             "chosen": [f"{s} c{i}" for i, s in enumerate(r["scores"][: r["num_correct"]])],
             "rejected": [f"{s} w{i}" for i, s in enumerate(r["scores"][r["num_correct"]:])]} for r in ties]
    rows += [{"prompt": "m", "subset": "Math", "chosen": ["3 right"], "rejected": ["1 a", "3 b", "0 c"]},  # 1/2
             {"prompt": "m2", "subset": "Math", "chosen": ["2 right"], "rejected": ["1 a", "0 b", "0 c"]}]  # 1
    report = run_eval(leading_number, write_jsonl(tmp_path / "rb2.jsonl", rows))
    n = report.numbers
    assert n["subsets"]["Ties"]["accuracy"] == pytest.approx(official_ties(ties), abs=1e-12)
    assert n["subsets"]["Math"]["accuracy"].estimate == pytest.approx(0.75)
    assert n["score"] == pytest.approx((official_ties(ties) + 0.75) / 2)  # the leaderboard mean of subsets


# -- RewardBench 1 overall -----------------------------------------------------------------------
def test_rewardbench_overall_both_definitions_match_get_average_over_rewardbench():
    """allenai/reward-bench@05a9005 `analysis/get_benchmark_results.py::get_average_over_rewardbench`."""
    from rewardlab.evaluate.rewardbench import REWARDBENCH_EXAMPLE_COUNTS as EXAMPLE_COUNTS
    from rewardlab.evaluate.rewardbench import REWARDBENCH_SECTIONS as SUBSET_MAPPING

    rng = np.random.default_rng(0)
    acc = {s: float(rng.uniform()) for s in EXAMPLE_COUNTS}
    prefs = {s: float(rng.uniform()) for s in ("anthropic_helpful", "anthropic_hhh", "shp", "summarize")}
    # transcription: per section np.average(weights=EXAMPLE_COUNTS); prior sets np.nanmean;
    # overall np.ma.average(weights=[2, 2, 2, 2, 1])
    sections = [np.average([acc[s] for s in subs], weights=[EXAMPLE_COUNTS[s] for s in subs]) for subs in SUBSET_MAPPING.values()]
    prior = np.nanmean(list(prefs.values()))
    official = np.ma.average(np.ma.masked_array([*sections, prior], np.isnan([*sections, prior])), weights=[2, 2, 2, 2, 1])
    ours = rewardbench.rewardbench_overall({**acc, **prefs})
    assert list(ours.sections.values()) == pytest.approx(sections, abs=1e-12)
    assert ours.with_prior_sets == pytest.approx(float(official), abs=1e-12)
    assert ours.mean_of_sections == pytest.approx(float(np.mean(sections)), abs=1e-12)


def test_eval_pairs_prints_both_rewardbench_overall_scores(tmp_path):
    rows = [{"prompt": f"p{i}", "chosen": "2 x", "rejected": "1 y", "subset": s}
            for i, s in enumerate(["alpacaeval-easy", "mt-bench-hard", "donotanswer", "hep-go"])]
    rows.append({"prompt": "p9", "chosen": "0 x", "rejected": "1 y", "subset": "shp"})
    report = run_eval(leading_number, write_jsonl(tmp_path / "rb1.jsonl", rows))
    summary = dict(report.summary)
    assert summary["RewardBench score: mean of sections"] == "1.0000"
    assert summary["RewardBench score: sections ×2 + prior sets ×1"] == f"{8 / 9:.4f}"


# -- ProcessBench ------------------------------------------------------------------------------
def official_processbench(res_by_config):
    """QwenLM/ProcessBench `code/run_eval.py` (lines 117-130): per config, acc on flawed and on
    correct solutions and their harmonic mean; the paper's headline is the mean over configs."""
    f1s = []
    for res_data in res_by_config.values():
        error_data = [e for e in res_data if e["label"] != -1]
        correct_data = [e for e in res_data if e["label"] == -1]
        acc1 = np.mean([e["match"] for e in error_data]) * 100
        acc2 = np.mean([e["match"] for e in correct_data]) * 100
        f1s.append(2 * acc1 * acc2 / (acc1 + acc2))
    return float(np.mean(f1s)) / 100


@reward("test.step_prm")
def step_prm(sample):
    """Step score = the number each step starts with."""
    steps = tuple(float(s.split()[0]) for s in sample.steps)
    return RewardResult.ok(min(steps), steps=steps)


def test_processbench_headline_is_the_mean_of_subset_f1s(tmp_path):
    rng = np.random.default_rng(5)
    rows, res = [], defaultdict(list)
    for config, n in (("gsm8k", 30), ("math", 14), ("olympiadbench", 16), ("omnimath", 20)):
        for _ in range(n):
            n_steps = int(rng.integers(1, 6))
            label = int(rng.integers(-1, n_steps))
            scores = rng.choice([0.2, 0.8], size=n_steps, p=[0.3, 0.7])
            rows.append({"problem": "p", "steps": [f"{s} step" for s in scores], "label": label, "subset": config})
            below = np.flatnonzero(scores < 0.5)
            pred = int(below[0]) if below.size else -1
            res[config].append({"label": label, "match": pred == label})
    official = official_processbench(res)
    assert np.isfinite(official)  # every config has a non-zero accuracy (see the next test otherwise)
    report = run_eval(step_prm, write_jsonl(tmp_path / "pb.jsonl", rows))
    assert report.numbers["average_f1"] == pytest.approx(official, abs=1e-12)
    assert report.numbers["average_f1"] != pytest.approx(report.numbers["pooled"].f1)  # the pooled F1 differs


def test_processbench_f1_of_two_zero_accuracies_is_zero_not_nan():
    # the official script divides 0 by 0 (NaN) when a PRM gets no solution of a subset right;
    # rewardlab reports 0, the limit of the harmonic mean, so one subset cannot void the average
    from rewardlab.evaluate.prm_metrics import processbench_f1

    assert processbench_f1([0, -1], [1, 0]).f1 == 0.0


# -- PRMBench ----------------------------------------------------------------------------------
def official_eval_on_hallucination_step(hallucination_steps, labels):
    """ssmisya/PRMBench@a1ae4ea `mr_eval/tasks/prmtest_classified/task.py::eval_on_hallucination_step`
    (redundency_label=False)."""
    hallucination_steps = [i - 1 for i in hallucination_steps]
    tp = fp = tn = fn = 0
    lists = {"correct_step_acc": [], "wrong_step_acc": [], "total_step_acc": []}
    first_error_location = min(hallucination_steps) if len(hallucination_steps) > 0 else -1
    first_error_acc = None
    for idx in range(len(labels)):
        if idx == first_error_location:
            first_error_acc = 1 if labels[idx] == 0 else 0
        if idx in hallucination_steps:
            if labels[idx] == 1:
                lists["wrong_step_acc"].append(0)
                lists["total_step_acc"].append(0)
                fp += 1
            else:
                lists["wrong_step_acc"].append(1)
                lists["total_step_acc"].append(1)
                tn += 1
        else:
            if labels[idx] == 1:
                lists["correct_step_acc"].append(1)
                lists["total_step_acc"].append(1)
                tp += 1
            else:
                lists["correct_step_acc"].append(0)
                lists["total_step_acc"].append(0)
                fn += 1
    model_response_acc = sum(labels) / len(labels) if len(labels) > 0 else -1
    return {"f1_matrix": {"TP": tp, "FP": fp, "TN": tn, "FN": fn}, "model_response_acc": model_response_acc,
            "first_error_acc_list": [first_error_acc] if first_error_acc is not None else [], **{f"{k}_list": v for k, v in lists.items()}}


def _official_f1s(m):
    TP, FP, FN, TN = m["TP"], m["FP"], m["FN"], m["TN"]
    precision = TP / (TP + FP) if (TP + FP) != 0 else -1
    recall = TP / (TP + FN) if (TP + FN) != 0 else -1
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) != 0 else -1
    negative_precision = TN / (TN + FN) if (TN + FN) != 0 else -1
    negative_recall = TN / (TN + FP) if (TN + FP) != 0 else -1
    negative_f1 = 2 * negative_precision * negative_recall / (negative_precision + negative_recall) \
        if (negative_precision + negative_recall) != 0 else -1
    return f1, negative_f1


def official_prmbench(meta_data, predictions):
    """`evaluate_function` of the same file (f1 matrices, totals without the "correct" class),
    then `form_latex_strs.ipynb::get_prmscore_from_current_res_dict` (PRMScore, clipped at 0)."""
    total = {"TP": 0, "FP": 0, "TN": 0, "FN": 0}
    per_class = defaultdict(lambda: {"TP": 0, "FP": 0, "TN": 0, "FN": 0})
    for meta in meta_data:
        res = official_eval_on_hallucination_step(meta["error_steps"], predictions[meta["idx"]])
        for k in total:
            per_class[meta["classification"]][k] += res["f1_matrix"][k]
            if meta["classification"] != "correct":
                total[k] += res["f1_matrix"][k]
    f1, nf1 = _official_f1s(total)
    overall = f1 * 0.5 + nf1 * 0.5
    scores = {}
    for c, m in per_class.items():
        cf1, cnf1 = _official_f1s(m)
        s = cf1 if c == "multi_solutions" else cf1 * 0.5 + cnf1 * 0.5
        scores[c] = s if s > 0 else 0
    return (overall if overall > 0 else 0), scores


def _prmbench_file_rows(seed):
    """Rows in PRMBench's release format, with several error steps and steps after the first error."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(10):
        for cls in ("redundency", "circular", "counterfactual", "multi_solutions"):
            n_steps = int(rng.integers(2, 7))
            errors = [] if cls == "multi_solutions" else sorted({int(e) for e in rng.integers(1, n_steps + 1, size=2)})
            scores = rng.choice([0.1, 0.5, 0.9], size=n_steps)  # 0.5 is not above the threshold
            original = rng.choice([0.1, 0.9], size=n_steps)
            rows.append({"idx": f"prm_test_p1_{i}", "classification": cls, "error_steps": errors,
                         "modified_question": "q", "original_question": "q",
                         "modified_process": [f"{s} step" for s in scores], "original_process": [f"{s} orig" for s in original]})
    return rows


def _official_inputs(rows):
    """The official `load_data_function`'s meta data, and the labels `score > 0.5` per idx."""
    meta, preds, seen = [], {}, set()
    for item in rows:
        if item["classification"] == "redundency" and f"correct_{item['idx']}" not in seen:
            idx = f"correct_{item['idx']}"
            seen.add(idx)
            meta.append({"idx": idx, "classification": "correct", "error_steps": []})
            preds[idx] = [int(float(s.split()[0]) > 0.5) for s in item["original_process"]]
        idx = f"{item['classification']}_{item['idx']}"
        if idx not in seen:
            seen.add(idx)
            meta.append({"idx": idx, "classification": item["classification"], "error_steps": item["error_steps"]})
            preds[idx] = [int(float(s.split()[0]) > 0.5) for s in item["modified_process"]]
    return meta, preds


@pytest.mark.parametrize("seed", range(4))
def test_prmbench_matches_the_official_scorer(seed, tmp_path):
    rows = _prmbench_file_rows(seed)
    overall, per_class = official_prmbench(*_official_inputs(rows))
    report = run_eval(step_prm, write_jsonl(tmp_path / "prmbench.jsonl", rows))
    result = report.numbers["prmbench"]
    assert report.numbers["mode"] == "prmbench"
    assert result.prm_score == pytest.approx(overall, abs=1e-12)
    assert {c: v["prm_score"] for c, v in result.by_class.items()} == pytest.approx(per_class, abs=1e-12)
    assert result.by_category["simplicity"] == pytest.approx((per_class["redundency"] + per_class["circular"]) / 2)


def test_prmbench_correct_originals_are_not_in_the_total():
    # a PRM that calls every step correct: on the originals that is perfect, but they must not
    # lift the total, which only has the flawed solutions
    sols = [prmbench.PRMBenchSolution("correct_0", "correct", (), (True, True, True)),
            prmbench.PRMBenchSolution("circular_0", "circular", (2,), (True, True, True))]
    result = prmbench.prmbench_scores(sols)
    # on the flawed one only: TP 2, FP 1, FN 0 -> precision 2/3, recall 1, F1 0.8 (with the
    # originals pooled in it would be TP 5, FP 1: F1 10/11)
    assert result.overall["f1"] == pytest.approx(0.8)
    # no TN, no FN: negative precision is the sentinel −1, negative recall 0, F1 2·(−1)·0/(−1) = 0
    assert result.overall["negative_precision"] == -1.0 and result.overall["negative_f1"] == 0.0
    assert result.prm_score == pytest.approx(0.4)
    assert result.solutions == 1


def test_prmbench_undefined_f1_is_the_sentinel_and_prmscore_is_clipped_at_zero():
    # no step labelled at all: precision and recall −1, F1 2·1/(−2) = −1; the PRMScore clips it to 0
    result = prmbench.prmbench_scores([prmbench.PRMBenchSolution("multi_solutions_0", "multi_solutions", (), ())])
    assert result.by_class["multi_solutions"]["f1"] == -1.0
    assert result.by_class["multi_solutions"]["prm_score"] == 0.0


def test_prmbench_multi_solutions_scored_by_f1_alone():
    sols = [prmbench.PRMBenchSolution("multi_solutions_0", "multi_solutions", (), (True, True, False))]
    assert prmbench.prmbench_scores(sols).by_class["multi_solutions"]["prm_score"] == pytest.approx(0.8)


# -- JudgeBench --------------------------------------------------------------------------------
def official_judgebench(pairs):
    """ScalerLab/JudgeBench `utils/metrics.py::compute_final_metrics` (reverse_order=True)."""
    def flip(decision):
        return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision)

    n_correct = 0
    for pair in pairs:
        label = pair["label"]
        judgment1, judgment2 = pair["judgments"]
        decision1 = judgment1["decision"] if judgment1 is not None else None
        decision2 = flip(judgment2["decision"] if judgment2 is not None else None)
        counter = sum(1 if d == label else -1 if d == flip(label) else 0 for d in (decision1, decision2))
        n_correct += counter > 0
    return n_correct / len(pairs)


def _judgebench_rows(seed, n=60):
    rng = np.random.default_rng(seed)
    options = ["A>B", "B>A", "A=B", None, "null-judgment"]
    rows = []
    for i in range(n):
        judgments = []
        for _ in range(2):
            pick = options[int(rng.choice(5, p=[0.4, 0.3, 0.1, 0.1, 0.1]))]
            judgments.append(None if pick == "null-judgment" else {"judgment": "...", "decision": pick})
        source = ["mmlu-pro-law", "livebench-math", "livebench-reasoning", "livecodebench"][i % 4]
        rows.append({"pair_id": str(i), "source": source, "label": ["A>B", "B>A"][int(rng.integers(2))], "judgments": judgments})
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_judgebench_accuracy_with_null_verdicts_matches_compute_final_metrics(seed, tmp_path):
    rows = _judgebench_rows(seed)
    report = run_eval(None, write_jsonl(tmp_path / "judge.jsonl", rows))
    subsets = report.numbers["subsets"]
    assert subsets["all"].accuracy == pytest.approx(official_judgebench(rows), abs=1e-12)
    for prefix in ("mmlu-pro", "livebench-math", "livebench-reasoning", "livecodebench"):
        part = [r for r in rows if r["source"].startswith(prefix)]
        assert subsets[prefix].accuracy == pytest.approx(official_judgebench(part), abs=1e-12)
    with_null = [i for i, r in enumerate(rows) if any(j is None or j["decision"] is None for j in r["judgments"])]
    assert report.numbers["null_verdicts"]["items"] == len(with_null) > 0
    assert report.numbers["null_verdicts"]["where"][0] == f"{tmp_path / 'judge.jsonl'}:{with_null[0] + 1}"


def test_judgebench_unknown_decision_names_file_and_line(tmp_path):
    rows = _judgebench_rows(0, n=3)
    rows[2]["judgments"][1] = {"decision": "A>>B"}
    with pytest.raises(InputError, match=r"judge.jsonl:3.*A>>B"):
        run_eval(None, write_jsonl(tmp_path / "judge.jsonl", rows))


# -- adversarial inputs ------------------------------------------------------------------------
@reward("test.short_prm")
def short_prm(sample):
    """Returns one step score fewer than there are steps for responses mentioning 'short'."""
    steps = tuple(float(s.split()[0]) for s in sample.steps)
    if "short" in sample.response_text:
        steps = steps[:-1]
    return RewardResult.ok(min(steps), steps=steps)


def test_prmbench_rows_with_the_wrong_number_of_step_scores_are_dropped_and_counted(tmp_path):
    rows = _prmbench_file_rows(0)[:8]
    rows[1]["modified_process"] = [f"{s} short" for s in ("0.9", "0.1")]
    report = run_eval(short_prm, write_jsonl(tmp_path / "prmbench.jsonl", rows))
    assert report.numbers["dropped"] == {"step_count_mismatch": 1}
    assert "step_count_mismatch" in dict(report.summary)["dropped"]


def test_judgebench_single_order_files_score_the_one_decision(tmp_path):
    rows = [{"source": "livecodebench", "label": "A>B", "judgments": [{"decision": "A>B"}]},
            {"source": "livecodebench", "label": "B>A", "judgments": [{"decision": "A=B"}]},
            {"source": "livecodebench", "label": "B>A", "judgments": [None]}]
    n = run_eval(None, write_jsonl(tmp_path / "judge.jsonl", rows)).numbers
    assert not n["swapped"] and n["subsets"]["all"]["accuracy"] == pytest.approx(1 / 3)
    assert n["null_verdicts"]["items"] == 1


def test_judgebench_mixed_single_and_swapped_rows_name_the_line(tmp_path):
    rows = [*_judgebench_rows(0, n=2), {"source": "livecodebench", "label": "A>B", "judgments": [{"decision": "A>B"}]}]
    with pytest.raises(InputError, match=r"judge.jsonl:3.*mix"):
        run_eval(None, write_jsonl(tmp_path / "judge.jsonl", rows))


def test_ties_subset_without_its_ref_half_is_reported_not_scored(tmp_path):
    rows = [{"id": "tied:0", "prompt": "q", "subset": "Ties", "chosen": ["3 a", "2 b"], "rejected": ["1 c"]},
            {"prompt": "m", "subset": "Math", "chosen": ["3 right"], "rejected": ["1 a", "0 b", "0 c"]}]
    report = run_eval(leading_number, write_jsonl(tmp_path / "rb2.jsonl", rows))
    assert "error" in report.numbers["subsets"]["Ties"]
    assert report.numbers["score"] == 1.0  # the mean over the subsets that could be scored
    assert "subset Ties: not scored" in dict(report.summary)
