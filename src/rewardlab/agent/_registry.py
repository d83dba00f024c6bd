"""The rewards `rewardlab.agent` registers: dotted name -> ".module:attribute" (a module of this
package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. Both must stay literal dicts.
"""

BUILTINS: dict[str, str] = {
    # agent trajectories (docs/agents.md)
    "agent.tool_calls": ".tool_calls:ToolCalls",
    "agent.state": ".state:StateChecks",
    "agent.state_replay": ".replay:StateReplay",
    "agent.subtasks": ".subtasks:Subtasks",
    "agent.terms": ".subtasks:TrajectoryTerms",
    "agent.rank": ".judge:GroupRank",
    "agent.judge": ".judge:TrajectoryJudge",
}

NEEDS: dict[str, tuple[str, ...]] = {
    "agent.rank": ("httpx",),
    "agent.judge": ("httpx",),
}
