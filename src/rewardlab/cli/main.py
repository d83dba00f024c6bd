"""Entry point of the `rewardlab` command: `main(argv) -> int`, testable in-process.

Exit codes: 0 success, 1 an error (bad spec, bad input, failed run), 2 a usage error.
Command groups live in their own modules and register themselves on `app`; keep heavy imports
(torch, fastapi, sympy) inside the command functions so `rewardlab --help` stays fast.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from rewardlab._version import __version__
from rewardlab.errors import RewardLabError

app = typer.Typer(
    name="rewardlab",
    help="The reward layer of RL: specify, verify, combine, serve and audit rewards.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain help: docstrings print as written (rich markup would eat `[0, 1]`), and flags show
    # no `<bool>` value they do not take
    rich_markup_mode=None,
)

# One module per command group; each defines `register(app)`.
GROUPS = [
    "rewardlab.cli.init",
    "rewardlab.cli.score",
    "rewardlab.cli.check",
    "rewardlab.cli.list_rewards",
    "rewardlab.cli.demo",
    "rewardlab.cli.serve",  # serve + cache
    "rewardlab.cli.eval", "rewardlab.cli.audit",  # eval + audit
    "rewardlab.cli.front",  # front (reward vectors: hypervolume, front plot)
    "rewardlab.cli.import_grader",  # import-grader
    "rewardlab.cli.advantages",  # advantages
    "rewardlab.cli.train",  # train rm / train prm
    "rewardlab.cli.rm",  # rm check/convert/run
    "rewardlab.cli.math_answers",  # math check/extract
    "rewardlab.cli.select",  # select curves/pick/simulate
    "rewardlab.cli.author",  # author run/check
]

err_console = Console(stderr=True, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rewardlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """rewardlab command line."""


for _module in GROUPS:
    importlib.import_module(_module).register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with `argv` (default: sys.argv[1:]) and return the exit code."""
    try:
        result = app(args=argv if argv is not None else sys.argv[1:], prog_name="rewardlab", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except RewardLabError as exc:
        err_console.print("[bold red]error:[/] ", end="")
        err_console.print(str(exc), highlight=False, markup=False)
        return exc.exit_code
    except Exception as exc:
        # Usage errors of the (vendored) click inside typer: they know how to show themselves.
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            return code
        message = _user_error(exc, argv if argv is not None else sys.argv[1:])
        if message is None:
            raise
        err_console.print("[bold red]error:[/] ", end="")
        err_console.print(message, highlight=False, markup=False)
        return 1
    return int(result) if isinstance(result, int) else 0


def _command(argv: list[str]) -> str:
    """`rewardlab select curves` for argv `["select", "curves", "data.jsonl"]`."""
    groups = {group.name for group in app.registered_groups}
    words = [w for w in argv[:2] if not w.startswith("-")]
    return "rewardlab " + " ".join(words[: 2 if words and words[0] in groups else 1])


# Command groups with an extra of their own: a module it provides is named under it, not
# under the extra `_lazy.OPTIONAL` lists (`select` = `eval` + scikit-learn + httpx).
GROUP_EXTRAS: dict[str, tuple[str, frozenset[str]]] = {
    "select": ("select", frozenset({"scipy", "matplotlib", "jinja2", "sklearn", "httpx"})),
}


def _user_error(exc: Exception, argv: list[str]) -> str | None:
    """The message for an exception that is the user's to fix (a missing extra, a file that
    cannot be opened or written), or None for a bug, whose traceback should be seen."""
    from rewardlab._lazy import dependency_error
    from rewardlab.errors import DependencyError

    command = _command(argv)
    missing_extra = dependency_error(exc, command) if isinstance(exc, ImportError) else None
    if missing_extra is not None:
        extra, covers = GROUP_EXTRAS.get(command.split(" ")[1] if " " in command else "", ("", frozenset()))
        if extra and set(missing_extra.modules) <= covers:
            missing_extra = DependencyError(missing_extra.needed_by, missing_extra.modules, [extra])
        return str(missing_extra)
    if isinstance(exc, OSError) and exc.filename is not None:
        reason = exc.strerror or type(exc).__name__
        return f"{exc.filename}: {reason}"
    return None


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
