"""rewardlab's `agent.tool_calls` against BFCL's own AST checker, on BFCL's possible answers.

Candidates are the gold calls and mutations probing each rule (bfcl_cases.py); both checkers
judge every one. Every disagreement must be the one documented convention (docs/agents.md,
"Agreement with BFCL"): in the order-insensitive categories BFCL pairs calls greedily, in gold
order, and can strand a gold call that a different pairing satisfies; rewardlab finds a maximum
matching. The test proves that for each such case with BFCL's own pairwise verdicts.
"""

from __future__ import annotations

import collections
import sys
from typing import Any

import bfcl_cases
import pytest

from rewardlab.agent.bfcl import reference_from_bfcl
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
