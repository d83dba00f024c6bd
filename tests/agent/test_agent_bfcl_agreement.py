"""rewardlab's `agent.tool_calls` against BFCL's own AST checker, on BFCL's possible answers.

Candidates are the gold calls and mutations probing each rule (bfcl_cases.py); both checkers
judge every one. Every disagreement must be the one documented convention (docs/agents.md,
"Agreement with BFCL"): in the order-insensitive categories BFCL pairs calls greedily, in gold
order, and can strand a gold call that a different pairing satisfies; rewardlab finds a maximum
matching. The test proves that for each such case with BFCL's own pairwise verdicts.
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Mapping
from typing import Any

import bfcl_cases
import pytest

from rewardlab.agent.bfcl import reference_from_bfcl
from rewardlab.agent.literals import decode
from rewardlab.agent.tool_calls import ToolCalls
from rewardlab.core.sample import Sample

pytestmark = pytest.mark.skipif(not bfcl_cases.available(), reason="no mirror of ShishirPatil/gorilla at /work/.mirror")


@pytest.fixture(scope="module")
def checker() -> Any:
    return bfcl_cases.load_checker()


def _perfect_matching_exists(checker: Any, functions: list[Any], output: list[Any], gold: list[Any], language: Any) -> bool:
    """Whether BFCL's own per-call verdicts admit a one-to-one pairing (Kuhn's algorithm)."""
    ok = [[checker.simple_function_checker(checker.find_description(functions, next(iter(g))), o, g, language, "rewardlab_test")["valid"]
           for g in gold] for o in output]  # fmt: skip
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(len(gold)):
            if ok[i][j] and j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return len(output) == len(gold) and all(augment(i, set()) for i in range(len(output)))


@pytest.mark.parametrize("category", bfcl_cases.CATEGORIES)
def test_tool_calls_agree_with_bfcl_ast_checker(checker: Any, category: str) -> None:
    language = sys.modules["bfcl_eval.constants.enums"].Language.PYTHON
    reward = ToolCalls(strings="loose")
    counts: collections.Counter[str] = collections.Counter()
    unexplained = []
    for question, answer in bfcl_cases.entries(category):
        functions, gold = question["function"], answer["ground_truth"]
        for name, candidate in bfcl_cases.mutations(bfcl_cases.gold_output(gold, functions), gold):
            theirs = checker.ast_checker(functions, candidate, gold, language, category, "rewardlab_test")["valid"]
            sample = Sample.from_dict({"response": bfcl_cases.as_messages(candidate), "reference": reference_from_bfcl(category, gold, functions)})
            result = reward.score(sample)
            assert result.status == "ok", (question["id"], result.error)
            ours = result.score == 1.0
            counts["cases"] += 1
            counts["valid"] += theirs
            if theirs == ours:
                counts["agree"] += 1
            elif "parallel" in category and ours and _perfect_matching_exists(checker, functions, candidate, gold, language):
                counts["greedy_pairing"] += 1  # the documented convention
            else:
                unexplained.append((question["id"], name, theirs, ours))
    print(f"\n{category}: {dict(counts)}")
    assert not unexplained, unexplained[:5]
    assert counts["cases"] > 100 and 0 < counts["valid"] < counts["cases"]  # both verdicts occur


def _element_text(value: Any) -> str:
    """An element as its Java source text (what BFCL's converter keeps of it)."""
    return json.dumps(value)


def _java_convention(functions: list[Any], candidate: list[Any], gold: list[Any]) -> str | None:
    """Which documented convention explains a Java case rewardlab accepts and BFCL rejects, proved
    with BFCL's own converter: each argument BFCL reads differently from rewardlab is a number
    whose literal Java widens (an int for a long) or suffixes (``0.5d``), or a collection whose
    elements BFCL keeps as their source text (``"\\"a\\""`` for the string a, ``"42"`` for 42);
    or the possible answer gives a dict value bare (not a list), which BFCL iterates."""
    convert = sys.modules["bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter"].java_type_converter
    ((_, args),) = candidate[0].items()
    properties = functions[0]["parameters"]["properties"]
    found = set()
    for param, text in args.items():
        declared = properties.get(param, {})
        kind, items = declared.get("type"), declared.get("items", {}).get("type")
        ours = decode(text, declared, "java")
        theirs = convert(text, kind, items) if kind in ("Array", "ArrayList") else convert(text, kind)
        if ours == theirs:
            continue
        if kind in ("long", "double") and isinstance(ours, int | float) and isinstance(theirs, str):
            found.add("number literal")
        elif isinstance(ours, list) and theirs == [_element_text(v) if items in ("any", None) or isinstance(v, str) else v for v in ours]:
            found.add("element source text")
        else:
            return None
    bare = any(isinstance(v, Mapping) and any(not isinstance(x, list) for x in v.values()) for call in gold for p in call.values() for a in p.values() for v in a)
    if not found and bare:
        found.add("bare dict value")
    return ", ".join(sorted(found)) or None


@pytest.mark.parametrize("category", sorted(bfcl_cases.LANGUAGE_CATEGORIES))
def test_java_and_javascript_calls_agree_with_bfcl_ast_checker(checker: Any, category: str) -> None:
    language = getattr(sys.modules["bfcl_eval.constants.enums"].Language, bfcl_cases.LANGUAGE_CATEGORIES[category])
    java = category.endswith("java")
    reward = ToolCalls(strings="loose")
    counts: collections.Counter[str] = collections.Counter()
    unexplained = []
    for question, answer in bfcl_cases.entries(category):
        functions, gold = question["function"], answer["ground_truth"]
        typed = bfcl_cases.gold_output(gold, functions)
        for name, candidate in bfcl_cases.language_mutations(typed, gold, functions, java):
            theirs = checker.ast_checker(functions, candidate, gold, language, category, "rewardlab_test")["valid"]
            sample = Sample.from_dict({"response": bfcl_cases.as_messages(candidate), "reference": reference_from_bfcl(category, gold, functions)})
            result = reward.score(sample)
            assert result.status == "ok", (question["id"], result.error)
            ours = result.score == 1.0
            counts["cases"] += 1
            counts["valid"] += theirs
            convention = None if theirs == ours or theirs else _java_convention(functions, candidate, gold) if java else None
            if theirs == ours:
                counts["agree"] += 1
            elif convention is not None:
                counts[convention] += 1
            else:
                unexplained.append((question["id"], name, theirs, ours))
    print(f"\n{category}: {dict(counts)}")
    assert not unexplained, unexplained[:5]
    assert counts["cases"] > 400 and 0 < counts["valid"] < counts["cases"]
