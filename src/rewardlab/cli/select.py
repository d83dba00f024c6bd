"""`rewardlab select`: test-time selection on candidate files (curves, picks) and the search simulator.

A thin shell over `rewardlab.select`: `curves` writes accuracy-vs-compute curves for every
method (JSON + HTML), `pick` writes the answer each method picks per problem, `search` runs a
PRM-guided search per problem against an OpenAI-compatible endpoint, `simulate` compares the
search methods on the offline simulator.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rewardlab.cli._columns import SELECT_COLUMNS, candidate_columns
from rewardlab.cli._options import Flag, settings_options, settings_values, with_options
from rewardlab.cli._progress import progress_option
from rewardlab.core.choices import check_choice, choices_of
from rewardlab.errors import ConfigError, GenerationError, UsageError
from rewardlab.runner.candidate_rows import CandidateColumns

# option classes only: none imports numpy (the CLI reads them at start-up)
from rewardlab.select.openai_generator import OpenAIStepGenerator
from rewardlab.select.options import (
    CurveMethod,
    CurveOptions,
    Equivalence,
    PickMethod,
    PickOptions,
    SearchOptions,
    SimulationOptions,
    SimulatorConfig,
    WeightMap,
)
from rewardlab.select.problems import load_problems

if TYPE_CHECKING:
    from rewardlab.errors import InputError
    from rewardlab.select.candidates import Candidates

select_app = typer.Typer(help="Test-time selection: best-of-n, votes, curves, PRM-guided search.", no_args_is_help=True)

# the column options, shared with `rewardlab eval` (names, defaults and help from CandidateColumns)
COLUMNS = SELECT_COLUMNS
# `select curves` and `pick`: how the selectors pick (PickOptions) and the curves' budgets and
# subsets (CurveOptions), the defaults `pick` and `selection_curves` take
METHOD = [Flag("method", ("--method", "-m"))]
SELECTION = [Flag("equivalence"), Flag("weights")]
CURVES = [Flag("max_n"), Flag("max_subsets"), Flag("seed")]
_REWARD = typer.Option(None, "--reward", help="Reward spec (TOML) to score the responses with, instead of the scores column.")


def _rescored(candidates: Candidates, reward_spec: Path | None, progress: bool | None) -> tuple[Candidates, dict[str, Any] | None]:
    """The candidates scored by `reward_spec` (errors stay NaN and are reported), with a bar
    over the candidates scored, and what to hash as the score source; unchanged without a spec."""
    if reward_spec is None:
        return candidates, None
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console, growing_total
    from rewardlab.compose import build
    from rewardlab.core import spec_hash
    from rewardlab.evaluate._scoring import scorer
    from rewardlab.select.scores import score_candidates

    reward = build(reward_spec)
    with progress_bar(progress, f"scoring candidates with {reward.name}", unit="samples") as (advance, set_total), \
            scorer(reward, progress=advance, on_batch=growing_total(set_total)) as score:
        got = score_candidates(reward, candidates.samples(), score=score)
    if got.errors or got.skipped:
        console.print(f"{got.errors} candidates got an error result {got.error_kinds} and {got.skipped} were skipped: "
                      "they have no score and are never picked")  # fmt: skip
    return candidates.with_scores(got.scores), {"reward": reward.name, "spec_hash": spec_hash(reward)}


def _load(data: Path, columns: CandidateColumns) -> tuple[Candidates, list[InputError]]:
    """The readable rows of a candidate file, and the errors of the others (printed: no row is
    dropped without a word)."""
    from rewardlab.cli._render import print_unreadable
    from rewardlab.select.candidates import load_candidates

    unreadable: list[InputError] = []
    candidates = load_candidates(data, columns, on_error=unreadable.append)
    print_unreadable(unreadable)
    return candidates, unreadable


def _in_line_order(rows: Iterator[dict[str, Any]], extra: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`rows` (in line order, streamed) with the `extra` rows (sorted by line) merged in."""
    pending = iter(extra)
    nxt = next(pending, None)
    for row in rows:
        while nxt is not None and nxt["line"] < (row.get("line") or 0):
            yield nxt
            nxt = next(pending, None)
        yield row
    if nxt is not None:
        yield nxt
    yield from pending


def _prm(reward: Path | None, delimiter: str) -> tuple[Any, dict[str, Any] | None]:
    """The search's step scorer (the reward spec as a PRM; without one, a vote's unscored
    steps) and what identifies it in the configuration."""
    from rewardlab.select.batch import UnscoredVote

    if reward is None:
        return UnscoredVote(), None
    from rewardlab.compose import build
    from rewardlab.core import spec_hash
    from rewardlab.select.generate import RewardScorer

    built = build(reward)
    return RewardScorer(built, delimiter=delimiter), {"reward": built.name, "spec_hash": spec_hash(built)}


def _searched_line(summary: dict[str, Any], unreadable: int, method: str) -> str:
    line = f"searched {summary['problems'] - unreadable} problems with {method}: {summary['errors'] - unreadable} generation errors"
    if summary["accuracy"] is not None:
        line += f", accuracy {summary['accuracy']:.4f} on {summary['judged']} judged"
    if summary["tokens_per_problem"] is not None:
        line += f", {summary['tokens_per_problem']:.0f} tokens per problem"
    return line


def _calibrated(path: Path, prompt: str, reference: str | None, generator: Any, scorer: Any, options: Any) -> Any:
    """Early rejection's calibrated PRM and threshold, from the held-out problems at `path`."""
    from rewardlab.cli._render import console
    from rewardlab.select.batch import calibrate_rejection

    held_out = load_problems(path, prompt=prompt, reference=reference)
    console.print(f"calibrating the PRM on {len(held_out)} held-out problems ({options.n} rollouts each, twice)")
    rule = calibrate_rejection(generator, scorer, held_out, options)
    console.print(f"early rejection threshold {rule.threshold:.3f} (accuracy lost against best-of-{options.n} <= {options.max_loss:g}), "
                  f"calibrated on {rule.examples} prefixes")  # fmt: skip
    return rule


def _start_math_workers(equivalence: str, votes: bool) -> None:
    """Launch the sympy worker in the background when votes will group answers by maths
    checks: it imports sympy (~2 s) while the file is read, instead of after."""
    if equivalence == "math" and votes:
        from rewardlab.verify.math import warm_up

        warm_up(wait=False)


def _check_choice(option: str, value: str, literal: Any) -> None:
    """A value outside `literal`'s choices is a usage error naming `option` and the choices."""
    try:
        check_choice(option, value, literal)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


@select_app.command("curves")
@with_options([*settings_options(CurveOptions, CURVES[:1]), *settings_options(CandidateColumns, COLUMNS),
               *settings_options(PickOptions, SELECTION), *settings_options(CurveOptions, CURVES[1:])], after="methods")  # fmt: skip
def curves_command(
    data: Path = typer.Argument(..., help="Candidate file: one row per problem with lists per candidate."),
    out: Path = typer.Option(Path("rewardlab-select"), "--out", "-o", help="Directory for curves.html and curves.json."),
    methods: str = typer.Option("", "--methods", help=f"Comma-separated subset of {', '.join(choices_of(CurveMethod))} (default: all the columns allow)."),
    reward: Path | None = _REWARD,
    progress: bool | None = progress_option("Progress bar over problems x budgets, with rate and ETA (default: on when stderr is a terminal)."),
    **settings: Any,
) -> None:
    """Accuracy vs samples and tokens for every selection method, with bootstrap CIs over problems."""
    from rewardlab._lazy import require
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console

    for module in ("scipy", "matplotlib", "jinja2"):  # the statistics and the report page
        require(module, needed_by="rewardlab select curves", extra="select")
    from rewardlab.select.curves import METHODS, selection_curves
    from rewardlab.select.report import write_curves

    equivalence, weights = settings["equivalence"], settings["weights"]
    curve = _options(CurveOptions, CURVES, settings)
    _check_choice("--equivalence", equivalence, Equivalence)
    _check_choice("--weights", weights, WeightMap)
    chosen = [m.strip() for m in methods.split(",") if m.strip()] or None
    _start_math_workers(equivalence, votes=chosen is None or any(METHODS.get(m, (False,))[0] for m in chosen))
    loaded, unreadable = _load(data, candidate_columns(COLUMNS, settings))
    candidates, source = _rescored(loaded, reward, progress)
    ns = list(range(1, curve.max_n + 1)) if curve.max_n > 0 else None
    with progress_bar(progress, f"curves of {candidates.n_problems:,} problems", unit="problems") as (advance, set_total):
        curves = selection_curves(candidates, methods=chosen, ns=ns, equivalence=equivalence, weights=weights,
                                  max_subsets=curve.max_subsets, seed=curve.seed, score_source=source,
                                  unreadable=unreadable, progress=advance, on_total=set_total)  # fmt: skip
    html, json_path = write_curves(curves, out)
    from rich.table import Table

    table = Table(title=f"accuracy [95% CI] on {candidates.n_problems} problems")
    table.add_column("n")
    for m in curves.points:
        table.add_column(m)
    first = next(iter(curves.points.values()))
    for i, point in enumerate(first):
        table.add_row(str(point.n), *(str(curves.points[m][i].accuracy) for m in curves.points))
    console.print(table)
    if curves.unlabelled:
        console.print(f"[yellow]{curves.unlabelled} candidates have no label[/]: counted as not right, so each accuracy is a lower bound")
    console.print(f"wrote {html} and {json_path}")


@select_app.command("pick")
@with_options(settings_options(PickOptions, METHOD), after="data")
@with_options([*settings_options(CandidateColumns, COLUMNS), *settings_options(PickOptions, SELECTION)], after="output")
def pick_command(
    data: Path = typer.Argument(..., help="Candidate file: one row per problem with lists per candidate."),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL: one row per problem with the picked candidate."),
    reward: Path | None = _REWARD,
    progress: bool | None = progress_option("Progress bar over the candidates scored with --reward, with rate and ETA (default: on when stderr is a terminal)."),
    **settings: Any,
) -> None:
    """Pick one candidate per problem; prints the accuracy when the file has labels."""
    from rewardlab.cli._render import console
    from rewardlab.select.pick import pick, write_picks

    method, equivalence, weights = settings["method"], settings["equivalence"], settings["weights"]
    _check_choice("--method", method, PickMethod)
    _check_choice("--equivalence", equivalence, Equivalence)
    _check_choice("--weights", weights, WeightMap)
    _start_math_workers(equivalence, votes=method != "best_of_n")
    loaded, unreadable = _load(data, candidate_columns(COLUMNS, settings))
    candidates, source = _rescored(loaded, reward, progress)
    selection = pick(candidates, method, equivalence=equivalence, weights=weights)
    write_picks(candidates, selection, method, output, unreadable=unreadable, equivalence=equivalence, weights=weights, scores=source)
    line = f"picked with {method} on {candidates.n_problems} problems ({selection.abstained} abstained)"
    if candidates.correct is not None:
        import numpy as np

        credit = selection.credit(candidates.correct)  # NaN where the pick's label is unknown
        unknown = int(np.isnan(credit).sum())
        # as in the curves and `rewardlab eval`: a candidate without a label is not right
        line += f": accuracy {float(np.nan_to_num(credit).mean()):.4f}"
        if unknown:
            line += f" ({unknown} pick{'s' if unknown > 1 else ''} without a label counted as not right: a lower bound)"
    console.print(line)
    console.print(f"wrote {candidates.n_problems + len(unreadable)} rows to {output}"
                  + (f" ({len(unreadable)} error rows)" if unreadable else ""))  # fmt: skip


# `select search`: the method and its budget (SearchOptions), the endpoint (OpenAIStepGenerator's
# arguments) and the problem columns (load_problems'); names, defaults, choices and help from there.
SEARCH = [Flag("method", ("--method", "-m")), Flag("n"), Flag("confidence"), Flag("max_loss"), Flag("width"),
          Flag("expand"), Flag("simulations"), Flag("max_tokens"), Flag("aggregate"), Flag("equivalence")]  # fmt: skip
ENDPOINT = [Flag("base_url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."), Flag("model"),
            Flag("delimiter", help="Text between steps (generation stops there); \\n is a newline."),
            Flag("max_step_tokens"), Flag("temperature"), Flag("timeout"), Flag("retries")]  # fmt: skip
PROBLEMS = [Flag("prompt"), Flag("reference", help="Column: the gold answer ('' for none).")]
# `select simulate`: what is compared (SimulationOptions) and how informative the simulated PRM is
SIMULATE = [Flag("problems", ("--problems", "-n")), Flag("budget"), Flag("width"), Flag("expand"), Flag("seed")]
SIMULATOR = [Flag("prm_separation")]


def _options(kind: Any, flags: list[Flag], values: dict[str, Any]) -> Any:
    """`kind` built from the command's values of `flags`; a value it refuses is a usage error."""
    from rewardlab.errors import ArrayError

    try:
        return kind(**settings_values(flags, values))
    except (ArrayError, ConfigError) as exc:
        raise UsageError(f"invalid option: {exc}") from exc


@select_app.command("search")
@with_options([*settings_options(OpenAIStepGenerator, ENDPOINT[:2]), *settings_options(SearchOptions, SEARCH),
               *settings_options(load_problems, PROBLEMS), *settings_options(OpenAIStepGenerator, ENDPOINT[2:])],
              after="output")  # fmt: skip
def search_command(
    data: Path = typer.Argument(..., help="Problems: JSONL/Parquet, one row per problem."),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL: one row per problem with its answer, tokens and steps."),
    reward: Path | None = typer.Option(None, "--reward", help="Reward spec (TOML) used as the PRM (not needed by majority, adaptive)."),
    calibration: Path | None = typer.Option(None, "--calibration", help="early_rejection: held-out problems with gold answers to calibrate the PRM on."),
    progress: bool | None = progress_option("Progress bar over the problems searched, with rate and ETA (default: on when stderr is a terminal)."),
    **settings: Any,
) -> None:
    """PRM-guided search per problem against an OpenAI-compatible /completions endpoint."""
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console, counting, print_unreadable
    from rewardlab.select.batch import search_config, search_problems, write_search
    from rewardlab.select.options import VOTE_METHODS
    from rewardlab.select.problems import unreadable_rows

    options: SearchOptions = _options(SearchOptions, SEARCH, settings)
    method = options.method
    if (method == "early_rejection") != (calibration is not None):
        raise UsageError("--method early_rejection calibrates its PRM on held-out problems: give --calibration FILE (and only then)")
    if reward is None and method not in VOTE_METHODS:
        raise UsageError(f"--method {method} is guided by a PRM: give --reward SPEC.toml (or use --method majority or adaptive)")
    endpoint = settings_values(ENDPOINT, settings)
    endpoint["delimiter"] = endpoint["delimiter"].encode().decode("unicode_escape")
    prompt, reference = settings["prompt"], settings["reference"] or None
    unreadable: list[InputError] = []
    problems = load_problems(data, prompt=prompt, reference=reference, on_error=unreadable.append)
    print_unreadable(unreadable)
    try:
        generator = OpenAIStepGenerator(**endpoint)
    except GenerationError as exc:
        raise UsageError(f"invalid option: {exc}") from exc
    scorer, prm = _prm(reward, endpoint["delimiter"])
    try:
        rejection = None if calibration is None else _calibrated(calibration, prompt, reference, generator, scorer, options)
        config = search_config(options, model=endpoint["model"], delimiter=endpoint["delimiter"], max_step_tokens=endpoint["max_step_tokens"],
                               temperature=endpoint["temperature"], prm=prm, rejection=None if rejection is None else rejection.describe())  # fmt: skip
        with progress_bar(progress, f"searching {data.name}", unit="problems") as (advance, set_total):
            set_total(len(problems))
            searched = counting(search_problems(problems, generator, scorer, options, rejection), advance, every=1)
            summary = write_search(_in_line_order(searched, unreadable_rows(unreadable, method)), output, config)
    finally:
        generator.close()
    console.print(_searched_line(summary, len(unreadable), method))
    if getattr(scorer, "errors", 0):
        console.print(f"the PRM gave {scorer.errors} error results {scorer.error_kinds}: those steps scored -inf, never preferred")
    console.print(f"wrote {summary['problems']} rows to {output}")
    if summary["errors"]:
        raise typer.Exit(1)


@select_app.command("simulate")
@with_options([*settings_options(SimulationOptions, SIMULATE), *settings_options(SimulatorConfig, SIMULATOR)], after=None)
def simulate_command(**settings: Any) -> None:
    """Every search method on the offline step simulator: accuracy [95% CI] and tokens per problem."""
    from rich.table import Table

    from rewardlab.cli._render import console
    from rewardlab.select.simulate import compare_methods

    options: SimulationOptions = _options(SimulationOptions, SIMULATE, settings)
    rows = compare_methods(_options(SimulatorConfig, SIMULATOR, settings), options)
    table = Table(title=f"{options.problems} simulated problems (seed {options.seed})")
    for column in ("method", "accuracy [95% CI]", "tokens / problem", "samples / problem"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.method, str(row.accuracy), f"{row.tokens:.0f}", "" if row.samples is None else f"{row.samples:.2f}")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(select_app, name="select")
