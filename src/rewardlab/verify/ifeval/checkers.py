"""IFEval-style verifiable constraints, one pure checker per instruction id.

Ids and keyword arguments follow Google's IFEval (Zhou et al. 2023, "Instruction-Following
Evaluation for Large Language Models", `instruction_following_eval/instructions.py`), so a row
of the released dataset (`instruction_id_list` + `kwargs`) is checked as is. Each checker is
`check(text, **kwargs) -> bool` and raises `ValueError` when its arguments are unusable.

Every checker except two gives the reference's verdict on seeded random texts
(`tests/verify/test_ifeval_reference.py`, against the `if-verifiable` port of IFEval's code).
The two, to stay offline: sentences are split with a regular expression and capital words
counted over word tokens (IFEval uses NLTK's Punkt model, a data download). The language is
detected with `langdetect` as in IFEval, seeded for determinism; undetectable text counts as
following (IFEval's choice) unless `undetectable_follows=False`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from rewardlab.errors import ConfigError

Relation = Literal["less than", "at least"]
Checker = Callable[..., bool]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"\b\w+\b")


def _compare(count: int, relation: str, target: int) -> bool:
    """IFEval's two relations: `less than` is strict, `at least` is inclusive."""
    if relation == "less than":
        return count < target
    if relation == "at least":
        return count >= target
    raise ConfigError(f"relation must be 'less than' or 'at least', got {relation!r}")


def count_words(text: str) -> int:
    """Words as IFEval counts them (NLTK's RegexpTokenizer(r"\\w+"))."""
    return len(_WORD.findall(text))


def split_sentences(text: str) -> list[str]:
    """Sentences: split after `.`, `!` or `?` followed by space and a capital or digit."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    return [p for p in parts if p]


# -- keywords ------------------------------------------------------------------------------------
def keywords_existence(text: str, *, keywords: list[str]) -> bool:
    return all(re.search(re.escape(k), text, re.IGNORECASE) for k in keywords)


def keywords_frequency(text: str, *, keyword: str, frequency: int, relation: Relation) -> bool:
    return _compare(len(re.findall(re.escape(keyword), text, re.IGNORECASE)), relation, frequency)


def forbidden_words(text: str, *, forbidden_words: list[str]) -> bool:
    return not any(re.search(r"\b" + re.escape(w) + r"\b", text, re.IGNORECASE) for w in forbidden_words)


def letter_frequency(text: str, *, letter: str, let_frequency: int, let_relation: Relation) -> bool:
    if len(letter) != 1 or not letter.isalpha():
        raise ConfigError(f"letter must be a single letter, got {letter!r}")
    return _compare(text.lower().count(letter.lower()), let_relation, let_frequency)


# -- language --------------------------------------------------------------------------------------
def response_language(text: str, *, language: str, undetectable_follows: bool = True) -> bool:
    """Whether langdetect's guess is `language` (ISO 639-1).

    Text with nothing to detect from (punctuation, digits) counts as following, as in IFEval's
    reference; `undetectable_follows=False` makes it fail instead, closing that loophole when
    the checker is a training reward.
    """
    import langdetect

    # langdetect is randomised; a fixed seed makes the verdict reproducible (its own docs).
    langdetect.DetectorFactory.seed = 0
    try:
        return bool(langdetect.detect(text) == language)
    except langdetect.LangDetectException:
        return undetectable_follows


# -- length ------------------------------------------------------------------------------------------
def number_sentences(text: str, *, num_sentences: int, relation: Relation) -> bool:
    return _compare(len(split_sentences(text)), relation, num_sentences)


def number_paragraphs(text: str, *, num_paragraphs: int) -> bool:
    # IFEval: paragraphs are separated by the markdown divider ***; empty ones fail.
    paragraphs = re.split(r"\s?\*\*\*\s?", text)
    paragraphs = [p for i, p in enumerate(paragraphs) if p.strip() or i not in (0, len(paragraphs) - 1)]
    if any(not p.strip() for p in paragraphs):
        return False
    return len(paragraphs) == num_paragraphs


def number_words(text: str, *, num_words: int, relation: Relation) -> bool:
    return _compare(count_words(text), relation, num_words)


def nth_paragraph_first_word(text: str, *, num_paragraphs: int, nth_paragraph: int, first_word: str) -> bool:
    paragraphs = [p for p in re.split(r"\n\n", text) if p.strip()]
    if len(paragraphs) != num_paragraphs or not 1 <= nth_paragraph <= len(paragraphs):
        return False
    words = paragraphs[nth_paragraph - 1].strip().split()
    word = re.sub(r"[^\w]", "", words[0]).lower() if words else ""
    return word == first_word.lower()


# -- detectable content and format -------------------------------------------------------------------
def number_placeholders(text: str, *, num_placeholders: int) -> bool:
    return len(re.findall(r"\[.*?\]", text)) >= num_placeholders


def postscript(text: str, *, postscript_marker: str) -> bool:
    marker = postscript_marker.strip()
    pattern = r"\s*p\.\s?p\.\s?s.*$" if marker.lower() == "p.p.s" else rf"\s*{re.escape(marker.lower())}.*$"
    return re.search(pattern, text.lower(), re.MULTILINE) is not None


def number_bullet_lists(text: str, *, num_bullets: int) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", text, re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, re.MULTILINE)
    return len(stars) + len(dashes) == num_bullets


def constrained_response(text: str) -> bool:
    options = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
    return any(option in text.strip() for option in options)


def number_highlighted_sections(text: str, *, num_highlights: int) -> bool:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", text) if h.removeprefix("**").removesuffix("**").strip()]
    return len(single) + len(double) >= num_highlights


def multiple_sections(text: str, *, section_spliter: str, num_sections: int) -> bool:
    sections = re.split(r"\s?" + re.escape(section_spliter) + r"\s?\d+\s?", text)
    return len(sections) - 1 >= num_sections


def json_format(text: str) -> bool:
    body = text.strip().removeprefix("```json").removeprefix("```Json").removeprefix("```JSON")
    body = body.removeprefix("```").removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def title(text: str) -> bool:
    return any(t.strip() for t in re.findall(r"<<([^\n]+)>>", text))


# -- combination, start/end, case, punctuation ---------------------------------------------------------
def two_responses(text: str) -> bool:
    # Empty parts are allowed only before the first and after the last "******" (IFEval).
    parts = text.split("******")
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part.strip())
        elif index not in (0, len(parts) - 1):
            return False
    return len(kept) == 2 and kept[0] != kept[1]


def repeat_prompt(text: str, *, prompt_to_repeat: str) -> bool:
    return text.strip().lower().startswith(prompt_to_repeat.strip().lower())


def end_checker(text: str, *, end_phrase: str) -> bool:
    return text.strip().strip('"').lower().endswith(end_phrase.strip().lower())


def capital_word_frequency(text: str, *, capital_frequency: int, capital_relation: Relation) -> bool:
    words = _WORD.findall(text)
    return _compare(sum(1 for w in words if w.isupper()), capital_relation, capital_frequency)


def english_capital(text: str, *, undetectable_follows: bool = True) -> bool:
    return text.isupper() and response_language(text, language="en", undetectable_follows=undetectable_follows)


def english_lowercase(text: str, *, undetectable_follows: bool = True) -> bool:
    return text.islower() and response_language(text, language="en", undetectable_follows=undetectable_follows)


def no_comma(text: str) -> bool:
    return "," not in text


def quotation(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'


#: IFEval instruction id -> checker. Short aliases (the part after ":") are accepted too.
CHECKERS: dict[str, Checker] = {
    "keywords:existence": keywords_existence,
    "keywords:frequency": keywords_frequency,
    "keywords:forbidden_words": forbidden_words,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_words": number_words,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:json_format": json_format,
    "detectable_format:title": title,
    "combination:two_responses": two_responses,
    "combination:repeat_prompt": repeat_prompt,
    "startend:end_checker": end_checker,
    "startend:quotation": quotation,
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "punctuation:no_comma": no_comma,
}
_ALIASES = {key.split(":", 1)[1]: key for key in CHECKERS}


def get_checker(instruction_id: str) -> Checker:
    """The checker for an IFEval id (`punctuation:no_comma`) or its short alias (`no_comma`)."""
    key = instruction_id if instruction_id in CHECKERS else _ALIASES.get(instruction_id, "")
    if not key:
        raise ConfigError(f"unknown IFEval instruction {instruction_id!r}; known: {sorted(CHECKERS)}")
    return CHECKERS[key]


def check(instruction_id: str, text: str, kwargs: dict[str, Any] | None = None) -> bool:
    """Whether `text` follows one instruction. `None`-valued kwargs are dropped, as in the
    released IFEval data where every row carries every key."""
    checker = get_checker(instruction_id)
    args = {k: v for k, v in (kwargs or {}).items() if v is not None}
    try:
        return bool(checker(text, **args))
    except TypeError as exc:
        raise ConfigError(f"{instruction_id}: bad arguments {sorted(args)}: {exc}") from exc
