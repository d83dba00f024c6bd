"""The rewards `rewardlab.learn` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. Both must stay literal dicts.
"""

BUILTINS: dict[str, str] = {
    # rewards learned from demonstrations (docs/demonstrations.md)
    "learn.demo": ".reward:DemoSpecReward",
    "learn.goal_baseline_text": ".reward:GoalBaselineTextReward",
}

NEEDS: dict[str, tuple[str, ...]] = {
    "learn.goal_baseline_text": ("torch", "transformers"),
}
