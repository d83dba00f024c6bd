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
- `train` — short tabular Q-learning on the table, scored by the true task's success;
- `authors`, `prompts` — the template author, the OpenAI-compatible LLM author, the reflection;
- `loop` — k candidates x r rounds, every record in a `RunStore`, resumable.
"""

from rewardlab.author.authors import TEMPLATE_SPACE, Author, LLMAuthor, Proposal, TemplateAuthor
from rewardlab.author.checks import SIGNATURE, CodePolicy, check_code
from rewardlab.author.execute import DEFAULT_LIMITS, RewardTable, evaluate_candidate
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
from rewardlab.author.train import Fitness, TrainConfig, train_on_table

__all__ = [
    "DEFAULT_LIMITS",
    "SIGNATURE",
    "TEMPLATE_SPACE",
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
