"""The rewards `rewardlab.judges` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. A new reward of this package
is one line in `BUILTINS` (and one in `NEEDS` if it imports an extra only when it scores).
Both must stay literal dicts of strings.
"""

BUILTINS: dict[str, str] = {
    "judge.llm": ".llm:LLMJudge",
    "judge.pairwise": ".protocols:PairwiseJudge",  # docs/judges.md
    "judge.rubric": ".rubric:Rubric",  # docs/judges.md
    "labelfree.majority_vote": ".consensus:MajorityVote",  # docs/judges.md
    "labelfree.consensus": ".propagation:Consensus",  # docs/judges.md
    "labelfree.self_certainty": ".certainty:SelfCertainty",  # docs/judges.md
    "labelfree.entropy": ".certainty:Entropy",  # docs/judges.md
}

NEEDS: dict[str, tuple[str, ...]] = {
    "judge.llm": ("httpx",),
    "judge.pairwise": ("httpx",),
    "judge.rubric": ("httpx",),
}
