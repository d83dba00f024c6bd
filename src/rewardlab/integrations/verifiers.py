"""verifiers adapter: a rewardlab spec as a reward function of a verifiers (PrimeIntellect) `Rubric`.

    import verifiers as vf
    from rewardlab.integrations.verifiers import as_verifiers_reward, as_verifiers_rubric

    rubric = vf.Rubric(funcs=[as_verifiers_reward("reward.toml")], weights=[1.0])
    rubric = as_verifiers_rubric("reward.toml")  # the same, plus one metric per component

verifiers' classic `Rubric` (`verifiers.Rubric` up to 0.2.x, `verifiers.legacy` in 0.3.x,
aliased as `import verifiers as vf`; 0.4 keeps only the `v1` Task/Trace stack, which has no
`Rubric`) calls each reward function with the keyword arguments its signature names, out of
``prompt``, ``completion``, ``answer``, ``state`` (the rollout state), ``info``, ``task``, the
dataset's other columns and the rubric's class objects (``parser``), and awaits it when it is
async. A function whose parameters are plural (``prompts``, ``completions``, ``states``...) is
a *group* reward function: `Rubric.score_group` calls it once with a group's rollouts (the
rollouts of one example) and takes a list back.

Mapping: `prompt` <- prompt, `response` <- completion (the message list, tool calls and tool
results included: an agent trajectory), `reference` <- the dataset column named
`reference_key` (default ``"reference"``), else ``info[reference_key]``, else ``answer``; the
environment's final state (the trajectory's `state` column, read by `agent.state` and
`agent.state_replay`) <- ``state[env_state]``, the rollout-state key where the environment keeps
it, when `env_state` is given; ``info``'s other entries go to `sample.meta`.

Errors: verifiers turns an exception raised by a reward function into a logged 0.0, so the adapter
never raises for a row. A result that is `error` (or `skipped`) becomes `on_error`: ``"nan"``
(the default) returns NaN and sets the rollout's ``state["error"]`` to a `verifiers.errors.Error`
naming the reward and the typed reason (verifiers writes it to its outputs as ``error``); a
number returns that number, an explicit policy. Either way ``state["rewardlab"][name]`` keeps the
whole result (`RewardResult.to_dict`: status, error, components). `Rubric.score_group` subtracts
the group's mean reward to get advantages, so a NaN makes its group's advantages NaN: drop the
rollouts whose ``error`` is set before training, or pass a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rewardlab.core import JSON, Reward, RewardResult, Sample, Status, group_keys, spec_hash
from rewardlab.core.columns import component_names
from rewardlab.errors import ConfigError, MappingError, RewardLabError
from rewardlab.integrations._common import SpecLike, build_reward

__all__ = ["VerifiersGroupReward", "VerifiersReward", "as_verifiers_reward", "as_verifiers_rubric", "component_metrics"]

OnError = float | Literal["nan"]
#: Where the adapter keeps each rollout's results in verifiers' rollout state.
STATE_KEY = "rewardlab"


class VerifiersReward:
    """A verifiers reward function (one rollout per call), backed by a rewardlab Reward.

    Args:
        spec: a TOML spec path or text, a dict, or a built Reward.
        on_error: what an `error` or `skipped` result becomes: ``"nan"`` (NaN, and the rollout's
            ``state["error"]`` set; the default) or a number (see the module doc).
        reference_key: the dataset column, or ``info`` key, holding the reference (``answer``
            when neither has it).
        env_state: the key of verifiers' rollout state holding the environment's final state
            (JSON, or ``{"sqlite": path}``), for state checks; None: no final state.
        name: the name verifiers records the reward under (default: the spec's reward name).
    """

    def __init__(self, spec: SpecLike, *, on_error: OnError = "nan", reference_key: str = "reference",
                 env_state: str | None = None, name: str | None = None):  # fmt: skip
        if not (on_error == "nan" or (isinstance(on_error, int | float) and not isinstance(on_error, bool) and math.isfinite(on_error))):
            raise ConfigError(f"on_error must be 'nan' or a finite number, got {on_error!r}")
        self.reward: Reward = build_reward(spec)
        self.on_error = on_error
        self.reference_key = reference_key
        self.env_state = env_state
        self.spec_hash = spec_hash(self.reward)
        # verifiers records metrics under the function's __name__
        self.__name__ = name or str(getattr(self.reward, "name", "rewardlab")).replace(" ", "_")
        self.components = component_names(self.reward)
        if group_keys(self.reward) and type(self) is VerifiersReward:
            raise ConfigError(
                f"spec {self.__name__!r} has group rewards ({', '.join(sorted(map(str, group_keys(self.reward))))}), which score "
                "a rollout against its group: use as_verifiers_reward(spec) (it gives the group function) or VerifiersGroupReward"
            )

    async def __call__(self, prompt: Any = "", completion: Any = "", answer: Any = "", state: Any = None, info: Any = None,
                       **columns: Any) -> float:  # fmt: skip
        """Score one rollout; the keyword arguments are `Rubric`'s (see the module doc)."""
        results = await self._score_rows([(prompt, completion, answer, state, info, columns)], group=None)
        return self._finish(results[0], state)

    async def _score_rows(self, rows: Sequence[tuple[Any, Any, Any, Any, Any, Mapping[str, Any]]], group: str | None) -> list[RewardResult]:
        samples: list[Sample | RewardResult] = []
        for row in rows:
            try:
                samples.append(self._sample(*row, group=group))
            except RewardLabError as exc:  # bad input of one rollout is that rollout's error
                samples.append(RewardResult.failure("invalid_input", str(exc)))
        todo = [s for s in samples if isinstance(s, Sample)]
        scored = iter(await self.reward.ascore_batch(todo) if todo else [])
        return [next(scored) if isinstance(s, Sample) else s for s in samples]

    def _sample(self, prompt: Any, completion: Any, answer: Any, state: Any, info: Any, columns: Mapping[str, Any],
                group: str | None) -> Sample:  # fmt: skip
        info = dict(info) if isinstance(info, Mapping) else {}
        meta: dict[str, JSON] = {k: v for k, v in info.items() if k != self.reference_key}
        if self.reference_key in columns:
            reference = columns[self.reference_key]
        elif self.reference_key in info:
            reference = info[self.reference_key]
        else:
            reference = answer if answer not in ("", None) else None
        if self.env_state is not None:
            if not isinstance(state, Mapping) or self.env_state not in state:
                raise MappingError(f"the rollout state has no {self.env_state!r} (env_state): the environment's final state is missing")
            meta["state"] = state[self.env_state]
        return Sample(prompt=_plain(prompt, "prompt"), response=_plain(completion, "completion"),
                      reference=reference, meta=meta, group=group)  # fmt: skip

    def _finish(self, result: RewardResult, state: Any) -> float:
        if isinstance(state, dict):  # verifiers' State is a dict
            state.setdefault(STATE_KEY, {})[self.__name__] = result.to_dict()
        if result.status is Status.OK and result.score is not None:
            return result.score
        if self.on_error != "nan":
            return float(self.on_error)
        if isinstance(state, dict) and state.get("error") is None:
            reason = result.error.kind.value + ": " + result.error.message if result.error else result.info.get("skip_reason", "skipped")
            error = _verifiers_error(f"rewardlab reward {self.__name__!r} could not score this rollout ({reason})")
            if error is not None:
                state["error"] = error
        return math.nan

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__!r}, on_error={self.on_error!r})"


class VerifiersGroupReward(VerifiersReward):
    """The same adapter as a verifiers *group* reward function: `Rubric.score_group` calls it
    once per group of rollouts (one example's), so group rewards (majority vote, consensus,
    `agent.rank`) see the whole group. Each call's rollouts are one rewardlab group."""

    async def __call__(self, prompts: Sequence[Any] = (), completions: Sequence[Any] = (), answers: Sequence[Any] = (),  # type: ignore[override]
                       states: Sequence[Any] = (), infos: Sequence[Any] = (), **columns: Any) -> list[float]:  # fmt: skip
        n = len(completions)
        states = list(states) or [None] * n
        given = {"prompts": prompts, "answers": answers, "states": states, "infos": infos}
        for what, values in given.items():
            if values and len(values) != n:  # a framework bug, not one rollout's: nothing can be paired
                error = RewardResult.failure("invalid_input", f"{what} has {len(values)} entries for {n} completions")
                return [self._finish(error, state) for state in states]
        # verifiers 0.3 also passes each rollout's task (its dataset row): its columns, as for one rollout
        tasks = columns.get("tasks")
        tasks = list(tasks) if isinstance(tasks, list | tuple) and len(tasks) == n else [None] * n
        rows: list[tuple[Any, Any, Any, Any, Any, Mapping[str, Any]]] = [(prompts[i] if prompts else "", completions[i], answers[i] if answers else "", states[i],
                 infos[i] if infos else None, tasks[i] if isinstance(tasks[i], Mapping) else {}) for i in range(n)]  # fmt: skip
        results = await self._score_rows(rows, group="0")
        return [self._finish(result, state) for result, state in zip(results, states, strict=True)]


def _plain(messages: Any, what: str) -> str | list[Any]:
    """A prompt or completion as rewardlab reads it: verifiers 0.3 hands message objects
    (pydantic models, ``tool_calls`` as flat ``{"id", "name", "arguments"}``), which become
    dicts; a completion-format rollout's ``{"role": "text"}`` messages become their text."""
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, list | tuple):
        raise MappingError(f"{what} must be a string or a list of messages, got {type(messages).__name__}")
    out = []
    for message in messages:
        dump = getattr(message, "model_dump", None)
        out.append(dump(exclude_none=True) if callable(dump) else message)
    if out and all(isinstance(m, Mapping) and m.get("role") == "text" for m in out):
        return "".join(str(m.get("content", "")) for m in out)
    return out


def _verifiers_error(message: str) -> Exception | None:
    """A `verifiers.errors.Error` (what verifiers' state accepts as ``error``); None without
    verifiers, when the function is called directly and nothing reads ``state["error"]`` (the
    NaN and ``state["rewardlab"]`` still say what happened)."""
    try:
        import verifiers.errors as errors
    except ImportError:
        return None
    error: Exception = errors.Error(message)
    return error


def as_verifiers_reward(spec: SpecLike, *, group: bool | None = None, **options: Any) -> VerifiersReward:
    """A rewardlab spec as a verifiers reward function; see `VerifiersReward` for options.

    Args:
        group: a group reward function (`VerifiersGroupReward`); None (default): when the spec
            has group rewards.
    """
    reward = build_reward(spec)
    if group is None:
        group = bool(group_keys(reward))
    return VerifiersGroupReward(reward, **options) if group else VerifiersReward(reward, **options)


def component_metrics(reward: VerifiersReward) -> list[Any]:
    """Zero-weight metric functions for verifiers: each component's score (0.0 when it has none)
    and ``<name>_error`` (1.0 when the rollout's result is not `ok`), read from the results
    `reward` left in the rollout state. List them after `reward` in the `Rubric`."""
    metrics: list[Any] = [_Metric(reward.__name__, None)]
    metrics += [_Metric(reward.__name__, component) for component in reward.components]
    return metrics


class _Metric:
    def __init__(self, owner: str, component: str | None):
        self.owner, self.component = owner, component
        self.__name__ = f"{owner}/{component}" if component else f"{owner}_error"

    def __call__(self, state: Any) -> float:
        result = (state.get(STATE_KEY, {}) if isinstance(state, Mapping) else {}).get(self.owner)
        if not isinstance(result, Mapping):
            return 0.0 if self.component else 1.0  # the reward did not record a result for this rollout
        if self.component is None:
            return float(result.get("status") != Status.OK.value)
        score = result.get("components", {}).get(self.component, {}).get("score")
        return float(score) if isinstance(score, int | float) else 0.0


def as_verifiers_rubric(spec: SpecLike, **options: Any) -> Any:
    """A `verifiers.Rubric` scoring with `spec` (weight 1) and its components as zero-weight
    metrics (`component_metrics`); `options` go to `as_verifiers_reward`.

    Raises:
        DependencyError: verifiers is not installed.
    """
    from rewardlab._lazy import require

    vf = require("verifiers", needed_by="rewardlab.integrations.verifiers.as_verifiers_rubric")
    reward = as_verifiers_reward(spec, **options)
    metrics = component_metrics(reward)
    return vf.Rubric(funcs=[reward, *metrics], weights=[1.0] + [0.0] * len(metrics))
