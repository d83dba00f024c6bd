"""The differential harness (bench/bench_math_diff.py) on a fixed sample, and the classes of
disagreement it found, each adjudicated with its reason.

The harness compares rewardlab's `math.answer` and Math-Verify with default calls over public
labelled model answers; here it runs on a small fixed slice of every source present, so CI checks
the harness itself and keeps the no-wrong-accept bar on real output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from rewardlab.core import Sample
from rewardlab.verify.math import CheckOptions, MathAnswer, Outcome, check, extract_answer

ROOT = Path(__file__).resolve().parents[3]


def _harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_math_diff", ROOT / "bench" / "bench_math_diff.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["bench_math_diff"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _accepts(gold: str, response: str) -> bool:
    return MathAnswer().score(Sample(prompt="", response=response, reference=gold)).score == 1.0


# A number right after a single `#` names a thing ("horse #12", "room #4", "item #3"); it is not a
# quantity, so the last-number fallback passes over it. `#### 16` (GSM8K's answer mark) is not a
# name. Found in ToRA's GSM8K outputs (microsoft/ToRA, MIT): the program printed 16 and the
# closing sentence "16 people think that horse #12 will win" was read as 12.
NUMBER_SIGN_NAMES = [
    ("16 people think that horse #12 will win the big race.", "16"),
    ("So 30 guests fit in room #4.", "30"),
    ("Item #3 costs 45 dollars in total.", "45"),
    ("The total is\n#### 72", "72"),
]


@pytest.mark.parametrize(("response", "answer"), NUMBER_SIGN_NAMES)
def test_a_number_after_a_number_sign_is_a_name_not_the_answer(response: str, answer: str) -> None:
    assert extract_answer(response).answer == answer


def test_a_named_number_is_not_accepted_for_the_quantity() -> None:
    assert _accepts(
        "16", "```output\n16.0\n```\n16 people think that horse #12 will win the big race."
    )
    assert not _accepts(
        "12", "```output\n16.0\n```\n16 people think that horse #12 will win the big race."
    )


# A response that ends by declining to answer states no answer: the number it mentions last
# (`f(0)`, "56 boxes", a year in the question) is no reading of one. Found in MathVista's model
# outputs (lupantech/MathVista, CC BY-SA 4.0), where both tools accepted such refusals whenever
# that number happened to equal the gold. A stated answer still counts.
DECLINED = [
    ("As an AI, I'm unable to view images. Please provide the ages of the two people in text.", "2"),
    ("I don't have access to the graph. The tick spacing depends on its scale.", "2"),
    ("The solution cannot be provided as the ages of the two people are not given.", "2"),
    (
        "The 2016 column lists primary schools only. Therefore, we cannot determine the year with "
        "the highest share.\n\nPlease provide additional information to answer the question.",
        "2016",
    ),
    (
        "To find f(0) we substitute 0 into f.\n\nIf the function is not given, it's impossible to find the value of f(0).",
        "0",
    ),
    ("The table does not provide information on how many shipments had exactly 56 boxes.", "56"),
    (
        "Remaining = total - 5 brown things.\n\nWithout the total we cannot provide a specific answer.",
        "5",
    ),
    (
        "The picture shows no bars with values.\n\nThere is not enough information to answer for 2016.",
        "2016",
    ),
]


@pytest.mark.parametrize(("response", "gold"), DECLINED)
def test_a_response_that_declines_to_answer_has_no_answer(response: str, gold: str) -> None:
    assert extract_answer(response).answer is None
    assert not _accepts(gold, response)


def test_a_stated_answer_is_kept_next_to_a_remark_on_missing_data() -> None:
    assert _accepts(
        "12", "The answer is 12.\n\nThe exact rate cannot be determined from the chart."
    )
    # the remark on missing data comes before the sentence that states the count
    assert _accepts(
        "0",
        "The text does not show any bar values. Since no bar is below 6, the number of such bars is 0.",
    )


# "The answer to the question is 2, as ...", "the final answer would be: 9, 3": a closing
# statement with its own answer, not a sentence whose last number is the answer.
STATEMENTS = [
    (
        "The answer to the question is 2, as there are two stores where items sold less than 5 units.",
        "2",
    ),
    ("So, the answer to the question is 2 bars have values larger than 4.</s>", "2"),
    ("The answer to this problem is 45 because each of 9 rows has 5 seats.", "45"),
    ("9 dots in 3 groups, with 3 dots each.\n\nTherefore, the final answer would be: 9, 3", "9, 3"),
]


@pytest.mark.parametrize(("response", "answer"), STATEMENTS)
def test_the_answer_to_the_question_is_a_closing_statement(response: str, answer: str) -> None:
    assert extract_answer(response).answer == answer


def test_a_list_in_the_closing_statement_is_not_its_last_number() -> None:
    assert not _accepts(
        "3", "9 dots in 3 groups, with 3 dots each.\n\nTherefore, the final answer would be: 9, 3"
    )


# A ratio or a time is one number in prose: "is 3:1" is the ratio 3 (not 1), "at 4:30" a time.
@pytest.mark.parametrize(
    ("response", "gold", "accepted"),
    [
        ("The ratio of the procedures in 2004 to those in 2007 is 3:1.", "1", False),
        ("The ratio of the procedures in 2004 to those in 2007 is 3:1.", "3", True),
        ("So the train arrives at 4:30.", "4:30", True),
        ("So the train arrives at 4:30.", "30", False),
    ],
)
def test_a_ratio_or_time_in_prose_is_read_whole(response: str, gold: str, accepted: bool) -> None:
    assert _accepts(gold, response) is accepted


# A bare unit symbol after a number (`16 m`, `-130 km/h`) against a bare number: the number with
# its unit, as words already were (`7 miles`). Found in MathVista (Bard's "**16 m**", "-130
# km/h"); graders strip units (Math-Verify accepts both). Read only where the other answer is a
# bare number, so a letter that may be a variable (`2 x`) is never dropped.
@pytest.mark.parametrize(
    ("gold", "answer", "accepted"),
    [
        ("16", "16 m", True),
        ("16 m", "16", True),
        ("-130", "-130 km/h", True),
        ("9.8", "9.8 m/s^2", True),
        ("2", "2 \\, \\text{s}", True),
        ("17", "16 m", False),
        ("2", "2 x", False),
        ("16", "16m", False),
        ("x", "16 m", False),
    ],
)
def test_a_bare_unit_symbol_after_a_number(gold: str, answer: str, accepted: bool) -> None:
    assert _accepts(gold, f"The perimeter is $\\boxed{{{answer}}}$.") is accepted


# Label-false answers rewardlab accepts in the fixed sample (the first 12 rows of each source),
# each with why it is left: Math-Verify accepts them too.
KNOWN_WRONG_ACCEPTS = {
    (
        "mathvista:mplugowl_7b_ft",
        "21",
    ): "the response copies the question ('... divided into 2 equal groups') without "
    "filling the blank; its last number, 2, is the question's, and equals the gold",
}


@pytest.fixture(scope="module")
def sample() -> tuple[ModuleType, list[object]]:
    harness = _harness()
    cases, _missing = harness.all_cases(harness.SHARED, harness.MIRROR, limit=12)
    return harness, cases


@pytest.mark.slow
def test_harness_tables_on_a_fixed_sample(sample: tuple[ModuleType, list[object]]) -> None:
    pytest.importorskip("math_verify")
    harness, cases = sample
    sources = {case.source for case in cases}  # type: ignore[attr-defined]
    assert {"suite:math-verify", "suite:graders"} <= sources  # committed in the repository
    ours = harness.rewardlab_verdicts(cases)
    theirs = harness.math_verify_verdicts(cases)
    rows = {row["source"]: row for row in harness.table(cases, ours, theirs)}
    assert set(rows) == sources | {"all"}
    total = rows["all"]
    assert total["n"] == len(cases)
    wrong = {
        (case.source, case.key)
        for case, (ok, _) in zip(cases, ours, strict=True)
        if ok and not case.label
    }  # type: ignore[attr-defined]
    assert wrong <= set(KNOWN_WRONG_ACCEPTS)
    assert total["rewardlab agree"] >= total["math-verify agree"]
    for row in rows.values():
        n = row["n"]
        assert (
            row["rewardlab agree"] + row["rewardlab wrong accepts"] + row["rewardlab wrong rejects"]
            == n
        )
    listed = harness.disagreements(cases, ours, theirs)
    assert (
        len([d for d in listed if d["rewardlab"]["accepted"] != d["math-verify"]["accepted"]])
        == total["disagree"]
    )


# Model answers that are words where the gold is a number ("indeterminate", a model's name
# from a chart, "X years", a refusal in Persian; all from MathVista's outputs): no number equals
# a word, so they are decided without sympy (which read each as a product of unknowns after a
# 10-100 ms parse). Function names (`sin(\pi)`, `\ln 1`) are no words.
@pytest.mark.parametrize(
    "candidate",
    [
        "indeterminate",
        "OpenChat-8192-13B",
        "week 3",
        "approximately 20",
        "X years",
        "بدون اطلاعات بیشتر",
    ],
)
def test_words_against_a_number_are_decided_without_sympy(candidate: str) -> None:
    verdict = check("3", candidate, CheckOptions(allow_symbolic=False))
    assert verdict.outcome is Outcome.NOT_EQUIVALENT


@pytest.mark.parametrize(
    ("gold", "candidate"), [("0", "\\sin(\\pi)"), ("0", "\\ln 1"), ("1", "\\exp(0)")]
)
def test_function_names_are_not_words(gold: str, candidate: str) -> None:
    assert check(gold, candidate).outcome is Outcome.EQUIVALENT


# A prose answer with no digit at all states its count in words ("There are three objects left
# on the table."): the last-number fallback reads the last "there are <number word>" count
# (other number words are often no count: "the smallest one"). Found in MathVista's
# outputs, where LLaVA-style models answer counting questions this way (MathVista's GPT-4
# extraction reads them; Math-Verify does not). A digit anywhere in the close keeps the
# digit reading, and a declining close still has no answer.
@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("After removing the blue spheres, there are three objects left on the table.", "3"),
        ("There are two sequences with negative scores.", "2"),
        ("There are twenty-one ways to choose them.", "21"),
        ("After removing the cubes, there are a total of four objects left.", "4"),
        ("There are two red blocks and three tiny objects. Removing the tiny ones, we are left with one.", "1"),
        ("There are 2 bars with values smaller than 0.", "0"),
        # a number word that states no count: a pronoun, a part of the question
        ("Look at all the accuracy values and identify the smallest one.", None),
        ("Of the three people in the image, only the actor was born after the war.", None),
        ("No one can tell; it is impossible to determine the count.", None),
        ("I do not know.", None),
    ],
)
def test_number_words_in_prose_without_digits(response: str, answer: str | None) -> None:
    assert extract_answer(response).answer == answer


def _mirror_peers() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "math_mirror_peers", ROOT / "bench" / "math_mirror_peers.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_a_snapshot_peer_that_is_absent_is_skipped_with_a_note(tmp_path: Path) -> None:
    peers = _mirror_peers()
    got = list(peers.collect(peers.start(tmp_path / "no-mirror", [("1", "\\boxed{1}")], tmp_path)))
    assert [name for name, _, _ in got] == ["qwen25math", "minerva"]
    for name, verdicts, note in got:
        assert verdicts is None
        assert note.startswith(f"{name} skipped: FileNotFoundError"), note
