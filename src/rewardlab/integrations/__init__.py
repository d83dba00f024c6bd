"""Adapters that run one rewardlab spec inside the trainers people use.

- `rewardlab.integrations.trl` — `as_trl_reward(spec)` for `trl.GRPOTrainer`;
- `rewardlab.integrations.verl` — `make_compute_score(spec)` / `compute_score` for verl;
- `rewardlab.integrations.verl_batch` — `RewardlabBatchManager`, a verl reward-loop manager
  that scores a chunk of rows in one batch (imports verl);
- `rewardlab.integrations.openrlhf` — `make_reward_func(spec, error_reward=...)` and the
  `/get_reward` mapping;
- `rewardlab.integrations.verifiers` — `as_verifiers_reward(spec)` / `as_verifiers_rubric(spec)`
  for a verifiers (PrimeIntellect) `Rubric`;
- `rewardlab.integrations.openai_graders` — OpenAI grader JSON -> rewardlab spec.

Each is imported on its own, so using one never imports another trainer's dependencies.
"""
