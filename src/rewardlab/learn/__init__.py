"""Dense rewards learned from demonstrations (extras `rl` and `models`: gymnasium, torch, scikit-learn).

Each learner is fit from demonstrations (`DemoSet`) and is a `DemoReward`: `reward(obs,
next_obs) -> (N,)` over the demonstrations' observation features, saved without pickle and
read back by `load_learned`; progress learners also give a `potential` for shaping.

- `rewardlab.learn.demos` — the `Demo` / `DemoSet` format and its loader;
- `rewardlab.learn.planners` — demonstrations from planners: office world, toy-text, MountainCar;
- `rewardlab.learn.progress` — temporal-distance progress (TimeRewarder), subtask budgets;
- `rewardlab.learn.stages` — DrS stage rewards (stage index + bounded discriminator);
- `rewardlab.learn.similarity` — similarity to one demonstration, VLM-RM goal-baseline projection;
- `rewardlab.learn.likelihood` — likelihood under a model of expert trajectories (VIPER-style);
- `rewardlab.learn.impute` — reward imputation from a small labelled fraction;
- `rewardlab.learn.shaping`, `rewardlab.learn.vec` — Gymnasium and SB3 wrappers, potential-based shaping;
- `rewardlab.learn.reward` — the spec rewards `learn.demo` and `learn.goal_baseline_text`.

Sub-modules are imported on use: `import rewardlab.learn` needs no extra.
"""

from rewardlab.learn.base import DemoReward, load_learned

__all__ = ["DemoReward", "load_learned"]
