"""`rewardlab author`: rewards written by an author (template search or an LLM endpoint), checked
in the sandbox and scored by short trainings. A thin shell over `rewardlab.author`.

`run` runs the k x r loop and writes `reward.py`, `author.toml` and `records.jsonl`; `check`
puts one reward file through the same checks, sandbox and training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from rewardlab.author.config import (
    TrainConfig,  # no numpy: the learners are imported when a command trains
)
from rewardlab.cli._options import Flag, settings_options, settings_values, with_options
from rewardlab.errors import ConfigError, UsageError

author_app = typer.Typer(help="Rewards written by an LLM or a template search, checked before training.", no_args_is_help=True)

_TASK = typer.Option("office/coffee_mail", "--task", "-t",
                     help="office/coffee, office/mail, office/coffee_mail, office/patrol, grid/maze, "
                          "gym/FrozenLake-v1 (not slippery) or gym/CliffWalking-v1 (any deterministic toy-text gym/<id>).")
# the training's options; defaults and help come from TrainConfig
TRAIN_OPTIONS = (Flag("learner", ("--learner", "-l")), Flag("steps"), Flag("seeds"))


def _train_config(settings: dict[str, Any], seed: int) -> TrainConfig:
    try:
        return TrainConfig(**settings_values(TRAIN_OPTIONS, settings), seed=seed)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def _author(kind: str, base_url: str | None, model: str | None, seed: int, temperature: float) -> Any:
    from rewardlab.author import LLMAuthor, TemplateAuthor

    if kind == "template":
        return TemplateAuthor(seed=seed)
    if kind == "llm":
        if not base_url or not model:
            raise UsageError("--author llm needs --base-url and --model (an OpenAI-compatible endpoint)")
        return LLMAuthor(base_url, model, temperature=temperature)
    raise UsageError(f"--author must be template or llm, got {kind!r}")


@author_app.command("run")
@with_options(settings_options(TrainConfig, TRAIN_OPTIONS), after="rounds")
def run_command(
    task: str = _TASK,
    goal: str = typer.Option("", "--goal", "-g", help="The goal in words (default: the task's own)."),
    author: str = typer.Option("template", "--author", "-a", help="template (offline search) or llm."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."),
    model: str | None = typer.Option(None, "--model", help="Model name at the endpoint."),
    temperature: float = typer.Option(1.0, "--temperature", help="Sampling temperature of the LLM author."),
    candidates: int = typer.Option(4, "--candidates", "-k", help="Candidates per round."),
    rounds: int = typer.Option(4, "--rounds", "-r", help="Rounds of reflection."),
    target: float | None = typer.Option(None, "--target", help="Stop after the round in which a candidate reaches this optimality."),
    validation_seeds: int = typer.Option(0, "--validation-seeds", help="Re-train the leader on this many fresh seeds, with the same learner, before it counts (0: no validation)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the template search and the trainings."),
    out: Path = typer.Option(Path("rewardlab-author"), "--out", "-o", help="Directory for reward.py, author.toml, records.jsonl."),
    store: Path | None = typer.Option(None, "--store", help="Run store (SQLite) to record into; a re-run with the same settings resumes."),
    run_id: str | None = typer.Option(None, "--run-id", help="Id of the run in the store (default: from the settings)."),
    **settings: Any,
) -> None:
    """Run the authoring loop; print each candidate's fate and score."""
    from rewardlab.author import LoopConfig, author_reward, task_by_name, write_result
    from rewardlab.author.loop import fates_line
    from rewardlab.cli._render import console

    finite = task_by_name(task)
    goal = goal or finite.goal
    train = _train_config(settings, seed)
    validation = train.on_fresh_seeds(validation_seeds) if validation_seeds > 0 else None
    config = LoopConfig(candidates=candidates, rounds=rounds, train=train, target=target, validation=validation)
    runs = None
    if store is not None:
        from rewardlab.store import RunStore

        runs = RunStore(store)

    def show(record: dict[str, Any]) -> None:
        score = f"optimality {record['fitness']['optimality']:.3f}" if record["fate"] == "scored" else str(record.get("error", ""))[:120]
        console.print(f"round {record['round']} candidate {record['index']}: {record['fate']} {score}", highlight=False, markup=False)

    result = author_reward(finite, _author(author, base_url, model, seed, temperature), goal=goal, config=config,
                           store=runs, run_id=run_id, on_record=show)  # fmt: skip
    paths = write_result(result, finite, goal, out)
    console.print(f"{len(result.records)} candidates: {fates_line(result.records)}", highlight=False)
    if result.best is None:
        console.print(f"no candidate could be scored; records in {paths['records']}")
        raise typer.Exit(1)
    best = result.best
    console.print(f"best: round {best['round']} candidate {best['index']}, {best['fitness']['learner']} optimality "
                  f"{best['fitness']['optimality']:.3f}, "
                  f"success {best['fitness']['success_rate']:.3f}; wrote {', '.join(str(p) for p in paths.values())}")  # fmt: skip
    _fail_below_target(result.best_worth() or 0.0, target)


def _fail_below_target(worth: float, target: float | None) -> None:
    """Exit 1 when the best reward misses `--target`; without a target, a reward whose agent never
    solves the task (worth 0) is reported loudly too. The files stay written, for inspection."""
    from rewardlab.cli._render import console

    if target is not None and worth < target:
        console.print(f"TARGET MISSED: the best reward counts {worth:.3f} (merit, lowered by validation) < --target "
                      f"{target}; more rounds (-r) or --validation-seeds may help", style="bold red", highlight=False)  # fmt: skip
        raise typer.Exit(1)
    if target is None and worth <= 0.0:
        console.print("WARNING: the best reward's agent never solved the task (worth 0.000); pass --target to make "
                      "this an error", style="bold red", highlight=False)  # fmt: skip


@author_app.command("check")
@with_options(settings_options(TrainConfig, TRAIN_OPTIONS), after="task")
def check_command(
    code: Path = typer.Argument(..., help="A Python file defining reward(obs, action, next_obs, info)."),
    task: str = _TASK,
    seed: int = typer.Option(0, "--seed", help="Seed of the training."),
    train: bool = typer.Option(True, "--train/--no-train", help="Also run the short training."),
    **settings: Any,
) -> None:
    """Put one reward file through the static checks, the sandbox, the cheap checks and a training."""
    from rewardlab.author import (
        check_code,
        evaluate_candidate,
        preference_pairs,
        run_checks,
        task_by_name,
        train_on_table,
    )
    from rewardlab.cli._render import console
    from rewardlab.core.jsontext import read_utf8
    from rewardlab.errors import RewardCodeError
    from rewardlab.sandbox import SandboxPool

    config = _train_config(settings, seed)
    finite = task_by_name(task)
    source = read_utf8(code)
    try:
        check_code(source)
        with SandboxPool(size=1) as pool:
            table = evaluate_candidate(source, finite.transitions, finite.shape, pool)
    except RewardCodeError as exc:
        console.print(f"{code}: {exc.kind}: {exc}", highlight=False, markup=False)
        raise typer.Exit(1) from None
    checks = run_checks(finite, table.total, preference_pairs(finite, gamma=config.gamma, seed=seed), gamma=config.gamma)
    console.print(f"components: {', '.join(table.components)}; planning optimality {checks.planning_optimality:.3f}; "
                  f"preference agreement {checks.preference_agreement:.3f}", highlight=False)  # fmt: skip
    for probe in checks.probes:
        console.print(f"probe {probe['name']}: {'ok' if probe['passed'] else 'HACKABLE'} (return {probe['return']} vs "
                      f"{probe['success_return']} for solving the task)", highlight=False)  # fmt: skip
    if train:
        fitness = train_on_table(finite, table, config)
        console.print(f"trained ({fitness.learner}): optimality {fitness.optimality:.3f}, success {fitness.success_rate:.3f}, curve {fitness.curve}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(author_app, name="author")
