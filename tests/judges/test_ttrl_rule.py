"""`labelfree.majority_vote` against TTRL's rule, re-implemented here from the paper, on real data.

Zuo et al. 2025, "TTRL: Test-Time Reinforcement Learning" (arXiv:2504.16084), section 3: the N
sampled answers to a prompt vote, the most frequent one is the pseudo-label y*, and each
response gets `r(y_i, y*) = 1 if y_i = y* else 0`. Where the paper leaves a convention open, the
authors' released code (PRIME-RL/TTRL, `verl/utils/reward_score/ttrl/ttt_metrics.py`) fixes it,
and `ttrl_rewards` below follows it:

* the vote counts the extracted answer *strings* (`collections.Counter`), leaving out responses
  with no answer; a tie goes to the answer seen first (`Counter.most_common`);
* each response is then rewarded by the maths grader against the pseudo-label string;
* every group is rewarded, however small or split.

The data: ../shared/data/qwen25-math-cot-100.jsonl, 100 MATH problems x 8 Qwen2.5-Math
responses, whose `pred` column holds the answers extracted by Qwen2.5-Math's parser (the parser
TTRL ships under `ttrl/qwen/`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from rewardlab import Sample, Status
from rewardlab.judges.consensus import MajorityVote
from rewardlab.verify.math import check

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"
# TTRL trusts every group: the loosest settings rewardlab allows (min_agreement must be > 0).
TTRL_SETTINGS = {"min_group": 2, "min_agreement": 1e-9, "ties": "first"}


def ttrl_rewards(answers: Sequence[str | None], equivalent: Callable[[str, str], bool]) -> list[float]:
    """The paper's rule with the released code's conventions (see the module doc)."""
    votes = Counter(a for a in answers if a is not None)
    if not votes:
        raise ValueError("no answers to vote on")  # the released code raises IndexError here
    label = votes.most_common(1)[0][0]
    return [1.0 if a is not None and (a == label or equivalent(label, a)) else 0.0 for a in answers]


def _equivalent(reference: str, candidate: str) -> bool:
    return check(reference, candidate).equivalent


@pytest.fixture(scope="module")
def problems() -> list[dict]:
    if not DATA.exists():
        pytest.skip(f"{DATA} is not here (the shared data set)")
    return [json.loads(line) for line in DATA.read_text().splitlines()]


def _ours(reward: MajorityVote, preds: Sequence[str]) -> list:
    return reward.score_batch([Sample(response="", meta={"pred": p}, group="g") for p in preds])


def test_majority_vote_with_ttrl_settings_gives_ttrl_rewards_on_every_response(problems):
    reward = MajorityVote(answer_key="pred", **TTRL_SETTINGS)
    mismatched = []
    for p in problems:
        theirs = ttrl_rewards(p["pred"], _equivalent)
        ours = [r.score for r in _ours(reward, p["pred"])]
        if ours != theirs:
            mismatched.append((p["idx"], p["pred"], theirs, ours))
    assert len(problems) == 100 and mismatched == []


def test_default_settings_skip_exactly_the_ties_and_weak_majorities_and_agree_elsewhere(problems):
    """rewardlab's defaults (min_group 4, min_agreement 0.5, ties skipped) differ from TTRL by
    refusing untrusted groups; on every group they do trust, the rewards are TTRL's."""
    reward = MajorityVote(answer_key="pred")
    trusted = ties = weak = 0
    for p in problems:
        results = _ours(reward, p["pred"])
        counts = sorted(Counter(p["pred"]).values(), reverse=True)
        tie, share = len(counts) > 1 and counts[0] == counts[1], counts[0] / len(p["pred"])
        if results[0].status is Status.SKIPPED:
            assert tie or share < 0.5, p["idx"]
            ties += tie
            weak += not tie
            continue
        assert not tie and share >= 0.5
        trusted += 1
        assert [r.score for r in results] == ttrl_rewards(p["pred"], _equivalent), p["idx"]
    assert (trusted, ties, weak) == (93, 4, 3)  # numbers quoted in docs/judges.md


@pytest.mark.slow
def test_rewardlab_extraction_from_the_responses_gives_the_same_rewards_as_the_qwen_parser(problems):
    """The answers extracted from the full responses by `verify.math.extract_answer` vote the
    same way as the `pred` strings of Qwen's parser (the extraction convention, end to end)."""
    reward = MajorityVote(**TTRL_SETTINGS)
    for p in problems:
        ours = [r.score for r in reward.score_batch([Sample(response=t, group="g") for t in p["code"]])]
        assert ours == ttrl_rewards(p["pred"], _equivalent), p["idx"]


def test_convention_difference_equivalent_strings_vote_together_in_rewardlab_only():
    """TTRL counts strings, so 0.5 and \\frac{1}{2} split their votes and "2" wins 3 to 2; the
    maths verifier puts them in one cluster of 4, which wins (documented in docs/judges.md)."""
    answers = ["0.5", "0.5", "\\frac{1}{2}", "\\frac12", "2", "2", "2"]
    theirs = ttrl_rewards(answers, _equivalent)
    ours = _ours(MajorityVote(answer_key="pred", **TTRL_SETTINGS), answers)
    assert theirs == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert [r.score for r in ours] == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def test_convention_difference_ties_and_no_answers():
    """A tie: TTRL takes the first answer, rewardlab's default skips the group. No answer at
    all: TTRL's code fails, rewardlab skips with a reason."""
    tie = ["3", "4", "4", "3"]
    assert ttrl_rewards(tie, _equivalent) == [1.0, 0.0, 0.0, 1.0]
    assert [r.score for r in _ours(MajorityVote(answer_key="pred", **TTRL_SETTINGS), tie)] == [1.0, 0.0, 0.0, 1.0]
    assert {r.status for r in _ours(MajorityVote(answer_key="pred"), tie)} == {Status.SKIPPED}
    with pytest.raises(ValueError):
        ttrl_rewards([None, None], _equivalent)
    empty = MajorityVote(**TTRL_SETTINGS).score_batch([Sample(response="no idea", group="g")] * 2)
    assert {r.status for r in empty} == {Status.SKIPPED} and "no member has an answer" in empty[0].info["skip_reason"]
