"""The OpenRLHF remote-reward protocol, as two pure functions.

OpenRLHF (``--remote_rm_url http://host:port/get_reward``) posts, per rollout batch,
``{"query": [...], "prompts": [...], "labels": [...]}`` (``openrlhf/utils/remote_rm_utils.py``;
old versions send only ``query``, new ones may add ``metas``). ``query[i]`` is the prompt and the
response rendered with the chat template, ``prompts[i]`` the prompt alone, ``labels[i]`` the
``--label_key`` column of the dataset. It reads back ``rewards`` (used for advantages),
``scores`` (dynamic filtering) and ``extra_logs`` (logged per step).

`samples_from_openrlhf` maps a request to `Sample`s: the response is the text of ``query`` after
the prompt (the whole query when the prompt is not in it), the reference is the label.
`openrlhf_reply` maps results back; an `error` result is never sent as a silent number (see
`ServeSettings.openrlhf_error_reward`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardlab.core import RewardResult, Sample, Status
from rewardlab.errors import MappingError

__all__ = ["MappingError", "openrlhf_reply", "samples_from_openrlhf"]


def samples_from_openrlhf(
    query: Sequence[str],
    prompts: Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    metas: Sequence[dict[str, Any] | None] | None = None,
) -> list[Sample]:
    """One `Sample` per query (see the module doc).

    Raises:
        MappingError: ``prompts``, ``labels`` or ``metas`` do not have one entry per query.
    """
    n = len(query)
    for name, column in (("prompts", prompts), ("labels", labels), ("metas", metas)):
        if column is not None and len(column) != n:
            raise MappingError(f"{name!r} has {len(column)} entries for {n} queries; send one per query")
    samples = []
    for i, text in enumerate(query):
        prompt = prompts[i] if prompts is not None else ""
        at = text.find(prompt) if prompt else -1
        response = text[at + len(prompt) :] if at >= 0 else text
        meta = dict(metas[i] or {}) if metas is not None else {}
        samples.append(Sample(prompt=prompt, response=response, reference=labels[i] if labels is not None else None, meta=meta))
    return samples


def openrlhf_reply(results: Sequence[RewardResult], *, error_reward: float | None) -> dict[str, Any]:
    """The JSON OpenRLHF reads: ``rewards``, ``scores``, ``extra_logs`` (+ ``statuses``).

    Skipped and error results become `error_reward`; the caller refuses the batch when it is
    ``None`` and there are errors. ``extra_logs`` carries per-row error/skip indicators and the
    component scores, so the trainer's logs show how many rows were not real scores.
    """
    rewards: list[float] = []
    errors: list[float] = []
    skipped: list[float] = []
    components: dict[str, list[float]] = {}
    for result in results:
        if result.status is Status.OK and result.score is not None:
            rewards.append(result.score)
        else:
            rewards.append(float(error_reward) if error_reward is not None else float("nan"))
        errors.append(1.0 if result.status is Status.ERROR else 0.0)
        skipped.append(1.0 if result.status is Status.SKIPPED else 0.0)
        for name, sub in result.components.items():
            if sub.score is not None:
                components.setdefault(f"rewardlab/{name}", []).append(sub.score)
    extra_logs = {"rewardlab/error": errors, "rewardlab/skipped": skipped}
    # A component column is logged only when every row has a score for it: a gap filled with a
    # number would be a silent 0 in the trainer's charts.
    extra_logs.update({k: v for k, v in components.items() if len(v) == len(results)})
    return {
        "rewards": rewards,
        "scores": list(rewards),
        "extra_logs": extra_logs,
        "statuses": [r.status.value for r in results],
    }
