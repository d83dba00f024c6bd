"""The prompts an LLM author gets: the task, the rules, and the reflection on earlier rounds.

The reflection follows Eureka (Ma et al. 2024, sec. 3.3, "reward reflection"): after each
round the author sees the best candidate's code, its task score, and the value of each of its
reward components along training, plus why the other candidates failed (a static check, an
exception, NaN, a timeout), so it can fix the reward rather than start over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardlab.author.checks import SIGNATURE, CodePolicy
from rewardlab.author.config import LEARNERS
from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import rank
from rewardlab.errors import RewardCodeRejected

__all__ = ["extract_code", "reflection", "task_messages"]

_SYSTEM = (
    "You are a reward engineer. You write reward functions in Python for reinforcement-learning tasks. "
    "Answer with one ```python code block that defines exactly:\n{signature}\n"
    "Rules: return a float, or a dict of named float components (summed into the reward; name every term so "
    "its statistics can be reported back to you). Only these modules may be imported: {imports}. Plain "
    "functions, arithmetic, conditionals, loops, comprehensions and dicts/lists only: no classes, decorators "
    "or match statements, no dunder names, no eval/exec/getattr/open/type; attributes only of an imported "
    "module or container methods (get, items, keys, values, append...). The function is called on every "
    "transition of the task, so keep it fast and never loop forever."
)


def task_messages(task: FiniteTask, goal: str, policy: CodePolicy, history: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, str]]:
    """Chat messages asking for one candidate: system rules, then the task, goal and reflection."""
    system = _SYSTEM.format(signature=SIGNATURE, imports=", ".join(sorted(policy.allowed_imports)) or "none")
    user = f"Environment:\n{task.description}\n\nGoal: {goal}\n"
    if history:
        user += "\n" + reflection(history)
    user += "\nWrite the reward function."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def reflection(history: Sequence[Mapping[str, Any]], *, failures: int = 4) -> str:
    """The feedback on earlier candidates: the best one in full, the failed ones by reason."""
    scored = [r for r in history if r.get("fate") == "scored"]
    lines = []
    if scored:
        best = max(scored, key=rank)
        fit = best["fitness"]
        lines += [
            f"Best reward so far (round {best['round']}, candidate {best['index']}):",
            f"```python\n{best['code'].rstrip()}\n```",
            f"We trained agents with it ({LEARNERS[fit.get('learner', 'q')]}) and measured the true task: optimality {fit['optimality']:.3f} "
            f"(1.0 = every episode succeeds in the fewest steps), success rate {fit['success_rate']:.3f}, optimality "
            f"along training {fit['curve']}.",
            "Mean value per step of each reward component along training (and how often it was non-zero):",
        ]
        for name, stats in fit["components"].items():
            lines.append(f"  {name}: {stats['mean_per_step']} (non-zero on {stats['nonzero']:.0%} of steps)")
        checks = best.get("checks") or {}
        bad = [p["name"] for p in checks.get("probes", []) if not p["passed"]]
        if bad:
            lines.append(f"Its reward is higher on these behaviours than on solving the task: {', '.join(bad)}.")
        if checks.get("planning_optimality") is not None:
            lines.append(f"The best policy under this reward itself scores optimality {checks['planning_optimality']:.3f} on the true task.")
        if checks.get("preference_agreement") is not None:
            lines.append(f"It agrees with {checks['preference_agreement']:.0%} of labelled preferences between trajectory pairs.")
    failed = [r for r in history if r.get("fate") != "scored"][-failures:]
    if failed:
        lines.append("Candidates that could not be used:")
        lines += [f"  round {r['round']} candidate {r['index']}: {r['fate']}: {str(r.get('error', ''))[:300]}" for r in failed]
    lines.append("Improve the reward: change the components that do not help, fix the failures, keep what works.")
    return "\n".join(lines)


_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(reply: str) -> str:
    """The code in an author's reply: the last fenced block that defines `reward`, else the
    last fenced block, else the whole reply if it looks like code.

    Raises:
        RewardCodeRejected: `no_code` when the reply holds no code.
    """
    blocks = _BLOCK.findall(reply or "")
    with_reward = [b for b in blocks if re.search(r"^def reward\s*\(", b, flags=re.M)]
    if with_reward:
        return str(with_reward[-1])
    if blocks:
        return str(blocks[-1])
    if re.search(r"^def reward\s*\(", reply or "", flags=re.M):
        return reply
    raise RewardCodeRejected("no_code", f"the reply holds no code block: {json.dumps((reply or '')[:200])}")
