"""Combinators: Rewards built from Rewards, which keep every part's result.

    Weighted / Formula / MinOf / MaxOf   combine named `Component`s into one total
    Gate                                 one reward counts only when another passes
    Clip                                 bound any reward's score

Semantics, per sample:
- Components run in dependency order. A component whose `requires` did not all *pass* is not
  computed at all; its result is `skipped` with reason `gate: ...` and it does not count.
  A prerequisite passes when it is `ok` and its score reaches its `threshold` (default: the top
  of its declared range if finite, else > 0).
- A component `error` follows that component's `on_error` policy, explicitly and visibly:
  `fail` (default): the total is an error naming the component; `zero`: counts as 0.0 and the
  total's `info["errors_as_zero"]` lists it; `skip`: does not count, listed in
  `info["errors_skipped"]`.
- Components that do not count are left out of a weighted sum, min or max (as TRL does with
  a reward function that returns None). In a formula a gated-off component is 0.0; a skipped
  one makes the total `skipped` (a formula cannot be evaluated without it).
- When nothing counts, the total is `skipped`, never 0.

Observing components (`Composite.observed(observer)`, `rewardlab.compose.observer`): the
composite tells the observer how long each call of each computed component took (a gated-off
component is not computed, so not observed). Results are the same with or without one. The
reward server observes the composites it hosts for its per-component latency histograms.
"""

from __future__ import annotations

import copy as _copy
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rewardlab.compose.formula import Formula, FormulaError
from rewardlab.compose.objectives import (
    WEIGHTS_KEY,
    Objective,
    check_objectives,
    objective_values,
    sample_weights,
)
from rewardlab.core import (
    JSON,
    BaseReward,
    ErrorKind,
    Range,
    Reward,
    RewardResult,
    Sample,
    Status,
    batches_in_process,
    group_keys,
    spec_hash,
)
from rewardlab.core.reward import UNBOUNDED, ComponentObserver
from rewardlab.errors import SpecError, SpecProblem

ErrorPolicy = Literal["zero", "skip", "fail"]


@dataclass(frozen=True)
class Component:
    """A named part of a composite reward."""

    name: str
    reward: Reward
    weight: float = 1.0
    requires: tuple[str, ...] = ()
    on_error: ErrorPolicy = "fail"
    threshold: float | None = None

    def pass_threshold(self) -> float:
        if self.threshold is not None:
            return self.threshold
        high = self.reward.range[1]
        return high - 1e-9 if math.isfinite(high) else 1e-12

    def passes(self, result: RewardResult) -> bool:
        return result.status is Status.OK and result.score is not None and result.score >= self.pass_threshold()

    def describe(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "weight": self.weight,
            "requires": list(self.requires),
            "on_error": self.on_error,
            "threshold": self.threshold,
            "reward": self.reward.describe(),
        }


class _Row:
    """The per-sample state while combining: each component's result, which ones a gate
    turned off, and which errors count as zero under `on_error = "zero"`."""

    __slots__ = ("as_zero", "gated", "results", "vector", "weights")

    def __init__(self) -> None:
        self.results: dict[str, RewardResult] = {}
        self.gated: set[str] = set()
        self.as_zero: frozenset[str] = frozenset()
        self.weights: object = None  # the sample's `meta["objective_weights"]`, if it matters
        self.vector: dict[str, float | None] = {}


def requirement_cycles(requires: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Every cycle in a `name -> requires` graph (unknown names ignored), each as a path."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for r in requires.get(name, ()):
            if r not in requires:
                continue
            if state.get(r) == 1:
                cycles.append([*path[path.index(r) :], r])
            elif state.get(r) is None:
                visit(r, [*path, r])
        state[name] = 2

    for name in requires:
        if state.get(name) is None:
            visit(name, [name])
    return cycles


def dependency_order(components: Sequence[Component]) -> list[Component]:
    """Components sorted so every prerequisite comes first; raises SpecError on bad graphs."""
    by_name = {c.name: c for c in components}
    problems = [
        SpecProblem(f"components.{c.name}.requires", f"unknown component {r!r}")
        for c in components
        for r in c.requires
        if r not in by_name
    ]
    problems += [
        SpecProblem("components", f"requirement cycle: {' -> '.join(cycle)}")
        for cycle in requirement_cycles({c.name: c.requires for c in components})
    ]
    if problems:
        raise SpecError(problems)
    order: list[Component] = []
    done: set[str] = set()

    def visit(c: Component) -> None:
        if c.name in done:
            return
        done.add(c.name)
        for r in c.requires:
            visit(by_name[r])
        order.append(c)

    for c in components:
        visit(c)
    return order


class Composite(BaseReward):
    """Runs named components with gates and error policies; subclasses say how to combine."""

    combine: str = "composite"
    # `observer` (a `BaseReward` capability) is told how long each component call took (see
    # `observed`). Not part of `describe()`: observing does not change what is computed.

    def __init__(
        self,
        components: Sequence[Component],
        *,
        name: str = "composite",
        clip: tuple[float, float] | None = None,
        objectives: Sequence[Objective] = (),
    ):
        if not components:
            raise SpecError("a composite reward needs at least one component")
        names = [c.name for c in components]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise SpecError([SpecProblem("components", f"duplicate component names: {duplicates}")])
        if clip is not None and clip[0] > clip[1]:
            raise SpecError([SpecProblem("clip", f"clip low {clip[0]} is above high {clip[1]}")])
        self.components = tuple(components)
        self.objectives = check_objectives(objectives, frozenset(names)) if objectives else ()
        self.name = name
        self.clip = clip
        self._order = dependency_order(self.components)
        self._by_name = {c.name: c for c in self.components}
        self._in_order = [c.name for c in self._order] == [c.name for c in self.components]
        self.range = clip if clip is not None else self._natural_range()
        # A group component makes the whole composite a group reward (`core.group_keys`).
        self.group_keys = frozenset(k for c in self.components for k in group_keys(c.reward))
        # A model component keeps the whole composite in this process (`core.batches_in_process`).
        self.batches_in_process = any(batches_in_process(c.reward) for c in self.components)
        self.spec_hash = spec_hash(self)  # computed once: the tree does not change after construction

    # -- what subclasses define --------------------------------------------------------------
    def _natural_range(self) -> Range:
        return UNBOUNDED

    def _total(self, row: _Row) -> float | RewardResult:
        """The combined score, or a skipped/error result saying why there is none."""
        raise NotImplementedError

    # -- the protocol ------------------------------------------------------------------------
    def observed(self, observer: ComponentObserver | None) -> Composite:
        """A shallow copy of this composite that tells `observer` how long each component
        call takes (``None``: a copy that tells nobody); this one is not changed."""
        copy = _copy.copy(self)
        copy.observer = observer
        return copy

    def score(self, sample: Sample) -> RewardResult:
        # The one-sample path of `score_batch`, without the batch bookkeeping (the runner's
        # workers call this once per row, so its overhead is the runner's overhead).
        row = _Row()
        if self.objectives:
            row.weights = sample.meta.get(WEIGHTS_KEY)
        observer = self.observer
        for comp in self._order:
            if comp.requires and self._gate(comp, row):
                continue
            if observer is None:
                row.results[comp.name] = comp.reward.score(sample)
            else:
                start = time.perf_counter()
                row.results[comp.name] = comp.reward.score(sample)
                observer.observe(comp.name, time.perf_counter() - start, 1)
        return self._finish(row)

    def score_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        rows = [_Row() for _ in samples]
        if self.objectives:
            for row, sample in zip(rows, samples, strict=True):
                row.weights = sample.meta.get(WEIGHTS_KEY)
        observer = self.observer
        for comp in self._order:
            active = [i for i, row in enumerate(rows) if not (comp.requires and self._gate(comp, row))]
            if active:
                start = time.perf_counter()
                scored = comp.reward.score_batch([samples[i] for i in active])
                if observer is not None:
                    observer.observe(comp.name, time.perf_counter() - start, len(active))
                for i, result in zip(active, scored, strict=True):
                    rows[i].results[comp.name] = result
        return [self._finish(row) for row in rows]

    def _gate(self, comp: Component, row: _Row) -> bool:
        """Mark `comp` gated in `row` if a prerequisite did not pass; True when gated."""
        blocked = [r for r in comp.requires if not self._by_name[r].passes(row.results[r])]
        if blocked:
            row.results[comp.name] = RewardResult.skip(f"gate: requires {', '.join(blocked)} to pass")
            row.gated.add(comp.name)
        return bool(blocked)

    def _finish(self, row: _Row) -> RewardResult:
        results = row.results
        ordered = results if self._in_order else {c.name: results[c.name] for c in self.components}
        as_zero: list[str] = []
        skipped_errors: list[str] = []
        for comp in self.components:
            result = results[comp.name]
            if result.status is not Status.ERROR:
                continue
            if comp.on_error == "fail":
                message = f"component {comp.name!r} failed: {result.error}"
                failed: dict[str, JSON] = {"failed_component": comp.name}
                return RewardResult.failure(ErrorKind.COMPONENT, message, components=ordered, info=failed)
            (as_zero if comp.on_error == "zero" else skipped_errors).append(comp.name)
        if as_zero:
            row.as_zero = frozenset(as_zero)
        missing: dict[str, str] = {}
        if self.objectives:
            env, missing = self._env(row, 0.0)
            row.vector, missing = objective_values(self.objectives, env, missing)
        total = self._total(row)
        info: dict[str, JSON] = dict(total.info) if isinstance(total, RewardResult) else {}
        if missing:
            info["objectives_missing"] = dict(missing)
        if as_zero:
            info["errors_as_zero"] = as_zero
        if skipped_errors:
            info["errors_skipped"] = skipped_errors
        vector = row.vector if self.objectives else None
        if isinstance(total, RewardResult):
            if total.status is not Status.OK:
                return RewardResult(None, total.status, ordered, None, info, total.error, objectives=vector)
            total = total.score if total.score is not None else 0.0
        score = total
        if self.clip is not None:
            score = min(max(score, self.clip[0]), self.clip[1])
        return RewardResult.ok(score, components=ordered, info=info, objectives=vector)

    @staticmethod
    def _value(row: _Row, name: str) -> float | None:
        """A component's value if it counts (ok, or an error counted as zero), else None."""
        result = row.results[name]
        if result.status is Status.OK:
            return result.score
        return 0.0 if name in row.as_zero else None

    def _env(self, row: _Row, gated_value: float) -> tuple[dict[str, float], dict[str, str]]:
        """The value of every component as a formula sees it (a gated-off one is
        `gated_value`), and why each of the others has none."""
        env: dict[str, float] = {}
        missing: dict[str, str] = {}
        for c in self.components:
            value = self._value(row, c.name)
            if value is None and c.name in row.gated:
                value = gated_value
            if value is None:
                result = row.results[c.name]
                missing[c.name] = "error skipped" if result.status is Status.ERROR else "skipped"
            else:
                env[c.name] = value
        return env, missing

    # -- description -------------------------------------------------------------------------
    def describe(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "combine": self.combine,
            "clip": list(self.clip) if self.clip else None,
            "components": [c.describe() for c in self.components],
        }
        extra = self._describe_extra()
        out.update(extra)
        if self.objectives:  # only then: specs without objectives keep their hash
            out["objectives"] = [o.describe() for o in self.objectives]
        return out

    def _describe_extra(self) -> dict[str, JSON]:
        return {}

    def __repr__(self) -> str:
        return "\n".join(self._tree_lines())

    def _tree_lines(self) -> list[str]:
        head = f"{type(self).__name__}({self.name!r}"
        head += f", formula={self.formula_text!r}" if isinstance(self, FormulaCombine) else ""
        head += f", clip={list(self.clip)}" if self.clip else ""
        lines = [head + ")"]
        for i, c in enumerate(self.components):
            last = i == len(self.components) - 1
            branch, indent = ("└─ ", "   ") if last else ("├─ ", "│  ")
            label = f"{c.name} ×{c.weight:g}" if isinstance(self, Weighted) else c.name
            if c.requires:
                label += f" requires[{', '.join(c.requires)}]"
            if c.on_error != "fail":
                label += f" on_error={c.on_error}"
            child = repr(c.reward).split("\n")
            lines.append(f"{branch}{label}: {child[0]}")
            lines.extend(indent + line for line in child[1:])
        if self.objectives:
            lines.append("objectives: " + "; ".join(f"{o.name} = {o.expr} (×{o.weight:g})" for o in self.objectives))
        return lines


class Weighted(Composite):
    """Weighted sum of the components that count."""

    combine = "weighted"

    def _natural_range(self) -> Range:
        lo = hi = 0.0
        for c in self.components:
            a, b = c.reward.range[0] * c.weight, c.reward.range[1] * c.weight
            lo += min(a, b, 0.0) if math.isfinite(min(a, b)) else -math.inf
            hi += max(a, b, 0.0) if math.isfinite(max(a, b)) else math.inf
        return (lo, hi)

    def _total(self, row: _Row) -> float | RewardResult:
        total, counted = 0.0, 0
        for c in self.components:
            value = self._value(row, c.name)
            if value is not None:
                total += c.weight * value
                counted += 1
        if counted == 0:
            return RewardResult.skip("no component counted")
        return total


class _Extremum(Composite):
    _use_max = False

    def _natural_range(self) -> Range:
        return (min(c.reward.range[0] for c in self.components), max(c.reward.range[1] for c in self.components))

    def _total(self, row: _Row) -> float | RewardResult:
        values = [v for c in self.components if (v := self._value(row, c.name)) is not None]
        if not values:
            return RewardResult.skip("no component counted")
        return max(values) if self._use_max else min(values)


class MinOf(_Extremum):
    """The lowest score among the components that count (worst case)."""

    combine = "min"


class MaxOf(_Extremum):
    """The highest score among the components that count."""

    combine = "max"
    _use_max = True


class FormulaCombine(Composite):
    """A formula over component names (see `rewardlab.compose.formula`)."""

    combine = "formula"

    def __init__(
        self,
        components: Sequence[Component],
        formula: str,
        *,
        name: str = "composite",
        clip: tuple[float, float] | None = None,
        gated_value: float = 0.0,
        objectives: Sequence[Objective] = (),
    ):
        self.formula_text = formula
        self.gated_value = gated_value
        try:
            self._formula = Formula(formula, names={c.name for c in components})
        except FormulaError as exc:
            raise SpecError([SpecProblem("formula", str(exc))]) from exc
        # in spec order, so a skipped total names the first skipped component of the spec
        self._used_in_order = [c.name for c in components if c.name in self._formula.used]
        super().__init__(components, name=name, clip=clip, objectives=objectives)

    def _describe_extra(self) -> dict[str, JSON]:
        return {"formula": self.formula_text, "gated_value": self.gated_value}

    def _total(self, row: _Row) -> float | RewardResult:
        env, missing = self._env(row, self.gated_value)
        for name in self._used_in_order:
            if name in missing:
                return RewardResult.skip(f"formula needs {name!r}, which was skipped")
        try:
            return self._formula(env)
        except FormulaError as exc:
            return RewardResult.failure(ErrorKind.FORMULA, str(exc))


class Clip(BaseReward):
    """Bounds another reward's score to `[low, high]` (errors and skips pass through)."""

    def __init__(self, reward: Reward, low: float, high: float):
        if low > high:
            raise SpecError([SpecProblem("clip", f"low {low} is above high {high}")])
        self.inner, self.low, self.high = reward, low, high
        self.name = reward.name
        self.group_keys = group_keys(reward)
        self.range = (low, high)

    def score_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return [self._clip(r) for r in self.inner.score_batch(samples)]

    def score(self, sample: Sample) -> RewardResult:
        return self._clip(self.inner.score(sample))

    def _clip(self, result: RewardResult) -> RewardResult:
        if result.status is not Status.OK or result.score is None:
            return result
        clipped = min(max(result.score, self.low), self.high)
        info = {**result.info, "unclipped": result.score}
        return RewardResult.ok(clipped, info=info, components=result.components, steps=result.steps, objectives=result.objectives)

    def describe(self) -> dict[str, JSON]:
        return {"clip": [self.low, self.high], "reward": self.inner.describe()}

    def __repr__(self) -> str:
        return f"Clip[{self.low:g}, {self.high:g}]({self.inner!r})"


class Gate(Composite):
    """`reward` counts only when `requires` passes; otherwise the result is `skipped`.

    `Gate(correct, requires=format_check)` is the Python form of `requires = ["format"]`.
    """

    combine = "gate"

    def __init__(self, reward: Reward, *, requires: Reward, threshold: float | None = None, on_error: ErrorPolicy = "fail"):
        components = [
            Component("condition", requires, weight=0.0, threshold=threshold, on_error=on_error),
            Component("value", reward, requires=("condition",), on_error=on_error),
        ]
        super().__init__(components, name=reward.name)
        self.range = reward.range

    def _total(self, row: _Row) -> float | RewardResult:
        value = self._value(row, "value")
        if value is None:
            return RewardResult.skip(str(row.results["value"].info.get("skip_reason", "gated")))
        return value


class ObjectiveSum(Composite):
    """The linear scalarisation `Σ_k w_k · o_k` of the declared objectives, with each sample's
    own weights (`meta["objective_weights"]`) or the declared ones (see `compose.objectives`)."""

    combine = "objectives"

    def __init__(
        self,
        components: Sequence[Component],
        *,
        objectives: Sequence[Objective],
        name: str = "composite",
        clip: tuple[float, float] | None = None,
    ):
        if not objectives:
            raise SpecError([SpecProblem("objectives", 'combine = "objectives" needs at least one objective')])
        super().__init__(components, name=name, clip=clip, objectives=objectives)

    def _total(self, row: _Row) -> float | RewardResult:
        weights = sample_weights(self.objectives, row.weights)
        if isinstance(weights, str):
            return RewardResult.failure(ErrorKind.INVALID_INPUT, weights)
        used: dict[str, JSON] = {o.name: w for o, w in zip(self.objectives, weights, strict=True)}
        total = 0.0
        for o, w in zip(self.objectives, weights, strict=True):
            value = row.vector[o.name]
            if value is None and w != 0.0:
                return RewardResult.skip(f"objective {o.name!r} was not computed", info={"objective_weights": used})
            total += w * (value or 0.0)
        return RewardResult.ok(total, info={"objective_weights": used})


def combinator_for(combine: str) -> type[Composite]:
    """The combinator class for a spec's `combine` key."""
    table: Mapping[str, type[Composite]] = {
        "weighted": Weighted, "min": MinOf, "max": MaxOf, "formula": FormulaCombine, "objectives": ObjectiveSum,
    }  # fmt: skip
    return table[combine]
