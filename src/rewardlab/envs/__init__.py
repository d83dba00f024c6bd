"""Rewards for classic RL agents (extra `rl`: gymnasium).

- `rewardlab.envs.rm` — reward machines: format, guards, text importer, Gymnasium wrapper,
  counterfactual experiences, shaping, hierarchical and timed machines;
- `rewardlab.envs.officeworld` — the office world and its four tasks;
- `rewardlab.envs.tabular` — vectorised Q-learning, CRM, shaping and HRM;
- `rewardlab.envs.preferences` — preference-based reward learning with B-Pref teachers;
- `rewardlab.envs.intrinsic` — count, hashed count, RND, ICM and curiosity-critic rewards;
- `rewardlab.envs.redistribution` — return decomposition and sum-preserving smoothing;
- `rewardlab.envs.starc` — STARC-style distance between tabular reward functions.
- `rewardlab.envs.multiobj` — MO-Gymnasium-style vector rewards, a tabular weight sweep (Optimistic
  Linear Support), non-Markovian aggregation of objectives with their own discounts;
- `rewardlab.envs.joint_returns` — MD3QN-style particles of the joint return of several reward sources.

Sub-modules are imported on use so that `import rewardlab.envs` needs neither gymnasium nor torch.
"""

from rewardlab.envs.rm import RewardMachine, parse_text_rm

__all__ = ["RewardMachine", "parse_text_rm"]
