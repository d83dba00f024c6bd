"""Rewards written by an author (a language model, or a template search), checked before anyone
trains on them: the loop of Eureka (Ma et al., ICLR 2024), Text2Reward (Xie et al., ICLR 2024)
and CARD (Sun et al. 2024) as a tool.

    from rewardlab.author import LoopConfig, TemplateAuthor, author_reward, office_task_env

    result = author_reward(office_task_env("coffee_mail"), TemplateAuthor(seed=0),
                           goal="bring coffee and mail to the office", config=LoopConfig(rounds=3))

- `tasks` — finite tasks (office world with its reward-machine tasks, gridworlds) with every
  transition enumerated, as a candidate sees it;
- `checks` — static checks of candidate code (allow-listed imports, no dunders, size, signature);
- `execute` — one sandboxed batch of the candidate over every transition -> a reward table;
- `probes` — cheap checks: planning under the candidate, hacking probes, preference agreement;
- `config`, `train`, `train_sb3` — the short training on the table (tabular Q-learning, or SB3
  DQN or PPO: `TrainConfig.learner`), scored by the true task's success;
- `authors`, `prompts` — the template author, the OpenAI-compatible LLM author, the reflection;
- `loop` — k candidates x r rounds, every record in a `RunStore`, resumable.

Names are imported on first use (PEP 562), so `from rewardlab.author import TrainConfig` (the
command line's options) imports neither numpy nor the sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.author.authors import Author, LLMAuthor, Proposal, TemplateAuthor
    from rewardlab.author.checks import CodePolicy, check_code
    from rewardlab.author.config import TrainConfig
    from rewardlab.author.execute import RewardTable, evaluate_candidate
    from rewardlab.author.loop import (
        AuthorResult,
        LoopConfig,
        author_reward,
        load_authored,
        write_result,
    )
    from rewardlab.author.probes import Checks, preference_agreement, preference_pairs, run_checks
    from rewardlab.author.prompts import extract_code, task_messages
    from rewardlab.author.tasks import (
        FiniteTask,
        grid_task_env,
        gym_task_env,
        office_task_env,
        task_by_name,
    )
    from rewardlab.author.train import Fitness, train_on_table

__all__ = [
    "Author",
    "AuthorResult",
    "Checks",
    "CodePolicy",
    "FiniteTask",
    "Fitness",
    "LLMAuthor",
    "LoopConfig",
    "Proposal",
    "RewardTable",
    "TemplateAuthor",
    "TrainConfig",
    "author_reward",
    "check_code",
    "evaluate_candidate",
    "extract_code",
    "grid_task_env",
    "gym_task_env",
    "load_authored",
    "office_task_env",
    "preference_agreement",
    "preference_pairs",
    "run_checks",
    "task_by_name",
    "task_messages",
    "train_on_table",
    "write_result",
]

_WHERE = {
    "Author": "rewardlab.author.authors",
    "LLMAuthor": "rewardlab.author.authors",
    "Proposal": "rewardlab.author.authors",
    "TemplateAuthor": "rewardlab.author.authors",
    "CodePolicy": "rewardlab.author.checks",
    "check_code": "rewardlab.author.checks",
    "RewardTable": "rewardlab.author.execute",
    "evaluate_candidate": "rewardlab.author.execute",
    "AuthorResult": "rewardlab.author.loop",
    "LoopConfig": "rewardlab.author.loop",
    "author_reward": "rewardlab.author.loop",
    "load_authored": "rewardlab.author.loop",
    "write_result": "rewardlab.author.loop",
    "Checks": "rewardlab.author.probes",
    "preference_agreement": "rewardlab.author.probes",
    "preference_pairs": "rewardlab.author.probes",
    "run_checks": "rewardlab.author.probes",
    "extract_code": "rewardlab.author.prompts",
    "task_messages": "rewardlab.author.prompts",
    "FiniteTask": "rewardlab.author.tasks",
    "grid_task_env": "rewardlab.author.tasks",
    "gym_task_env": "rewardlab.author.tasks",
    "office_task_env": "rewardlab.author.tasks",
    "task_by_name": "rewardlab.author.tasks",
    "TrainConfig": "rewardlab.author.config",
    "Fitness": "rewardlab.author.train",
    "train_on_table": "rewardlab.author.train",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
