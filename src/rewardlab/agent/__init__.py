"""Rewards for agent trajectories: tool calls, environment state, subtasks, trajectory terms.

A trajectory is a `Sample` whose response is in an agent shape (`rewardlab.core.trajectory`);
docs/agents.md shows every reward with a worked example.
"""
