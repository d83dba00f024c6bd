"""Rubric rewards: weighted criteria, gates before quality, strict or partial credit.

A rubric is a list of criteria, each scored by an existing reward (`use = "math.answer"`, any
registered name) or by an LLM judge asked one question about the response (`judge = "..."`).

    [rubric]
    mode = "partial"          # or "strict": 1 only when every criterion passes, else 0
    threshold = 0.5           # a criterion passes when its [0, 1] score reaches this
    judge = { base_url = "http://127.0.0.1:8000/v1", model = "qwen2.5-7b-instruct" }

    [[rubric.criteria]]
    name = "answer_tag"
    kind = "gate"             # checked first; failing it scores the rubric 0, the rest is not run
    use = "format.tags"
    params = { tags = ["answer"] }

    [[rubric.criteria]]
    name = "polite"
    kind = "principle"        # a binary check: its score counts as 1 (passed) or 0
    judge = "The response is polite to the user."

    [[rubric.criteria]]
    name = "explains"
    weight = 2.0              # kind = "quality" (the default): its score counts as it is
    judge = "The response explains each step."
    grade = "score_1_10"      # graded 1..10 (mapped to [0, 1]) instead of pass/fail

Gates follow the hierarchical rubrics of "Rubrics as Rewards" (Gunjal et al. 2025,
arXiv:2507.17746): hard requirements are checked before quality, so a response that misses one
gets no quality credit however well it reads, and no judge call is spent on it. Partial credit
is the weighted mean of the quality and principle scores (RaR's explicit aggregation); strict
mode is all-or-nothing over every criterion.

Every criterion's result is in `components`. A criterion that could not be computed makes the
rubric an `error` (kind `component`, naming it), never a 0.
"""

from __future__ import annotations

import math
import statistics
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rewardlab.core import (
    JSON,
    BaseReward,
    ErrorKind,
    GroupKey,
    Reward,
    RewardResult,
    Sample,
    Status,
    group_keys,
    registry,
)
from rewardlab.core.choices import check_choice, check_choices
from rewardlab.core.jsontext import utf8_text
from rewardlab.errors import ConfigError

__all__ = ["Criterion", "Rubric"]

Kind = Literal["gate", "quality", "principle"]

_JUDGE_SYSTEM = (
    "You are a strict grader. Decide whether the response meets the criterion below. "
    'Give a one-sentence reason, then end with "VERDICT: PASS" or "VERDICT: FAIL".'
)
_GRADE_SYSTEM = (
    "You are a strict grader. Rate how well the response meets the criterion below. Give a "
    'one-sentence reason, then your rating strictly as "Rating: [[N]]" with N an integer from 1 to 10.'
)
_JUDGE_USER = "[Criterion]\n{criterion}\n\n[Question]\n{{{{ prompt }}}}\n\n[Response]\n{{{{ response }}}}"


@dataclass
class Criterion:
    """One rubric line.

    Attributes:
        name: unique within the rubric; the component name of its result.
        reward: what scores it (a registered reward, or an LLM judge built from `judge`).
        kind: `gate`, `quality` or `principle`.
        weight: its share of the partial-credit mean (gates carry none).
    """

    name: str
    reward: Reward
    kind: Kind = "quality"
    weight: float = 1.0
    low_high: tuple[float, float] = field(default=(0.0, 1.0))

    def unit(self, score: float) -> float:
        """The score mapped from the reward's declared range to [0, 1]."""
        lo, hi = self.low_high
        return min(1.0, max(0.0, (score - lo) / (hi - lo)))


def _judge_reward(question: str, grade: str, judge: Mapping[str, Any] | None, where: str) -> Reward:
    if not judge:
        raise ConfigError(f"{where}: a `judge` criterion needs the rubric's `judge = {{ base_url, model }}`")
    if grade not in ("pass_fail", "score_1_10"):
        raise ConfigError(f"{where}: grade must be 'pass_fail' or 'score_1_10', got {grade!r}")
    graded = grade == "score_1_10"
    params: dict[str, JSON] = {
        **dict(judge),
        "messages": [
            {"role": "system", "content": _GRADE_SYSTEM if graded else _JUDGE_SYSTEM},
            {"role": "user", "content": _JUDGE_USER.format(criterion=question)},
        ],
        "score_pattern": r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]" if graded else r"VERDICT:\s*(PASS|FAIL)",
        "scale": [1.0, 10.0] if graded else [0.0, 1.0],
    }
    return registry.create("judge.llm", params)


def _criterion(entry: Mapping[str, Any], judge: Mapping[str, Any] | None, index: int) -> Criterion:
    where = f"rubric.criteria[{index}]"
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: every criterion needs a `name`")
    kind = entry.get("kind", "quality")
    check_choice(f"{where} ({name}): kind", kind, Kind)
    weight = float(entry.get("weight", 1.0))
    if not weight >= 0 or not math.isfinite(weight):
        raise ConfigError(f"{where} ({name}): weight must be a finite number >= 0, got {weight}")
    if ("use" in entry) == ("judge" in entry):
        raise ConfigError(f"{where} ({name}): give exactly one of `use` (a registered reward) or `judge` (a question)")
    if "use" in entry:
        reward = registry.create(str(entry["use"]), dict(entry.get("params") or {}))
    else:
        reward = _judge_reward(str(entry["judge"]), str(entry.get("grade", "pass_fail")), judge, f"{where} ({name})")
    lo, hi = (float(x) for x in reward.range)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ConfigError(f"{where} ({name}): {reward.name} has range {reward.range}; a criterion needs a bounded range (wrap it in a clip)")
    return Criterion(name, reward, kind, weight, (lo, hi))


class Rubric(BaseReward):
    """A rubric as one reward (see the module docstring for the TOML).

    Args:
        criteria: the criterion tables (`name`, `use`/`params` or `judge`/`grade`, `kind`, `weight`).
        mode: `partial` (weighted mean) or `strict` (all pass -> 1, else 0).
        threshold: the [0, 1] score at which a criterion passes (gates, principles, strict mode).
        judge: `judge.llm` parameters (`base_url`, `model`, ...) for the `judge` criteria.
        file: a TOML file with a `[rubric]` table, instead of the arguments above.
        adaptive: in partial mode, weight each criterion by its spread within the sample's group
            (`group`; a sample without one keeps the declared weights): `w_i * std_g(v_i)`. Group
            advantages (GRPO) only see differences between members, so a criterion every member
            meets equally adds nothing but dilutes the ones that still separate them; it gets
            weight 0. A group where no criterion varies keeps the declared weights.
    """

    name = "judge.rubric"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        criteria: Sequence[Mapping[str, Any]] | None = None,
        mode: Literal["partial", "strict"] = "partial",
        threshold: float = 0.5,
        judge: Mapping[str, Any] | None = None,
        file: str | None = None,
        adaptive: bool = False,
    ):
        if file is not None:
            if criteria is not None:
                raise ConfigError("give `criteria` or `file`, not both")
            table = _read_rubric(Path(file))
            criteria, mode, threshold, judge = table.get("criteria"), table.get("mode", mode), table.get("threshold", threshold), table.get("judge", judge)
            adaptive = bool(table.get("adaptive", adaptive))
        if not criteria:
            raise ConfigError("a rubric needs at least one criterion")
        check_choices(Rubric.__init__, mode=mode)
        if not 0.0 <= float(threshold) <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {threshold}")
        self.criteria = [_criterion(entry, judge, i) for i, entry in enumerate(criteria)]
        names = [c.name for c in self.criteria]
        if len(set(names)) != len(names):
            raise ConfigError(f"criterion names must be unique, got {names}")
        if mode == "partial" and not any(c.kind != "gate" and c.weight > 0 for c in self.criteria):
            raise ConfigError("a partial rubric needs a quality or principle criterion with weight > 0")
        self.mode, self.threshold, self.adaptive = mode, float(threshold), adaptive
        # Adaptive weights (and any group criterion) look at the whole group: a group reward.
        own: frozenset[GroupKey] = frozenset({"group"}) if adaptive and mode == "partial" else frozenset()
        self.group_keys = own.union(k for c in self.criteria for k in group_keys(c.reward))
        self.params = {
            "criteria": [dict(c) for c in criteria], "mode": mode, "threshold": self.threshold,
            "judge": dict(judge) if judge else None, "adaptive": adaptive,
        }  # fmt: skip

    @classmethod
    def from_toml(cls, source: str | Path) -> Rubric:
        """A rubric from a TOML file path or TOML text with a `[rubric]` table."""
        path = Path(source) if not str(source).lstrip().startswith("[") else None
        if path is not None:
            return cls(file=str(path))
        table = _parse_rubric(str(source), "<text>")
        return cls(
            criteria=table.get("criteria"), mode=table.get("mode", "partial"), threshold=table.get("threshold", 0.5),
            judge=table.get("judge"), adaptive=bool(table.get("adaptive", False)),
        )  # fmt: skip

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        rows: list[dict[str, RewardResult]] = [{} for _ in samples]
        active = list(range(len(samples)))
        for stage in ("gate", "rest"):  # gates first: only samples through every gate go on
            stage_criteria = [c for c in self.criteria if (c.kind == "gate") == (stage == "gate")]
            for criterion in stage_criteria:
                scored = criterion.reward.score_batch([samples[i] for i in active]) if active else []
                for i, result in zip(active, scored, strict=True):
                    rows[i][criterion.name] = result
            if stage == "gate":
                active = [i for i in active if all(self._passed(c, rows[i][c.name]) for c in stage_criteria)]
        weights = self._adaptive_weights(samples, rows) if self.adaptive and self.mode == "partial" else [None] * len(rows)
        return [self._total(row, w) for row, w in zip(rows, weights, strict=True)]

    def _adaptive_weights(self, samples: Sequence[Sample], rows: Sequence[dict[str, RewardResult]]) -> list[dict[str, float] | None]:
        groups: dict[str, list[int]] = {}
        for i, sample in enumerate(samples):
            if sample.group is not None:  # without a group, nothing to adapt to: declared weights
                groups.setdefault(sample.group, []).append(i)
        out: list[dict[str, float] | None] = [None] * len(rows)
        for members in groups.values():
            values: dict[str, list[float]] = {c.name: [] for c in self._weighted_criteria()}
            for i in members:
                for c in self._weighted_criteria():
                    result = rows[i].get(c.name)
                    if result is not None and result.status is Status.OK:
                        values[c.name].append(self._value(c, result))
            spread = {c.name: c.weight * statistics.pstdev(values[c.name]) if len(values[c.name]) > 1 else 0.0 for c in self._weighted_criteria()}
            chosen = spread if sum(spread.values()) > 0 else None  # nothing varies: declared weights
            for i in members:
                out[i] = chosen
        return out

    def _weighted_criteria(self) -> list[Criterion]:
        return [c for c in self.criteria if c.kind != "gate" and c.weight > 0]

    def _value(self, criterion: Criterion, result: RewardResult) -> float:
        """What a criterion contributes: a principle's pass/fail, a quality criterion's score."""
        if criterion.kind == "principle":
            return float(self._passed(criterion, result))
        return criterion.unit(float(result.score or 0.0))

    def _passed(self, criterion: Criterion, result: RewardResult) -> bool:
        return result.status is Status.OK and criterion.unit(float(result.score or 0.0)) >= self.threshold

    def _total(self, row: dict[str, RewardResult], weights: Mapping[str, float] | None = None) -> RewardResult:
        components: dict[str, RewardResult] = {}
        failed_gates: list[str] = []
        for c in self.criteria:
            result = row.get(c.name)
            if result is None:
                components[c.name] = RewardResult.skip(f"gate: {', '.join(failed_gates)} failed")
                continue
            components[c.name] = result
            if c.kind == "gate" and result.status is Status.OK and not self._passed(c, result):
                failed_gates.append(c.name)
        errors = [name for name, r in components.items() if r.status is Status.ERROR]
        if errors:
            return RewardResult.failure(ErrorKind.COMPONENT, f"rubric criteria could not be scored: {', '.join(errors)}", components=components)
        passed = [c.name for c in self.criteria if c.name in row and self._passed(c, row[c.name])]
        info: dict[str, JSON] = {"mode": self.mode, "passed": passed, "failed_gates": failed_gates}
        if failed_gates:
            return RewardResult.ok(0.0, info=info, components=components)
        if self.mode == "strict":
            return RewardResult.ok(float(len(passed) == len(self.criteria)), info=info, components=components)
        if weights is not None:
            info["weights"] = dict(weights)
        return RewardResult.ok(self._weighted(row, weights), info=info, components=components)

    def _weighted(self, row: Mapping[str, RewardResult], weights: Mapping[str, float] | None) -> float:
        total = mass = 0.0
        for c in self._weighted_criteria():
            weight = c.weight if weights is None else weights[c.name]
            total += weight * self._value(c, row[c.name])
            mass += weight
        return total / mass


def _parse_rubric(text: str, where: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from exc
    table = data.get("rubric")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: needs a [rubric] table with [[rubric.criteria]]")
    return table


def _read_rubric(path: Path) -> dict[str, Any]:
    try:
        text = utf8_text(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read rubric file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"cannot read rubric file {path}: {exc}") from None
    return _parse_rubric(text, str(path))
