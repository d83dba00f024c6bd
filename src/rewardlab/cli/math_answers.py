"""`rewardlab math check REFERENCE CANDIDATE` and `rewardlab math extract [FILE]`: the maths
verifier from the shell, to see why an answer was (not) accepted. A thin shell over
`rewardlab.verify.math`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

math_app = typer.Typer(help="Maths answers: extract them from responses, check them against references.", no_args_is_help=True)

#: exit codes of `rewardlab math check`
EXIT_EQUIVALENT, EXIT_NOT_EQUIVALENT, EXIT_UNDECIDED = 0, 1, 3


@math_app.command("check")
def check_command(
    reference: str = typer.Argument(..., help="The gold answer (LaTeX or plain)."),
    candidate: str = typer.Argument(..., help="The answer to judge (already extracted)."),
    timeout: float = typer.Option(5.0, "--timeout", help="Seconds of sympy work before the verdict is undecided."),
    min_sig_figs: int = typer.Option(3, "--min-sig-figs", help="Figures a decimal needs to count as a rounding."),
    approximate: bool = typer.Option(False, "--approximate", help="Accept a decimal that rounds an exact reference (0.333 for 1/3)."),
) -> int:
    """Print the verdict as JSON. Exit code: 0 equivalent, 1 not equivalent, 3 undecided."""
    from rewardlab.verify.math import CheckOptions, Outcome, check

    verdict = check(reference, candidate, CheckOptions(timeout=timeout, min_sig_figs=min_sig_figs, approximate=approximate))
    typer.echo(
        json.dumps(
            {
                "outcome": verdict.outcome.value,
                "method": verdict.method,
                "reason": verdict.reason,
                "reference": verdict.reference,
                "candidate": verdict.candidate,
                "error_kind": verdict.error_kind,
            },
            ensure_ascii=False,
        )
    )
    codes = {Outcome.EQUIVALENT: EXIT_EQUIVALENT, Outcome.NOT_EQUIVALENT: EXIT_NOT_EQUIVALENT}
    return codes.get(verdict.outcome, EXIT_UNDECIDED)


@math_app.command("extract")
def extract_command(
    file: Path | None = typer.Argument(None, help="A file holding one response (default: stdin)."),
    strict: bool = typer.Option(False, "--strict", help="Only \\boxed{} or <answer> tags count."),
) -> int:
    """Print the extracted answer and where it was found, as JSON. Exit code 1 when none."""
    from rewardlab.verify.math import extract_answer

    text = _response_text(file)
    found = extract_answer(text, strict=strict)
    shown: dict[str, object] = {"answer": found.answer, "source": found.source}
    if found.candidates:  # several boxes in the final answer section: a hedge unless all equal
        shown["candidates"] = list(found.candidates)
    typer.echo(json.dumps(shown, ensure_ascii=False))
    return 0 if found.answer is not None else 1


def _response_text(file: Path | None) -> str:
    """The response in `file` (or stdin) as UTF-8 text; other bytes are an `InputError`."""
    from rewardlab.core.jsontext import read_utf8, utf8_text
    from rewardlab.errors import InputError

    if file is not None:
        return read_utf8(file)
    try:
        return utf8_text(sys.stdin.buffer.read())
    except ValueError as exc:
        raise InputError(str(exc), source="<stdin>") from None


def register(app: typer.Typer) -> None:
    app.add_typer(math_app, name="math")
