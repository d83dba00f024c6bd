"""`rewardlab rm ...`: check, convert and run reward machines (a thin shell over rewardlab.envs.rm).

    rewardlab rm check MACHINE            # load, determinism check, print states and edges
    rewardlab rm convert t1.txt -o t1.toml
    rewardlab rm run MACHINE '[[], ["f"], ["g"]]'
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rewardlab.errors import InputError, UsageError

rm_app = typer.Typer(help="Reward machines: check, convert, run.", no_args_is_help=True)


@rm_app.command("check")
def check_command(machine: Path = typer.Argument(..., help=".toml, .json or original-format .txt")) -> None:
    """Load a machine (parsing guards and checking determinism) and print its structure."""
    from rewardlab.envs.rm import RewardMachine

    rm = RewardMachine.load(machine)
    typer.echo(f"{machine}: ok, {rm.n_states} states, {len(rm.edges)} edges, no_match={rm.no_match}")
    typer.echo(f"  initial={rm.initial} accepting={sorted(rm.accepting)} rejecting={sorted(rm.rejecting)}")
    for e in rm.edges:
        typer.echo(f"  {e.src} --[{e.guard.text}] / {e.reward:g}--> {e.dst}")


@rm_app.command("convert")
def convert_command(
    machine: Path = typer.Argument(..., help="Machine to read."),
    output: Path = typer.Option(..., "--output", "-o", help="Write .toml, .json or .txt (original format)."),
) -> None:
    """Convert between the TOML/JSON format and the original text format."""
    from rewardlab.envs.rm import RewardMachine, to_text_rm
    from rewardlab.envs.rm.reward import to_toml

    rm = RewardMachine.load(machine)
    writers = {".toml": to_toml, ".json": lambda m: json.dumps(m.to_dict(), indent=2) + "\n", ".txt": to_text_rm}
    if output.suffix not in writers:
        raise UsageError(f"--output must end in .toml, .json or .txt; got {output.name!r}")
    output.write_text(writers[output.suffix](rm))
    typer.echo(f"wrote {output}")


@rm_app.command("run")
def run_command(
    machine: Path = typer.Argument(..., help="Machine to run."),
    trace: str = typer.Argument(..., help='JSON list of label lists, e.g. \'[[], ["f"], ["g"]]\'.'),
) -> None:
    """Run a trace of label sets through a machine and print every step."""
    from rewardlab.envs.rm import RewardMachine

    rm = RewardMachine.load(machine)
    try:
        steps_in = json.loads(trace)
    except ValueError as exc:  # JSONDecodeError, or an integer Python will not read
        raise InputError(f"trace is not JSON: {exc}", source="<trace>") from exc
    total, state = 0.0, rm.initial
    for i, labels in enumerate(steps_in):
        step = rm.step(state, labels)
        total += step.reward
        flag = " ACCEPT" if step.accepted else " REJECT" if step.rejected else ""
        typer.echo(f"{i}: {sorted(labels)} {state} -> {step.state} reward {step.reward:g}{flag}")
        state = step.state
        if step.terminal:
            break
    typer.echo(f"total reward {total:g}")


def register(app: typer.Typer) -> None:
    """Add the `rm` command group to the root app."""
    app.add_typer(rm_app, name="rm")
