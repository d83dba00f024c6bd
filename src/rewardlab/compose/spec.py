"""Declarative reward specs in TOML, validated before anything runs.

    [reward]
    name = "math-rlvr"
    combine = "weighted"          # weighted (default) | formula | min | max
    # formula = "format * 0.1 + correct"
    # clip = [0.0, 1.1]

    [[reward.components]]
    name = "format"
    use = "format.tags"           # registry name (`rewardlab list`)
    weight = 0.1

    [[reward.components]]
    name = "correct"
    use = "math.answer"
    weight = 1.0
    requires = ["format"]         # gate: counts only when `format` passes
    on_error = "skip"             # zero | skip | fail (default)
    params = { strict = true }    # the reward's own parameters

    [[reward.objectives]]         # optional: a reward vector beside the total
    name = "accuracy"             # (combine = "objectives" scalarises it with per-sample
    expr = "correct"              # weights; see rewardlab.compose.objectives)

`check()` collects *every* problem (TOML syntax with line and column, unknown keys, wrong types,
unknown reward names, parameter typos, requirement cycles, formula errors), each with its spec
key, so a bad spec fails at `rewardlab check` and not after an hour of scoring.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rewardlab.core import JSON, Reward
from rewardlab.core.jsontext import utf8_text
from rewardlab.core.registry import Registry, registry
from rewardlab.errors import DependencyError, SpecError, SpecProblem

if TYPE_CHECKING:
    from rewardlab.compose.combinators import Component

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


class ComponentSpec(BaseModel):
    """One `[[reward.components]]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=IDENTIFIER, description="component name; a formula variable")
    use: str = Field(min_length=1, description="registry name of the reward")
    weight: float = Field(1.0, allow_inf_nan=False)
    requires: list[str] = Field(default_factory=list, description="components that must pass first")
    on_error: Literal["zero", "skip", "fail"] = "fail"
    threshold: float | None = Field(None, allow_inf_nan=False, description="score at which it passes a gate")
    params: dict[str, Any] = Field(default_factory=dict)


class ObjectiveSpec(BaseModel):
    """One `[[reward.objectives]]` table: an entry of the reward vector."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=IDENTIFIER, description="objective name")
    expr: str = Field(min_length=1, description="a component name, or a formula over component names")
    weight: float = Field(1.0, allow_inf_nan=False, description='default weight under combine = "objectives"')


class RewardSpec(BaseModel):
    """The `[reward]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    combine: Literal["weighted", "formula", "min", "max", "objectives"] = "weighted"
    formula: str | None = None
    clip: tuple[float, float] | None = None
    components: list[ComponentSpec] = Field(min_length=1)
    objectives: list[ObjectiveSpec] = Field(default_factory=list)

    @field_validator("clip")
    @classmethod
    def _clip_order(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and v[0] > v[1]:
            raise ValueError(f"clip low {v[0]} is above high {v[1]}")
        return v


class SpecFile(BaseModel):
    """A whole spec file: one `[reward]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reward: RewardSpec


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _pydantic_problems(exc: ValidationError) -> list[SpecProblem]:
    problems = []
    for err in exc.errors():
        loc = _location(err["loc"])
        if err["type"] == "extra_forbidden":
            key = err["loc"][-1]
            hint = " (reward parameters go under `params`)" if "components" in loc else ""
            problems.append(SpecProblem(loc, f"unknown key {key!r}{hint}"))
        else:
            problems.append(SpecProblem(loc, err["msg"]))
    return problems


def read_spec_source(
    source: str | Path | dict[str, JSON], *, registry_: Registry | None = None
) -> tuple[dict[str, JSON], str | None]:
    """The raw spec dict and the file it came from (None for text, dicts and reward names).

    `source` is a path to a TOML file, TOML text, an already parsed dict, or the registered
    name of one reward (`"math.answer"`: that reward with its default parameters, when no file
    of that name exists).
    """
    if isinstance(source, dict):
        return source, None
    named = single_reward_spec(str(source), registry_ or registry)
    if named is not None:
        return named, None
    path: Path | None = None
    # TOML text has a newline, a `key = value` or a `[table]`; one line without them, or
    # ending in .toml, is a path
    one_line = isinstance(source, str) and "\n" not in source
    toml_text = isinstance(source, str) and not (one_line and (source.strip().endswith(".toml") or not any(c in source for c in "=[")))
    if not toml_text:
        path = Path(source)
        if not _is_file(str(path)):
            raise SpecError(_not_found(str(source), registry_ or registry))
        try:
            text = utf8_text(path.read_bytes()).removeprefix("\ufeff")  # TOML is UTF-8; a BOM is dropped
        except ValueError as exc:
            raise SpecError([SpecProblem("", str(exc))], source=str(path)) from None
    else:
        text = str(source)
    try:
        return tomllib.loads(text), str(path) if path else None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([SpecProblem("", f"TOML syntax error: {exc}")], source=str(path) if path else None) from exc


def _not_found(source: str, registry_: Registry) -> str:
    """Why `source` is no spec: not a file, and (for what could be one) not a reward name."""
    message = f"spec file not found: {source}"
    if source.endswith(".toml") or any(c in source for c in "/\\"):
        return message
    close = difflib.get_close_matches(source, registry_.names(), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else "`rewardlab list` shows them"
    return f"{message}, and it is not a registered reward name ({hint})"


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def single_reward_spec(name: str, registry_: Registry) -> dict[str, JSON] | None:
    """The spec of the one registered reward `name` with its defaults, or None when `name` is
    not a reward name, or is also a file (the file wins).

        >>> single_reward_spec("text.exact", registry)
        {'reward': {'name': 'text.exact', 'components': [{'name': 'text_exact', 'use': 'text.exact'}]}}
    """
    if not name or any(c in name for c in "\n=[/\\") or _is_file(name) or name not in registry_:
        return None
    component = re.sub(r"\W", "_", name)
    if not re.match(IDENTIFIER, component):
        component = f"r_{component}"
    return {"reward": {"name": name, "components": [{"name": component, "use": name}]}}


def parse_spec(source: str | Path | dict[str, JSON]) -> SpecFile:
    """Validate the shape of a spec (not the reward names). Raises SpecError."""
    raw, origin = read_spec_source(source)
    try:
        return SpecFile.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(_pydantic_problems(exc), source=origin) from exc


def check(source: str | Path | dict[str, JSON] | Reward, *, registry_: Registry | None = None) -> list[SpecProblem]:
    """Every problem of a spec, or an empty list when it builds."""
    if isinstance(source, Reward):
        return []
    try:
        build(source, registry_=registry_)
    except SpecError as exc:
        return list(exc.problems)
    except DependencyError as exc:
        return [SpecProblem("", str(exc))]
    return []


def build(source: str | Path | dict[str, JSON] | Reward, *, registry_: Registry | None = None) -> Reward:
    """Build the Reward a spec describes (a built Reward is returned as is).

    The result is a combinator (`Weighted`, `FormulaCombine`, `MinOf`, `MaxOf`) with a
    `spec_hash` attribute; `repr()` shows its tree.

    Raises:
        SpecError: listing every problem found, with spec keys.
        DependencyError: the spec is sound but a reward in it needs an extra that is not
            installed (every missing extra is named).
    """
    from rewardlab.compose.combinators import FormulaCombine, ObjectiveSum, combinator_for
    from rewardlab.compose.objectives import Objective

    if isinstance(source, Reward):
        return source
    raw, origin = read_spec_source(source, registry_=registry_)
    problems: list[SpecProblem] = []
    spec: SpecFile | None = None
    try:
        spec = SpecFile.model_validate(raw)
        component_specs = list(enumerate(spec.reward.components))
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc))
        component_specs = _valid_components(raw)  # keep checking what can be checked
    unavailable: list[DependencyError] = []
    components = _build_components(component_specs, registry_ or registry, problems, unavailable)
    if spec is not None:
        problems.extend(_structure_problems(spec.reward))
    if problems or spec is None:
        problems.extend(SpecProblem("", str(exc)) for exc in unavailable)
        raise SpecError(problems, source=origin)
    if unavailable:  # a sound spec that this installation cannot run
        raise _merged(unavailable)
    spec_r = spec.reward
    objectives = [Objective(o.name, o.expr, o.weight) for o in spec_r.objectives]
    if spec_r.combine == "formula":
        built: Reward = FormulaCombine(components, spec_r.formula or "", name=spec_r.name, clip=spec_r.clip, objectives=objectives)
    elif spec_r.combine == "objectives":
        built = ObjectiveSum(components, objectives=objectives, name=spec_r.name, clip=spec_r.clip)
    else:
        built = combinator_for(spec_r.combine)(components, name=spec_r.name, clip=spec_r.clip, objectives=objectives)
    return built


def _valid_components(raw: dict[str, JSON]) -> list[tuple[int, ComponentSpec]]:
    """The components of an invalid spec that are valid on their own."""
    table = raw.get("reward")
    items = table.get("components") if isinstance(table, dict) else None
    out = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        try:
            out.append((i, ComponentSpec.model_validate(item)))
        except ValidationError:
            continue  # already reported by the whole-spec validation
    return out


def _merged(errors: list[DependencyError]) -> DependencyError:
    """One error naming every missing module and extra, so one `pip install` fixes the spec."""
    if len(errors) == 1:
        return errors[0]
    needed_by = " and ".join(dict.fromkeys(e.needed_by for e in errors))
    modules = list(dict.fromkeys(m for e in errors for m in e.modules))
    return DependencyError(needed_by, modules, list(dict.fromkeys(x for e in errors for x in e.extras)))


def _build_components(
    specs: list[tuple[int, ComponentSpec]],
    reg: Registry,
    problems: list[SpecProblem],
    unavailable: list[DependencyError],
) -> list[Component]:
    from rewardlab.compose.combinators import Component

    components = []
    for i, comp in specs:
        where = f"reward.components[{i}]"
        try:
            reward_ = reg.create(comp.use, comp.params, location=where)
        except SpecError as exc:
            problems.extend(SpecProblem(p.location or f"{where}.use", p.message) for p in exc.problems)
            continue
        except DependencyError as exc:
            unavailable.append(exc)
            continue
        components.append(Component(comp.name, reward_, comp.weight, tuple(comp.requires), comp.on_error, comp.threshold))
    return components


def _structure_problems(spec: RewardSpec) -> list[SpecProblem]:
    """Duplicate names, unknown or cyclic requirements, formula errors."""
    from rewardlab.compose.combinators import requirement_cycles
    from rewardlab.compose.formula import Formula, FormulaError

    problems: list[SpecProblem] = []
    names = [c.name for c in spec.components]
    for i, comp in enumerate(spec.components):
        where = f"reward.components[{i}]"
        if names.count(comp.name) > 1:
            problems.append(SpecProblem(f"{where}.name", f"duplicate component name {comp.name!r}"))
        for r in comp.requires:
            if r not in names:
                problems.append(SpecProblem(f"{where}.requires", f"unknown component {r!r} (components: {', '.join(names)})"))
    for cycle in requirement_cycles({c.name: c.requires for c in spec.components}):
        problems.append(SpecProblem("reward.components", f"requirement cycle: {' -> '.join(cycle)}"))
    if spec.combine == "formula":
        if not spec.formula:
            problems.append(SpecProblem("reward.formula", 'combine = "formula" needs a `formula`'))
        else:
            try:
                Formula(spec.formula, names=set(names))
            except FormulaError as exc:
                problems.append(SpecProblem("reward.formula", str(exc)))
    elif spec.formula:
        problems.append(SpecProblem("reward.formula", f'a formula is only used with combine = "formula" (combine is {spec.combine!r})'))
    return problems + _objective_problems(spec, set(names))


def _objective_problems(spec: RewardSpec, names: set[str]) -> list[SpecProblem]:
    """Duplicate objective names and objective formulas that do not compile."""
    from rewardlab.compose.formula import Formula, FormulaError

    problems: list[SpecProblem] = []
    if spec.combine == "objectives" and not spec.objectives:
        problems.append(SpecProblem("reward.objectives", 'combine = "objectives" needs at least one [[reward.objectives]]'))
    seen = [o.name for o in spec.objectives]
    for i, o in enumerate(spec.objectives):
        where = f"reward.objectives[{i}]"
        if seen.count(o.name) > 1:
            problems.append(SpecProblem(f"{where}.name", f"duplicate objective name {o.name!r}"))
        try:
            Formula(o.expr, names=names)
        except FormulaError as exc:
            problems.append(SpecProblem(f"{where}.expr", str(exc)))
    return problems
