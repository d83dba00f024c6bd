"""The authoring loop: k candidates x r rounds, each checked, run in the sandbox, scored, and
recorded; resumable.

For every candidate: static checks (`checks.check_code`) -> one sandboxed batch over every
transition (`execute.evaluate_candidate`) -> cheap checks (`probes.run_checks`) -> a short
training scored on the true task (`train.train_on_table`, by the learner of `LoopConfig.train`:
tabular Q-learning, or SB3 DQN or PPO). What happened is the candidate's
`fate`: `scored`, or the kind of its `RewardCodeError` (`syntax`, `forbidden_import`,
`dunder`, `raised`, `non_finite`, `timeout`, `memory`, `crashed`...), or `author_error`. A
candidate can fail in every way there is; the loop goes on.

Every record (prompt, reply, code, fate, checks, fitness) goes to a `RunStore` as it is made,
keyed by round and index; a loop started again with the same run id and settings reads what
is there and asks the author only for what is missing, so its prompts are the same.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rewardlab.author.authors import Author, Proposal
from rewardlab.author.checks import CodePolicy, check_code
from rewardlab.author.config import TrainConfig
from rewardlab.author.execute import DEFAULT_LIMITS, evaluate_candidate
from rewardlab.author.probes import PreferencePairs, preference_pairs, run_checks
from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import merit, rank, train_on_table
from rewardlab.core.numbers import refuse_nan
from rewardlab.errors import ConfigError, RewardCodeError
from rewardlab.sandbox import Limits, SandboxPool

__all__ = ["AuthorResult", "LoopConfig", "author_reward", "fates_line", "load_authored", "write_result"]


@dataclass(frozen=True)
class LoopConfig:
    """Settings of one authoring loop.

    Attributes:
        candidates: k, candidates per round.
        rounds: r, rounds of reflection (the first has none).
        train: the short training that scores a candidate, and its learner
            (`TrainConfig.learner`).
        limits: sandbox limits for one candidate's whole batch.
        policy: what the static checks allow.
        preference_pairs: labelled trajectory pairs for the agreement check (0: none).
        target: stop after the round in which a candidate's `merit` (the lower of its trained and
            its planned optimality) reaches this (None: never).
        validation: when set, the leading candidate is re-trained on these (fresh) seeds before
            it can stop the loop or be returned as the best, and counts with the lower of its
            merit and the validated optimality: a few training seeds over-rate a reward that
            only some seeds learn from (None: no validation). Its learner must be `train`'s:
            validation asks again what was asked, on fresh seeds.
    """

    candidates: int = 4
    rounds: int = 4
    train: TrainConfig = field(default_factory=TrainConfig)
    limits: Limits = DEFAULT_LIMITS
    policy: CodePolicy = field(default_factory=CodePolicy)
    preference_pairs: int = 300
    target: float | None = None
    validation: TrainConfig | None = None

    def __post_init__(self) -> None:
        refuse_nan(self)
        if self.candidates < 1 or self.rounds < 1 or self.preference_pairs < 0:
            raise ConfigError(f"need candidates >= 1, rounds >= 1, preference_pairs >= 0; got {self}")
        if self.validation is not None and self.validation.learner != self.train.learner:
            raise ConfigError(f"validation trains with learner {self.validation.learner!r} but train with {self.train.learner!r}; "
                              f"give both TrainConfigs the same learner")  # fmt: skip

    def digest(self) -> str:
        """What a resumed run must share with the original: a hash of every setting."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True, default=sorted).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AuthorResult:
    """Every candidate's record, in (round, index) order, and the best scored one (None when
    no candidate could be scored)."""

    records: list[dict[str, Any]]
    best: dict[str, Any] | None
    run_id: str

    def fates(self) -> dict[str, int]:
        """How many candidates met each fate, most common first."""
        return dict(Counter(r["fate"] for r in self.records).most_common())

    def best_worth(self) -> float | None:
        """What the best candidate counts for against a target: its `merit`, lowered to its
        validated optimality when it was validated (None when no candidate was scored)."""
        return None if self.best is None else _worth(self.best)


def _score(proposal: Proposal, task: FiniteTask, config: LoopConfig, pool: SandboxPool,
           pairs: PreferencePairs | None) -> dict[str, Any]:  # fmt: skip
    """Check, run, probe and train one proposal; the part of its record that says how it fared."""
    if proposal.code is None:
        return {"fate": proposal.error_kind or "author_error", "error": proposal.error}
    try:
        check_code(proposal.code, config.policy)
        table = evaluate_candidate(proposal.code, task.transitions, task.shape, pool, limits=config.limits)
    except RewardCodeError as exc:
        return {"fate": exc.kind, "error": str(exc)}
    checks = run_checks(task, table.total, pairs, gamma=config.train.gamma, seed=config.train.seed)
    fitness = train_on_table(task, table, config.train)
    return {"fate": "scored", "error": None, "checks": checks.to_dict(), "fitness": fitness.to_dict()}


def _new_records(author: Author, task: FiniteTask, goal: str, round_: int, wanted: list[int],
                 history: list[dict[str, Any]], config: LoopConfig, pool: SandboxPool,
                 pairs: PreferencePairs | None) -> Iterator[dict[str, Any]]:  # fmt: skip
    """One record per wanted index, as each is scored. An author that fails or leaves an index
    out gives that index an `author_error` record: no candidate goes missing."""
    try:
        proposals = {p.index: p for p in author.propose(task, goal, round_, wanted, history, config.policy)} if wanted else {}
    except Exception as exc:  # a third-party author's bug is its candidates' fate, not the loop's end
        proposals = {i: Proposal(i, None, "", None, f"the author failed: {type(exc).__name__}: {exc}", "author_error") for i in wanted}
    for index in wanted:
        proposal = proposals.get(index) or Proposal(index, None, "", None, "the author returned no candidate for this index", "author_error")
        started = time.monotonic()
        record = {"round": round_, "index": index, "author": author.name, "prompt": proposal.prompt, "reply": proposal.reply,
                  "code": proposal.code, "meta": dict(proposal.meta), **_score(proposal, task, config, pool, pairs)}  # fmt: skip
        record["seconds"] = round(time.monotonic() - started, 3)
        yield record


def author_reward(
    task: FiniteTask,
    author: Author,
    *,
    goal: str,
    config: LoopConfig | None = None,
    pool: SandboxPool | None = None,
    store: Any = None,
    run_id: str | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> AuthorResult:
    """Run the loop and return every record and the best candidate.

    Args:
        task: the finite task (`office_task_env`, `grid_task_env`, `task_by_name`).
        author: a `TemplateAuthor`, an `LLMAuthor`, or anything with the `Author` protocol.
        goal: the goal in words, as the author is told it.
        config: k, r, training budget, limits (`LoopConfig`).
        pool: the sandbox pool candidates run in (default: a pool of one, closed at the end).
        store: a `rewardlab.store.RunStore` to record into and resume from (default: none).
        run_id: the run's id in `store` (default: derived from task, goal, author and config).
        on_record: called with each new record as it is made (progress, logging).
    """
    config = config or LoopConfig()
    digest = hashlib.sha256(f"{task.name}\n{goal}\n{author.name}\n{config.digest()}".encode()).hexdigest()[:16]
    run_id = run_id or f"author-{digest}"
    done: dict[int, dict[str, Any]] = {}
    if store is not None:
        store.start_run(run_id, spec_hash=digest, source=task.name, total=config.rounds * config.candidates)
        done = dict(store.iter_run(run_id))
    pairs = preference_pairs(task, n=config.preference_pairs, gamma=config.train.gamma, seed=config.train.seed) if config.preference_pairs else None
    own_pool = pool is None
    pool = pool or SandboxPool(size=1)
    records: list[dict[str, Any]] = []
    k = config.candidates
    try:
        for round_ in range(config.rounds):
            wanted = [i for i in range(k) if round_ * k + i not in done]
            for record in _new_records(author, task, goal, round_, wanted, records, config, pool, pairs):
                done[round_ * k + record["index"]] = record
                if store is not None:
                    store.record_rows(run_id, [(round_ * k + record["index"], record)])
                if on_record is not None:
                    on_record(record)
            records += [done[round_ * k + i] for i in range(k)]
            leader = _validated_leader(records, task, config, pool)
            if config.target is not None and leader is not None and _worth(leader) >= config.target:
                break
        best = _validated_leader(records, task, config, pool)
    finally:
        if own_pool:
            pool.close()
    if store is not None:
        store.finish_run(run_id)
    return AuthorResult(records, best, run_id)


def _worth(record: Mapping[str, Any]) -> float:
    """`merit`, lowered to the validated optimality once the record has been validated."""
    worth = merit(record)
    if "validation" in record:
        worth = min(worth, float(record["validation"]["optimality"]))
    return worth


def _validated_leader(records: list[dict[str, Any]], task: FiniteTask, config: LoopConfig,
                      pool: SandboxPool) -> dict[str, Any] | None:  # fmt: skip
    """The best scored record by `_worth`; with `config.validation`, the leader is validated
    first (and the next one, while validation drops the leader below it). Validation is
    deterministic given its seeds, so a resumed loop validates again to the same numbers."""
    scored = [r for r in records if r["fate"] == "scored"]
    while scored:
        leader = max(scored, key=lambda r: (_worth(r), *rank(r)))
        if config.validation is None or "validation" in leader:
            return leader
        try:
            table = evaluate_candidate(leader["code"], task.transitions, task.shape, pool, limits=config.limits)
            leader["validation"] = train_on_table(task, table, config.validation).to_dict()
        except RewardCodeError as exc:  # it ran once; a second run that fails is no better
            leader["validation"] = {"optimality": 0.0, "learner": config.validation.learner, "error": f"{exc.kind}: {exc}"}
    return None


def write_result(result: AuthorResult, task: FiniteTask, goal: str, out: str | Path) -> dict[str, Path]:
    """Write `reward.py` (the best code), `author.toml` (a spec naming it, with its scores) and
    `records.jsonl` (every candidate) into the directory `out`. Returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"records": out / "records.jsonl"}
    with paths["records"].open("w", encoding="utf-8") as fh:
        for record in result.records:
            fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    if result.best is None:
        return paths
    best = result.best
    paths["reward"] = out / "reward.py"
    paths["reward"].write_text(best["code"], encoding="utf-8")
    paths["spec"] = out / "author.toml"
    sha = hashlib.sha256(best["code"].encode()).hexdigest()
    fit = best["fitness"]
    paths["spec"].write_text(
        "# A reward written by `rewardlab author`; load it with rewardlab.author.load_authored\n"
        f"[reward]\nname = {json.dumps('authored-' + task.name.replace('/', '-'))}\ntask = {json.dumps(task.name)}\n"
        f"goal = {json.dumps(goal)}\ncode = \"reward.py\"\nsha256 = \"{sha}\"\nauthor = {json.dumps(best['author'])}\n"
        f"run_id = {json.dumps(result.run_id)}\nround = {best['round']}\nindex = {best['index']}\n\n"
        f"[fitness]\nlearner = {json.dumps(fit.get('learner', 'q'))}\noptimality = {fit['optimality']}\n"
        f"success_rate = {fit['success_rate']}\n",
        encoding="utf-8",
    )
    return paths


def fates_line(records: Sequence[Mapping[str, Any]]) -> str:
    """`scored 5, timeout 1, ...` for logs."""
    return ", ".join(f"{k} {v}" for k, v in Counter(r["fate"] for r in records).most_common())


def load_authored(spec: str | Path, pool: SandboxPool | None = None) -> tuple[FiniteTask, Any]:
    """The task and `RewardTable` of a reward written by `write_result` (`author.toml`).

    The code is checked against its recorded sha256 and the static checks, and evaluated in
    the sandbox again: a file edited since is refused, not trusted.
    """
    import tomllib

    from rewardlab.author.tasks import task_by_name
    from rewardlab.core.jsontext import read_utf8
    from rewardlab.errors import InputError

    path = Path(spec)
    data = tomllib.loads(read_utf8(path))["reward"]
    code = read_utf8(path.parent / data["code"])
    if hashlib.sha256(code.encode()).hexdigest() != data["sha256"]:
        raise InputError(f"{data['code']} changed since it was authored (sha256 differs); re-run the loop or fix the file",
                         source=str(path))  # fmt: skip
    check_code(code)
    task = task_by_name(data["task"])
    own = pool is None
    pool = pool or SandboxPool(size=1)
    try:
        return task, evaluate_candidate(code, task.transitions, task.shape, pool)
    finally:
        if own:
            pool.close()
