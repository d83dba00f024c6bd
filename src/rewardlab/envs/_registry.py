"""The rewards `rewardlab.envs` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. A new reward of this package
is one line in `BUILTINS` (and one in `NEEDS` if it imports an extra only when it scores).
Both must stay literal dicts of strings.
"""

BUILTINS: dict[str, str] = {
    "rm.trace": ".rm.reward:RMTraceReward",  # docs/envs.md
}

NEEDS: dict[str, tuple[str, ...]] = {
}
