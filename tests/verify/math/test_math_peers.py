"""rewardlab against verl's maths graders, run from the installed package on the same inputs.

`external/peer_rules.jsonl` holds answer pairs built from the graders' own normalisation rules
(verl 0.9.1's `math_reward` (hendrycks `is_equiv`), `prime_math` (PRM800K + Qwen2.5-Math
`math_equal`) and `math_dapo` (Minerva normalisation); see external/README.md), each with the
label it deserves. rewardlab must give every label; each peer is run on the same pair (in the
response format it reads) and may differ from the label only where the case documents why.
`bench/bench_math_peers.py` prints the agreement numbers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.utils.reward_score.prime_math", reason="verl (a peer) is not installed")
pytestmark = pytest.mark.slow  # importing verl and prime_math's process-per-call timeouts: ~40 s

_BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_math_peers.py"
_spec = importlib.util.spec_from_file_location("bench_math_peers", _BENCH)
assert _spec is not None and _spec.loader is not None
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)


@pytest.fixture(scope="module")
def verdicts() -> tuple[list[dict[str, Any]], dict[str, list[bool]]]:
    return peers.run_rules()


def test_rewardlab_gives_every_label(verdicts: tuple[list[dict[str, Any]], dict[str, list[bool]]]) -> None:
    cases, got = verdicts
    wrong = [(c["reference"], c["candidate"], c["expected"]) for c, ok in zip(cases, got["rewardlab"], strict=True) if ok != c["expected"]]
    assert wrong == []


@pytest.mark.parametrize("peer", ["hendrycks", "prime_math", "math_dapo"])
def test_peer_differs_from_the_label_only_where_documented(peer: str, verdicts: tuple[list[dict[str, Any]], dict[str, list[bool]]]) -> None:
    cases, got = verdicts
    differs = {i for i, (c, ok) in enumerate(zip(cases, got[peer], strict=True)) if ok != c["expected"]}
    documented = {i for i, c in enumerate(cases) if peer in c.get("differs", {})}
    assert sorted(differs - documented) == [], f"{peer} differs without a documented reason"
    assert sorted(documented - differs) == [], f"{peer} now agrees: remove the documented difference"


def test_peer_wrong_accepts_are_prime_math_tolerances(verdicts: tuple[list[dict[str, Any]], dict[str, list[bool]]]) -> None:
    """The only wrong accepts among the peers are prime_math's numeric conventions (rel_tol,
    pi = 3.14, x100 and /100, interval brackets); rewardlab has none."""
    cases, got = verdicts
    wrong = {tool: [c["candidate"] for c, ok in zip(cases, got[tool], strict=True) if ok and not c["expected"]] for tool in got}
    assert wrong["rewardlab"] == [] and wrong["hendrycks"] == [] and wrong["math_dapo"] == []
    assert sorted(wrong["prime_math"]) == sorted(["1.0002", "0.5", "50", "(1,2)", "3.14", "6.28"])


def test_every_case_names_its_rule_and_licence() -> None:
    for case in peers.rule_cases():
        assert {"peer", "file", "package", "rule", "licence"} <= set(case["source"])
        assert case["source"]["peer"] in ("hendrycks", "prime_math", "math_dapo")
        assert isinstance(case["expected"], bool)
