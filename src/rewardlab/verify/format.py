"""Format rewards: does the response have the tagged sections a task asks for?"""

from __future__ import annotations

import re

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError
from rewardlab.verify._common import response_text


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
            raise ConfigError("tags must name at least one section")
        for tag in tags:
            if not re.fullmatch(r"[A-Za-z_][\w.-]*", tag):
                raise ConfigError(f"invalid tag name {tag!r}")
        self._tags = tags
        self._strict = strict
        self._partial = partial
        self._allow_empty = allow_empty
        body = r"\s*".join(rf"<{t}>(.*?)</{t}>" for t in tags)
        self._whole = re.compile(rf"\s*{body}\s*", re.DOTALL)
        self._loose = re.compile(body, re.DOTALL)
        self._tag_checks = [(f"one <{t}>", f"<{t}>", f"</{t}>") for t in tags]
        self._order_check = "order" + (" and nothing outside" if strict else "")
        self.params = {**self.params, "tags": tags}  # the sections checked, when left to the default

    def _sections(self, text: str, once: bool) -> list[str] | None:
        """The sections' contents when the layout holds (order, and nothing outside if strict).

        When every tag occurs exactly once the layout is decided with `str.find` (linear, in
        C); otherwise the compiled regular expression decides, as the docstring defines it.
        """
        if not once:
            match = self._whole.fullmatch(text) if self._strict else self._loose.search(text)
            return list(match.groups()) if match is not None else None
        sections, gaps, end = [], [], 0
        for _, open_, close in self._tag_checks:
            start = text.find(open_)
            stop = text.find(close)
            if start < end or stop < start + len(open_):
                return None
            gaps.append(text[end:start])
            sections.append(text[start + len(open_) : stop])
            end = stop + len(close)
        gaps.append(text[end:])
        # Between sections only whitespace, always; before the first and after the last too
        # when strict (the regular expressions above say the same).
        inner = gaps[1:-1]
        if any(g.strip() for g in inner) or (self._strict and (gaps[0].strip() or gaps[-1].strip())):
            return None
        return sections

    def compute(self, sample: Sample) -> RewardResult:
        text = response_text(sample)
        # (check name, passed) in a fixed order; names are built once in __init__.
        checks = [(name, text.count(open_) == 1 and text.count(close) == 1) for name, open_, close in self._tag_checks]
        sections = self._sections(text, all(ok for _, ok in checks))
        checks.append((self._order_check, sections is not None))
        if not self._allow_empty:
            checks.append(("sections not empty", sections is not None and all(g.strip() for g in sections)))
        failed = [name for name, ok in checks if not ok]
        passed = len(checks) - len(failed)
        score = passed / len(checks) if self._partial else float(not failed)
        return RewardResult.ok(score, info={"failed_checks": failed})
