"""Format rewards: does the response have the tagged sections a task asks for?"""

from __future__ import annotations

import re

from rewardlab.core import BaseReward, RewardResult, Sample


class TagFormat(BaseReward):
    """1.0 when the response is made of the given tagged sections, in order, each exactly once.

    Default: `<think>...</think>` then `<answer>...</answer>` (DeepSeek-R1 style). With
    `strict`, only whitespace may stand outside the sections; with `partial`, the score is the
    fraction of checks passed (each tag present once, order, nothing outside) instead of 0/1.
    """

    name = "format.tags"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        tags: list[str] | None = None,
        strict: bool = True,
        partial: bool = False,
        allow_empty: bool = False,
    ):
        tags = list(tags) if tags is not None else ["think", "answer"]
        if not tags:
            raise ValueError("tags must name at least one section")
        for tag in tags:
            if not re.fullmatch(r"[A-Za-z_][\w.-]*", tag):
                raise ValueError(f"invalid tag name {tag!r}")
        self._tags = tags
        self._strict = strict
        self._partial = partial
        self._allow_empty = allow_empty
        body = r"\s*".join(rf"<{t}>(.*?)</{t}>" for t in tags)
        self._whole = re.compile(rf"\s*{body}\s*", re.DOTALL)
        self._loose = re.compile(body, re.DOTALL)
        self.params = {"tags": tags, "strict": strict, "partial": partial, "allow_empty": allow_empty}

    def compute(self, sample: Sample) -> RewardResult:
        text = sample.response_text
        checks: dict[str, bool] = {}
        for tag in self._tags:
            checks[f"one <{tag}>"] = text.count(f"<{tag}>") == 1 and text.count(f"</{tag}>") == 1
        pattern = self._whole.fullmatch(text) if self._strict else self._loose.search(text)
        checks["order" + (" and nothing outside" if self._strict else "")] = pattern is not None
        if not self._allow_empty:
            checks["sections not empty"] = pattern is not None and all(g.strip() for g in pattern.groups())
        passed = sum(checks.values())
        score = passed / len(checks) if self._partial else float(passed == len(checks))
        failed = [name for name, ok in checks.items() if not ok]
        return RewardResult.ok(score, info={"failed_checks": failed})
