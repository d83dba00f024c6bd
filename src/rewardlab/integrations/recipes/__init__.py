"""Ready-made launch files for the trainers: a verl config and an OpenRLHF launcher.

`python -m rewardlab.integrations.recipes` prints the folder they are in, for `--config-path`
and for copying them next to a run:

* `verl_rewardlab.yaml` — verl's `ppo_trainer` config with rewardlab as the reward function
  (`python -m verl.trainer.main_ppo --config-path DIR --config-name verl_rewardlab
  reward.custom_reward_function.reward_kwargs.spec=$PWD/reward.toml ...`).
* `openrlhf_rewardlab.sh` — starts `rewardlab serve` with a fresh token, waits until it is
  ready, runs OpenRLHF's `train_ppo_ray` against it and stops the server when training ends.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RECIPES", "recipe"]

RECIPES = Path(__file__).resolve().parent
_NAMES = {"verl": "verl_rewardlab.yaml", "openrlhf": "openrlhf_rewardlab.sh"}


def recipe(trainer: str) -> Path:
    """The launch file for `trainer` (`verl` or `openrlhf`).

    Raises:
        ConfigError: an unknown trainer.
    """
    from rewardlab.errors import ConfigError

    if trainer not in _NAMES:
        raise ConfigError(f"no recipe for {trainer!r}; there are: {', '.join(sorted(_NAMES))}")
    return RECIPES / _NAMES[trainer]
