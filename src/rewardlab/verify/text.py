"""Text rewards: exact and normalised match, token F1, regex, multiple choice, keywords.

Similarity scores (BLEU, ROUGE, chrF, fuzzy) live in `rewardlab.verify.similarity`.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections import Counter
from typing import Literal

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.verify._common import meta_or_reference, references, response_text

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


def _references_and_answer(sample: Sample, reference_key: str | None, extract: re.Pattern[str] | None) -> tuple[list[str], str | None]:
    """The acceptable references and the part of the response to compare (None: `extract`
    did not match). Shared by the comparing text rewards."""
    return references(sample, key=reference_key), _extract_last(extract, response_text(sample))


def _no_match() -> RewardResult:
    """A response without the extracted part is a wrong answer (ok, 0), not an error."""
    return RewardResult.ok(0.0, info={"extracted": None, "reason": "extract pattern did not match"})


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
        self._normalize = functools.partial(
            normalize_text,
            case_sensitive=case_sensitive,
            strip_punctuation=strip_punctuation,
            collapse_whitespace=collapse_whitespace,
        )
        self._extract = re.compile(extract, re.DOTALL) if extract else None
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs, text = _references_and_answer(sample, self._reference_key, self._extract)
        if text is None:
            return _no_match()
        normalize = self._normalize
        candidate = normalize(text)
        hit = any(candidate == normalize(r) for r in refs)
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
            raise ConfigError(f"invalid regular expression {pattern!r}: {exc}") from exc
        self._mode = mode

    def compute(self, sample: Sample) -> RewardResult:
        text = response_text(sample)
        found = self._pattern.search(text) if self._mode == "search" else self._pattern.fullmatch(text.strip())
        return RewardResult.ok(float(found is not None), info={"match": found.group(0)[:200] if found else None})


# SQuAD v1.1 answer normalisation (Rajpurkar et al. 2016, official evaluate-v1.1.py):
# lower-case, drop punctuation, drop the articles a/an/the, collapse whitespace.
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.IGNORECASE)


def squad_normalize(text: str) -> str:
    """SQuAD answer normalisation: lower-case, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(reference: str, candidate: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of the bag of tokens of `candidate` against `reference`.

    Both are SQuAD-normalised first. Two empty strings agree (F1 = 1); one empty gives 0.
    """
    ref_tokens = squad_normalize(reference).split()
    cand_tokens = squad_normalize(candidate).split()
    if not ref_tokens or not cand_tokens:
        same = float(ref_tokens == cand_tokens)
        return same, same, same
    common = Counter(ref_tokens) & Counter(cand_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0, 0.0, 0.0
    precision = overlap / len(cand_tokens)
    recall = overlap / len(ref_tokens)
    return precision, recall, 2 * precision * recall / (precision + recall)


def _extract_last(pattern: re.Pattern[str] | None, text: str) -> str | None:
    """The first group (or whole match) of the last match of `pattern`; `text` when no pattern."""
    if pattern is None:
        return text
    last = None
    for last in pattern.finditer(text):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return None
    return last.group(1) if pattern.groups else last.group(0)


def _compile(pattern: str | None, what: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error as exc:
        raise ConfigError(f"invalid {what} regular expression {pattern!r}: {exc}") from exc


class NormalizedMatch(BaseReward):
    """1.0 when the SQuAD-normalised response equals a normalised reference (QA exact match).

    Ignores case, punctuation, the articles a/an/the and spacing, as the SQuAD and TriviaQA
    evaluation scripts do. `extract` works as in `text.exact`.
    """

    name = "text.normalized"
    range = (0.0, 1.0)

    def __init__(self, *, extract: str | None = None, reference_key: str | None = None):
        self._extract = _compile(extract, "extract")
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs, text = _references_and_answer(sample, self._reference_key, self._extract)
        if text is None:
            return _no_match()
        candidate = squad_normalize(text)
        return RewardResult.ok(float(candidate in {squad_normalize(r) for r in refs}), info={"extracted": candidate})


class TokenF1(BaseReward):
    """SQuAD token F1 between the response and the best-matching reference, in [0, 1]."""

    name = "text.f1"
    range = (0.0, 1.0)

    def __init__(self, *, extract: str | None = None, reference_key: str | None = None):
        self._extract = _compile(extract, "extract")
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs, text = _references_and_answer(sample, self._reference_key, self._extract)
        if text is None:
            return _no_match()
        best = max((token_f1(r, text) for r in refs), key=lambda prf: prf[2])
        return RewardResult.ok(best[2], info={"precision": best[0], "recall": best[1]})


# Where a multiple-choice letter is read from, most explicit first. Each pattern's group 1 is
# the letter; the choice set is substituted for {L} (and its lower case for {l}, accepted only
# right after "answer").
_CHOICE_PATTERNS = (
    r"\\boxed\{\s*\(?([{L}])\)?\s*\}",
    r"(?i:answer)\s*(?:is|:)?\s*[:\-]?\s*\**\(?([{L}{l}])\)?(?![A-Za-z])",
    r"^\s*\(?([{L}])\)?\s*[.):]?\s*$",
    r"\(([{L}])\)",
    r"(?<![A-Za-z])([{L}])(?![A-Za-z])",
)


class ChoiceMatch(BaseReward):
    """1.0 when the multiple-choice letter in the response equals the reference letter.

    The letter is read from, in order of preference: `\\boxed{B}`, "answer: B" / "the answer
    is (B)", a response that is only the letter, "(B)", and finally the last stand-alone
    capital letter among `choices`. No letter found scores 0 (`info.extracted` is null).
    A reference that is not one of `choices` is an `invalid_input` error.
    """

    name = "text.choice"
    range = (0.0, 1.0)

    def __init__(self, *, choices: str = "ABCDEFGHIJ", reference_key: str | None = None):
        if not choices or not choices.isalpha() or len(set(choices)) != len(choices):
            raise ConfigError(f"choices must be distinct letters, got {choices!r}")
        self._choices = choices.upper()
        letters = re.escape(self._choices)
        lower = letters.lower()
        self._patterns = [
            re.compile(p.replace("{L}", letters).replace("{l}", lower), re.MULTILINE) for p in _CHOICE_PATTERNS
        ]
        self._reference_key = reference_key

    def extract(self, text: str) -> str | None:
        """The chosen letter in `text`, or None."""
        for pattern in self._patterns:
            matches = pattern.findall(text)
            if matches:
                return str(matches[-1]).upper()
        return None

    def compute(self, sample: Sample) -> RewardResult:
        refs = [r.strip().strip("()").upper() for r in references(sample, key=self._reference_key)]
        bad = [r for r in refs if len(r) != 1 or r not in self._choices]
        if bad:
            raise ScoringError("invalid_input", f"reference {bad[0]!r} is not one of the choices {self._choices!r}")
        letter = self.extract(response_text(sample))
        return RewardResult.ok(float(letter in refs), info={"extracted": letter})


class Contains(BaseReward):
    """1.0 when the response contains the reference (any of them, or all with `mode="all"`)."""

    name = "text.contains"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        mode: Literal["any", "all"] = "any",
        case_sensitive: bool = False,
        reference_key: str | None = None,
    ):
        self._mode, self._case, self._reference_key = mode, case_sensitive, reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        text = normalize_text(response_text(sample), case_sensitive=self._case)
        found = [r for r in refs if normalize_text(r, case_sensitive=self._case) in text]
        hit = bool(found) if self._mode == "any" else len(found) == len(refs)
        return RewardResult.ok(float(hit), info={"found": found})


class KeywordCoverage(BaseReward):
    """Fraction of keywords the response mentions (whole words, case-insensitive by default).

    Keywords come from the `keywords` parameter, else from the row (`meta["keywords"]` or an
    object reference's `keywords`, else a list reference). With `forbidden`, the score is the
    fraction of forbidden words that are *absent*.
    """

    name = "text.keywords"
    range = (0.0, 1.0)

    def __init__(self, *, keywords: list[str] | None = None, forbidden: bool = False, case_sensitive: bool = False):
        self._keywords = list(keywords) if keywords is not None else None
        self._forbidden, self._case = forbidden, case_sensitive

    def _row_keywords(self, sample: Sample) -> list[str]:
        if self._keywords is not None:
            return self._keywords
        if "keywords" in sample.meta or isinstance(sample.reference, dict):
            words = meta_or_reference(sample, "keywords")
        else:
            words = references(sample)
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ScoringError("invalid_input", f"keywords must be a list of strings, got {words!r}")
        return words

    def compute(self, sample: Sample) -> RewardResult:
        words = self._row_keywords(sample)
        if not words:
            raise ScoringError("invalid_input", "keyword list is empty; nothing to check")
        text = response_text(sample)
        flags = 0 if self._case else re.IGNORECASE
        present = [w for w in words if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, flags)]
        good = len(words) - len(present) if self._forbidden else len(present)
        return RewardResult.ok(good / len(words), info={"present": present})
