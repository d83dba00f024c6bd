"""Dotted names for rewards: `registry.create("text.exact", {"case_sensitive": True})`.

Three sources, looked up in this order:
1. rewards registered at run time (`registry.register`, `@reward(register=True)`);
2. rewardlab's built-ins, listed in `BUILTINS` as `"module:attribute"` strings and imported
   only when used, so `rewardlab list` does not import sympy or torch;
3. third-party packages, through the `rewardlab.rewards` entry-point group
   (`[project.entry-points."rewardlab.rewards"] "acme.toxicity" = "acme.rewards:Toxicity"`).

A factory is a Reward class (its `__init__` keyword arguments are the parameters) or a
`FunctionReward` (its function's keyword arguments are). Parameters are checked against the
factory's signature and type hints before anything runs, so a typo fails at `rewardlab check`.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from rewardlab._lazy import dependency_error, extras_for, missing
from rewardlab.core.reward import FunctionReward, Reward
from rewardlab.core.sample import JSON
from rewardlab.errors import (
    DependencyError,
    RegistryError,
    SpecError,
    SpecProblem,
    UnknownRewardError,
)

ENTRY_POINT_GROUP = "rewardlab.rewards"

# name -> "module:attribute". Each area adds its built-ins here; imported lazily.
BUILTINS: dict[str, str] = {
    "text.exact": "rewardlab.verify.text:ExactMatch",
    "text.regex": "rewardlab.verify.text:RegexMatch",
    "format.tags": "rewardlab.verify.format:TagFormat",
    "length.tokens": "rewardlab.verify.length:LengthTerm",
    # the everyday reward zoo (docs/rewards.md)
    "text.normalized": "rewardlab.verify.text:NormalizedMatch",
    "text.f1": "rewardlab.verify.text:TokenF1",
    "text.choice": "rewardlab.verify.text:ChoiceMatch",
    "text.contains": "rewardlab.verify.text:Contains",
    "text.keywords": "rewardlab.verify.text:KeywordCoverage",
    "similarity.bleu": "rewardlab.verify.similarity:BLEU",
    "similarity.chrf": "rewardlab.verify.similarity:ChrF",
    "similarity.rouge": "rewardlab.verify.similarity:ROUGE",
    "similarity.fuzzy": "rewardlab.verify.similarity:Fuzzy",
    "structure.json": "rewardlab.verify.structure:JSONValid",
    "structure.json_schema": "rewardlab.verify.structure:JSONSchemaValid",
    "structure.tool_call": "rewardlab.verify.structure:ToolCallMatch",
    "structure.xml": "rewardlab.verify.structure:XMLWellFormed",
    "geometry.box_iou": "rewardlab.verify.geometry:BoxIoU",
    "geometry.interval_iou": "rewardlab.verify.geometry:IntervalIoU",
    "sets.f1": "rewardlab.verify.geometry:SetF1",
    "sets.ordered": "rewardlab.verify.geometry:OrderedMatch",
    "shaping.soft_overlong": "rewardlab.verify.shaping_terms:SoftOverlong",
    "shaping.cosine": "rewardlab.verify.shaping_terms:CosineScaled",
    "shaping.repetition": "rewardlab.verify.shaping_terms:RepetitionPenalty",
    "shaping.length_budget": "rewardlab.verify.shaping_terms:LengthBudget",
    "shaping.adaptive_length": "rewardlab.verify.shaping_terms:AdaptiveLengthPenalty",
    "ifeval.constraints": "rewardlab.verify.ifeval:IFEvalConstraints",
    "judge.llm": "rewardlab.judges.llm:LLMJudge",
    "judge.pairwise": "rewardlab.judges.protocols:PairwiseJudge",  # docs/judges.md
    "judge.rubric": "rewardlab.judges.rubric:Rubric",  # docs/judges.md
    "labelfree.majority_vote": "rewardlab.judges.consensus:MajorityVote",  # docs/judges.md
    "labelfree.consensus": "rewardlab.judges.propagation:Consensus",  # docs/judges.md
    "labelfree.self_certainty": "rewardlab.judges.certainty:SelfCertainty",  # docs/judges.md
    "labelfree.entropy": "rewardlab.judges.certainty:Entropy",  # docs/judges.md
    "graders.string_check": "rewardlab.verify.graders:StringCheck",
    "graders.text_similarity": "rewardlab.verify.graders:TextSimilarity",
    "graders.python": "rewardlab.verify.graders:PythonGrader",
    "math.answer": "rewardlab.verify.math.reward:MathAnswer",  # docs/math.md
    "code.tests": "rewardlab.verify.code.reward:CodeTests",  # docs/code.md
    "model.rm": "rewardlab.models.reward:ModelReward",  # docs/models.md
    "model.prm": "rewardlab.models.prm:ProcessReward",  # docs/models.md
    "model.hf": "rewardlab.models.hf_reward:HFReward",  # docs/models.md
    "model.hf_prm": "rewardlab.models.hf_prm:HFProcessReward",  # docs/models.md
    "rm.trace": "rewardlab.envs.rm.reward:RMTraceReward",  # docs/envs.md
    # agent trajectories (docs/agents.md)
    "agent.tool_calls": "rewardlab.agent.tool_calls:ToolCalls",
    "agent.state": "rewardlab.agent.state:StateChecks",
    "agent.state_replay": "rewardlab.agent.replay:StateReplay",
    "agent.subtasks": "rewardlab.agent.subtasks:Subtasks",
    "agent.terms": "rewardlab.agent.subtasks:TrajectoryTerms",
    "agent.rank": "rewardlab.agent.judge:GroupRank",
    "agent.judge": "rewardlab.agent.judge:TrajectoryJudge",
}

# Optional modules (import names) a built-in imports only when it scores, so importing its
# class succeeds without them; `rewardlab list`/`check` mark it unavailable and building it
# raises `DependencyError` naming the extra (`rewardlab._lazy.OPTIONAL`). Built-ins whose
# module imports an extra at the top (torch for `model.*`) are found missing on import.
NEEDS: dict[str, tuple[str, ...]] = {
    "similarity.bleu": ("sacrebleu",),
    "similarity.chrf": ("sacrebleu",),
    "similarity.rouge": ("rouge_score",),
    "similarity.fuzzy": ("rapidfuzz",),
    "structure.json_schema": ("jsonschema",),
    "graders.text_similarity": ("rapidfuzz", "sacrebleu", "rouge_score"),
    "judge.llm": ("httpx",),
    "judge.pairwise": ("httpx",),
    "judge.rubric": ("httpx",),
    "agent.rank": ("httpx",),
    "agent.judge": ("httpx",),
    "math.answer": ("sympy", "latex2sympy2_extended"),
    "model.rm": ("torch",),
    "model.prm": ("torch",),
    "model.hf": ("torch", "transformers"),
    "model.hf_prm": ("torch", "transformers"),
}


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of a registered reward, as `rewardlab list` shows it."""

    name: str
    annotation: str
    default: JSON
    required: bool


@dataclass(frozen=True)
class RewardInfo:
    """What `rewardlab list` shows about a registered name."""

    name: str
    summary: str
    range: tuple[float, float] | None
    params: tuple[ParamInfo, ...]
    origin: str
    doc: str = ""  # the whole docstring (`rewardlab list NAME`)


class Registry:
    """Maps dotted names to reward factories."""

    def __init__(self, builtins: Mapping[str, str] | None = None, *, use_entry_points: bool = True):
        self._factories: dict[str, Any] = {}
        self._lazy: dict[str, str] = dict(BUILTINS if builtins is None else builtins)
        self._needs: dict[str, tuple[str, ...]] = dict(NEEDS) if builtins is None else {}
        self._use_entry_points = use_entry_points
        self._entry_points_loaded = False

    # -- registration ----------------------------------------------------------------------
    def register(self, name: str, factory: Any, *, overwrite: bool = False) -> None:
        """Register a Reward class or `FunctionReward` under a dotted name."""
        if not overwrite and (name in self._factories or name in self._lazy):
            raise RegistryError(f"reward name {name!r} is already registered; pass overwrite=True")
        self._factories[name] = factory
        self._lazy.pop(name, None)
        self._needs.pop(name, None)  # a replacement brings its own imports

    # -- lookup ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load_entry_points()
        return sorted({*self._factories, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def factory(self, name: str, *, location: str = "") -> Any:
        """The factory for `name`; raises `UnknownRewardError` with suggestions."""
        if name in self._factories:
            return self._factories[name]
        if name not in self._lazy:
            self._load_entry_points()
        if name in self._lazy:
            target = self._lazy[name]
            module, _, attr = target.partition(":")
            try:
                factory = getattr(importlib.import_module(module), attr)
            except ImportError as exc:
                missing_extra = dependency_error(exc, f"reward {name!r}")
                if missing_extra is not None:
                    raise missing_extra from exc
                raise SpecError(
                    [SpecProblem(location, f"reward {name!r} cannot be imported: {exc}")]
                ) from exc
            self._factories[name] = factory
            return factory
        suggestions = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.5)
        raise UnknownRewardError(name, suggestions, location=location)

    def unavailable(self, name: str) -> DependencyError | None:
        """Why `name` cannot be built here (its optional dependencies are missing), or None.

        Raises:
            UnknownRewardError: `name` is not registered.
        """
        gone = missing(*self._needs.get(name, ()))
        if gone:
            return DependencyError(f"reward {name!r}", gone, extras_for(gone))
        try:
            self.factory(name)
        except DependencyError as exc:
            return exc
        return None

    def create(self, name: str, params: Mapping[str, JSON] | None = None, *, location: str = "") -> Reward:
        """Build the reward `name` with `params`, validating them first.

        Raises:
            SpecError: unknown name, unknown parameter (with a suggestion), wrong type.
            DependencyError: the reward needs an extra that is not installed.
        """
        gone = missing(*self._needs.get(name, ()))
        if gone:
            raise DependencyError(f"reward {name!r}", gone, extras_for(gone))
        factory = self.factory(name, location=f"{location}.use" if location else "")
        params = dict(params or {})
        problems = check_params(factory, params, location=location)
        if problems:
            raise SpecError(problems)
        try:
            built = factory(**params)
        except SpecError:
            raise
        except (TypeError, ValueError) as exc:
            raise SpecError([SpecProblem(location, f"{name}: {exc}")]) from exc
        if not isinstance(built, Reward):
            raise SpecError([SpecProblem(location, f"{name!r} did not build a Reward (got {type(built).__name__})")])
        return built

    def info(self, name: str) -> RewardInfo:
        """Summary, range and parameters of `name` (for `rewardlab list`)."""
        factory = self.factory(name)
        target = factory.fn if isinstance(factory, FunctionReward) else factory
        doc = inspect.getdoc(target) or ""
        range_ = getattr(factory, "range", None)
        origin = self._lazy.get(name) or str(getattr(target, "__module__", "?"))
        summary = doc.split("\n\n")[0].replace("\n", " ")
        return RewardInfo(name, summary, range_, tuple(param_infos(factory)), origin, doc)

    # -- entry points ------------------------------------------------------------------------
    def _load_entry_points(self) -> None:
        if self._entry_points_loaded or not self._use_entry_points:
            return
        self._entry_points_loaded = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in self._factories and ep.name not in self._lazy:
                self._lazy[ep.name] = ep.value


def _signature_target(factory: Any) -> tuple[Callable[..., Any], bool]:
    """The callable whose keyword arguments are the parameters, and whether to skip arg 0."""
    if isinstance(factory, FunctionReward):
        return factory.fn, True
    if inspect.isclass(factory):
        return factory.__init__, True
    return factory, False


def _parameters(factory: Any) -> tuple[list[inspect.Parameter], dict[str, Any], bool]:
    target, skip_first = _signature_target(factory)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return [], {}, True
    params = list(signature.parameters.values())[1 if skip_first else 0 :]
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params)
    params = [p for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable forward references: skip type checks, keep name checks
        hints = {}
    return params, hints, open_kwargs


def param_infos(factory: Any) -> list[ParamInfo]:
    params, hints, _ = _parameters(factory)
    preset = factory.params if isinstance(factory, FunctionReward) else {}
    out = []
    for p in params:
        default = preset.get(p.name, None if p.default is p.empty else p.default)
        annotation = hints.get(p.name, p.annotation)
        if annotation is inspect.Parameter.empty:
            text = "any"
        elif isinstance(annotation, str):
            text = annotation
        elif typing.get_args(annotation):  # Literal['a', 'b'], list[str] | None: the whole type
            text = str(annotation)
        else:
            text = getattr(annotation, "__name__", str(annotation))
        out.append(ParamInfo(p.name, str(text).replace("typing.", ""), default, p.default is p.empty and p.name not in preset))
    return out


def check_params(factory: Any, params: Mapping[str, JSON], *, location: str = "") -> list[SpecProblem]:
    """Every problem with `params` for `factory`: unknown names, missing ones, wrong types."""
    from pydantic import TypeAdapter, ValidationError

    known, hints, open_kwargs = _parameters(factory)
    by_name = {p.name: p for p in known}
    preset = factory.params if isinstance(factory, FunctionReward) else {}
    problems: list[SpecProblem] = []
    where = f"{location}.params" if location else "params"
    for key, value in params.items():
        if key not in by_name:
            if open_kwargs:
                continue
            close = difflib.get_close_matches(key, list(by_name), n=1, cutoff=0.6)
            advice = f"; did you mean {close[0]!r}?" if close else f"; known: {sorted(by_name) or 'none'}"
            problems.append(SpecProblem(f"{where}.{key}", f"unknown parameter{advice}"))
            continue
        hint = hints.get(key)
        if hint is None:
            continue
        try:
            TypeAdapter(hint).validate_python(value, strict=False)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"] if exc.errors() else str(exc)
            problems.append(SpecProblem(f"{where}.{key}", f"{reason} (got {value!r})"))
        except Exception:  # a hint pydantic cannot build a validator for: trust the factory
            continue
    for p in known:
        if p.default is p.empty and p.name not in params and p.name not in preset:
            problems.append(SpecProblem(f"{where}.{p.name}", "required parameter is missing"))
    return problems


#: The process-wide registry that specs and the CLI use.
registry = Registry()


def register(name: str, factory: Any, *, overwrite: bool = False) -> None:
    """Register a reward factory in the global registry."""
    registry.register(name, factory, overwrite=overwrite)
