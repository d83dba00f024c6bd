"""Text rewards: exact match with normalisation, and regular-expression match."""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Literal

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.verify._common import references

_PUNCT = str.maketrans("", "", string.punctuation)
_SPACE = re.compile(r"\s+")


def normalize_text(
    text: str,
    *,
    case_sensitive: bool = False,
    strip_punctuation: bool = False,
    collapse_whitespace: bool = True,
    unicode_nfkc: bool = True,
) -> str:
    """Normalise text for comparison; each step is an option so a spec states what it ignores."""
    if unicode_nfkc:
        text = unicodedata.normalize("NFKC", text)
    if not case_sensitive:
        text = text.casefold()
    if strip_punctuation:
        text = text.translate(_PUNCT)
    if collapse_whitespace:
        text = _SPACE.sub(" ", text)
    return text.strip()


class ExactMatch(BaseReward):
    """1.0 when the response (or the part `extract` captures) equals a reference, else 0.0.

    The reference is a string or a list of acceptable strings. Normalisation is configurable.
    `extract` is a regular expression whose first group (or whole match) is compared; its last
    match in the response is used. No match scores 0 (a wrong format is a wrong answer).
    """

    name = "text.exact"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        case_sensitive: bool = False,
        strip_punctuation: bool = False,
        collapse_whitespace: bool = True,
        extract: str | None = None,
        reference_key: str | None = None,
    ):
        self.params = {
            "case_sensitive": case_sensitive,
            "strip_punctuation": strip_punctuation,
            "collapse_whitespace": collapse_whitespace,
            "extract": extract,
            "reference_key": reference_key,
        }
        self._norm = {
            "case_sensitive": case_sensitive,
            "strip_punctuation": strip_punctuation,
            "collapse_whitespace": collapse_whitespace,
        }
        self._extract = re.compile(extract, re.DOTALL) if extract else None
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        text = sample.response_text
        if self._extract is not None:
            matches = list(self._extract.finditer(text))
            if not matches:
                return RewardResult.ok(0.0, info={"extracted": None, "reason": "extract pattern did not match"})
            last = matches[-1]
            text = last.group(1) if last.groups() else last.group(0)
        candidate = normalize_text(text, **self._norm)
        normalised = {normalize_text(r, **self._norm) for r in refs}
        hit = candidate in normalised
        return RewardResult.ok(float(hit), info={"extracted": candidate})


class RegexMatch(BaseReward):
    """1.0 when `pattern` matches the response (`search`, or `fullmatch` of the stripped text).

    Patterns are Python `re` syntax, compiled once when the spec is built.
    """

    name = "text.regex"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        pattern: str,
        mode: Literal["search", "fullmatch"] = "search",
        ignore_case: bool = False,
        multiline: bool = False,
    ):
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0) | (re.MULTILINE if multiline else 0)
        try:
            self._pattern = re.compile(pattern, flags)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
        self._mode = mode
        self.params = {"pattern": pattern, "mode": mode, "ignore_case": ignore_case, "multiline": multiline}

    def compute(self, sample: Sample) -> RewardResult:
        text = sample.response_text
        found = self._pattern.search(text) if self._mode == "search" else self._pattern.fullmatch(text.strip())
        return RewardResult.ok(float(found is not None), info={"match": found.group(0)[:200] if found else None})
