"""`rewardlab train rm|prm DATA.jsonl`: train a learned reward and save it for `model.rm` / `model.prm`.

Thin shells over `rewardlab.models.train_reward_model` and `rewardlab.models.prm.train_prm`:
read the rows, split off a validation set by prompt (or read `--val`), print validation metrics
per epoch, stop early, and write `config.json` + `model.safetensors` into `--out`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from rewardlab._progress import progress_enabled
from rewardlab.cli._options import Flag, settings_options, settings_values, with_options
from rewardlab.cli._progress import progress_option
from rewardlab.errors import UsageError
from rewardlab.models.config import (  # no torch
    DEFAULT_BACKBONE,
    EncodeConfig,
    PRMConfig,
    TrainConfig,
)
from rewardlab.models.data import graded_pairs, split_pairs, write_pairs  # no torch

train_app = typer.Typer(help="Train learned rewards (needs the `models` extra).", no_args_is_help=True)

_VAL_FRACTION: float = inspect.signature(split_pairs).parameters["val_fraction"].default

# Config fields offered on the command line; defaults and help come from the dataclasses.
# the training loop's options, shared by TrainConfig and PRMConfig (config.LoopOptions)
LOOP_OPTIONS = (
    Flag("mode"),
    Flag("finetune_layers", ("--layers",)),
    Flag("epochs"),
    Flag("batch_size"),
    Flag("lr"),
    Flag("lr_backbone"),
    Flag("seed"),
    Flag("patience"),
)
RM_OPTIONS = (
    *LOOP_OPTIONS,
    Flag("head"),
    Flag("members"),
    Flag("ensemble_hidden", ("--member-hidden",)),
    Flag("ensemble_bootstrap", ("--bootstrap/--no-bootstrap",)),
    Flag("ensemble_how", ("--aggregate",)),
    Flag("ensemble_penalty", ("--penalty",)),
    Flag("label_smoothing"),
    Flag("center_coef", ("--center",)),
    Flag("use_margin", ("--margin/--no-margin",)),
)
PRM_OPTIONS = LOOP_OPTIONS
ENCODE_OPTIONS = (Flag("max_length"), Flag("truncation_side"), Flag("pooling"), Flag("precision"))


@dataclass(frozen=True)
class _Job:
    """What `train rm` and `train prm` read besides the configs.

    Attributes:
        val: validation JSONL; default: split DATA by prompt.
        val_fraction: share of prompts held out when there is no --val.
        backbone: the text encoder: the offline default (all-MiniLM-L6-v2), hashing, tiny-bert,
            or a Hugging Face model path.
        progress: progress bars (default: on when stderr is a terminal).
    """

    val: Path | None = None
    val_fraction: float = _VAL_FRACTION
    backbone: str = DEFAULT_BACKBONE
    progress: bool | None = None


JOB_OPTIONS = (Flag("val"), Flag("val_fraction"), Flag("backbone", ("--backbone", "-b")), Flag("progress", ("--progress/--no-progress",)))


def _configs(config_class: type[Any], flags: tuple[Flag, ...], settings: dict[str, Any]) -> tuple[_Job, Any, EncodeConfig]:
    """The job, the trainer's config and the encoding config from the command's values; a bad
    value is a usage error."""
    try:
        return (_Job(**settings_values(JOB_OPTIONS, settings)), config_class(**settings_values(flags, settings)),
                EncodeConfig(**settings_values(ENCODE_OPTIONS, settings)))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _generated(config_class: type[Any], flags: tuple[Flag, ...]) -> list[inspect.Parameter]:
    return [*settings_options(_Job, JOB_OPTIONS), *settings_options(config_class, flags),
            *settings_options(EncodeConfig, ENCODE_OPTIONS)]


@train_app.command("rm")
@with_options(_generated(TrainConfig, RM_OPTIONS), after="out")
def train_rm(
    data: Path = typer.Argument(..., help="JSONL rows with prompt, chosen, rejected (optional margin, tie)."),
    out: Path = typer.Option(Path("runs/rm"), "--out", "-o", help="Directory to write the model into."),
    **settings: Any,
) -> None:
    """Train a Bradley-Terry reward model on preference pairs."""
    from rewardlab.cli._render import console
    from rewardlab.models import read_pairs
    from rewardlab.models.backbones import load_backbone
    from rewardlab.models.train import EpochLog, train_reward_model

    job, config, encode = _configs(TrainConfig, RM_OPTIONS, settings)
    if config.head == "ensemble":  # validate the rule and sizes now, not after embedding every text
        from rewardlab.models.heads import EnsembleHead

        try:
            EnsembleHead(1, members=config.members, how=config.ensemble_how, hidden=config.ensemble_hidden)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
    pairs = read_pairs(data)
    train, held = (pairs, read_pairs(job.val)) if job.val else split_pairs(pairs, val_fraction=job.val_fraction, seed=config.seed)
    if not job.val:
        from rewardlab.models.data import held_out

        groups = [p.group for p in pairs]
        _warn_split(console, groups, held_out(groups, val_fraction=job.val_fraction, seed=config.seed), job.val_fraction)
    console.print(f"{len(train)} training pairs, {len(held)} validation pairs; backbone {job.backbone}, mode {config.mode}")

    def show(log: EpochLog) -> None:
        console.print(f"epoch {log.epoch:3d}  loss {log.train_loss:.4f}  val accuracy {log.val_accuracy:.3f}"
                      f"  ({log.seconds:.1f}s)")

    model, report = train_reward_model(train, held, backbone=load_backbone(job.backbone, encode=encode),
                                       config=config, progress=progress_enabled(job.progress), on_epoch=show)
    model.save(out)
    stop = "early stop" if report.stopped_early else "all epochs"
    console.print(f"best epoch {report.best_epoch} (val accuracy {report.best_val_accuracy:.3f}, {stop}); "
                  f"{report.n_truncated} texts truncated to {encode.max_length} tokens ({encode.truncation_side} side); "
                  f"{report.pairs_per_second:.0f} pairs/s")
    console.print(f"saved to {out}  — use it with: use = \"model.rm\", params = {{ path = \"{out}\" }}")


@train_app.command("prm")
@with_options(_generated(PRMConfig, PRM_OPTIONS), after="out")
def train_prm_command(
    data: Path = typer.Argument(..., help='JSONL rows {"prompt", "steps": [...], "labels": [...]}; labels '
                                          "true/false, 0-1 (soft) or null (unlabelled)."),
    out: Path = typer.Option(Path("runs/prm"), "--out", "-o", help="Directory to write the model into."),
    **settings: Any,
) -> None:
    """Train a process reward model on per-step labels (hard or soft)."""
    from rewardlab.cli._render import console
    from rewardlab.models.backbones import load_backbone
    from rewardlab.models.data import held_out, read_step_rows
    from rewardlab.models.prm import train_prm
    from rewardlab.models.train import EpochLog

    job, config, encode = _configs(PRMConfig, PRM_OPTIONS, settings)
    samples, labels = read_step_rows(data)
    if job.val:
        held_samples, held_labels = read_step_rows(job.val)
        train_samples, train_labels = samples, labels
    else:
        held = held_out([s.prompt_text for s in samples], val_fraction=job.val_fraction, seed=config.seed)
        _warn_split(console, [s.prompt_text for s in samples], held, job.val_fraction)
        train_samples = [s for i, s in enumerate(samples) if i not in held]
        train_labels = [y for i, y in enumerate(labels) if i not in held]
        held_samples = [s for i, s in enumerate(samples) if i in held]
        held_labels = [y for i, y in enumerate(labels) if i in held]
    console.print(f"{len(train_samples)} training solutions ({sum(map(len, train_labels))} steps), "
                  f"{len(held_samples)} validation solutions; backbone {job.backbone}, mode {config.mode}")

    def show(log: EpochLog) -> None:
        console.print(f"epoch {log.epoch:3d}  loss {log.train_loss:.4f}  val step accuracy {log.val_accuracy:.3f}"
                      f"  Brier {log.metrics.get('brier', float('nan')):.4f}  ({log.seconds:.1f}s)")

    prm, report = train_prm(train_samples, train_labels,
                            val=(held_samples, held_labels) if held_samples else None,
                            backbone=load_backbone(job.backbone, encode=encode), config=config,
                            progress=progress_enabled(job.progress), on_epoch=show)
    prm.save(out)
    stop = "early stop" if report["stopped_early"] else "all epochs"
    console.print(f"best epoch {report['best_epoch']} (val step accuracy {report['best_val_accuracy']:.3f}, "
                  f"Brier {report['best_val_brier']:.4f}, {stop}); {report['n_truncated']} prefixes truncated "
                  f"to {encode.max_length} tokens ({encode.truncation_side} side)")
    console.print(f"saved to {out}  — use it with: use = \"model.prm\", "
                  f"params = {{ path = \"{out}\", aggregate = \"min\" }}")


def _warn_split(console: object, groups: list[str], held: set[int], val_fraction: float) -> None:
    from rewardlab.models.data import split_warning

    message = split_warning(groups, held, val_fraction=val_fraction)
    if message:
        console.print(f"[yellow]warning:[/yellow] {message}")  # type: ignore[attr-defined]


PAIRS_OPTIONS = (
    Flag("prompt_key", ("--prompt",)),
    Flag("responses_key", ("--responses",)),
    Flag("labels_key", ("--labels",)),
    Flag("group_key", ("--group",)),
)


@train_app.command("pairs")
@with_options(settings_options(graded_pairs, PAIRS_OPTIONS), after="out")
def pairs_command(
    data: Path = typer.Argument(..., help="Graded candidate sets: one row per prompt with a list of responses and their labels."),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL of preference pairs to write (prompt, chosen, rejected, group)."),
    progress: bool | None = progress_option("Progress bar over the prompts paired, with rate and ETA (default: on when stderr is a terminal)."),
    **columns: str,
) -> None:
    """Build (correct, incorrect) preference pairs from graded candidate sets, for `train rm`."""
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console, counting, print_unreadable
    from rewardlab.errors import InputError
    from rewardlab.runner.io import read_objects

    unreadable: list[InputError] = []
    rows = read_objects(data, on_error=unreadable.append)
    lines = [line for line, _ in rows]  # graded_pairs numbers the rows it is given; map back to file lines
    bad_rows: list[InputError] = []
    with progress_bar(progress, f"pairing {data.name}", unit="prompts") as (advance, set_total):
        set_total(len(rows))
        pairs = graded_pairs(counting((row for _, row in rows), advance), **settings_values(PAIRS_OPTIONS, columns),
                             source=str(data), on_error=bad_rows.append)  # fmt: skip
    unreadable += [InputError(e.reason, source=str(data), line=lines[e.line - 1] if e.line else None) for e in bad_rows]
    print_unreadable(unreadable)
    write_pairs(pairs, out)
    prompts = len({p.group for p in pairs})
    console.print(f"{len(pairs)} pairs from {prompts} of {len(rows)} prompts (prompts whose responses are all right or "
                  f"all wrong give none) -> {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
