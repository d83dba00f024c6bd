"""Model-based judges, rubrics and label-free rewards (docs/judges.md).

    from rewardlab.judges import LLMJudge
    judge = LLMJudge(base_url="http://127.0.0.1:8000/v1", model="qwen2.5-7b-instruct")

Registered as `judge.llm` (pointwise, k-vote, P(yes)), `judge.pairwise` (order-swapped
comparison with a baseline), `labelfree.majority_vote` (TTRL pseudo-labels over a group),
`labelfree.consensus` (free-form agreement, labels spread from labelled members),
`labelfree.self_certainty` and `labelfree.entropy` (from token logprobs), `judge.rubric`. The judges need the
`serve` extra (httpx).
"""

from rewardlab.judges.certainty import Entropy, SelfCertainty
from rewardlab.judges.client import ChatClient, Completion, Usage
from rewardlab.judges.consensus import MajorityVote
from rewardlab.judges.llm import LLMJudge
from rewardlab.judges.propagation import Consensus
from rewardlab.judges.protocols import PairwiseJudge, p_yes
from rewardlab.store.calls import CallCache
from rewardlab.templates import render

__all__ = [
    "CallCache",
    "ChatClient",
    "Completion",
    "Consensus",
    "Entropy",
    "LLMJudge",
    "MajorityVote",
    "PairwiseJudge",
    "SelfCertainty",
    "Usage",
    "p_yes",
    "render",
]
