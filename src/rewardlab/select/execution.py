"""Execution-grouped selection for code: programs that print the same outputs are one answer.

Programs are run on a problem's inputs in `rewardlab.sandbox` (through `SandboxPool.run`, the
pool `verify.code` shares); this module never runs code itself. Two programs are in one class
when every output matches under `verify.code.output_matches` (the comparison `code.tests` uses);
a program that fails on any input (error, timeout, memory) or has no code gets class -1 and never
votes. A vote over these classes then picks the largest group (AlphaCode's clustering, Li et al.
2022, arXiv:2203.07814; CodeT's dual agreement without generated tests, Chen et al. 2022,
arXiv:2207.10397), optionally weighted or broken by a reward (`weighted_vote`, `hybrid_vote`).

What is covered: the isolation of `rewardlab.sandbox`. What is not: programs whose output
depends on time or randomness fall into different classes, which is the right reading (they do
not agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError

__all__ = ["ExecutionClasses", "execution_classes"]


@dataclass(frozen=True)
class ExecutionClasses:
    """Classes of programs by behaviour.

    Attributes:
        classes: `(problems, n_max)` class ids (-1: no code, failed on an input, or padding).
        outputs: per problem, per program, the list of stdouts (None where it did not run ok).
        failed: programs that failed on at least one input (their own fault).
        sandbox_errors: programs whose run could not be completed by the sandbox itself
            (`SandboxError`); they do not vote either, and are counted here, not as failures.
    """

    classes: NDArray[np.int64]
    outputs: list[list[list[str] | None]]
    failed: int
    sandbox_errors: int = 0


def _same(a: list[str], b: list[str]) -> bool:
    from rewardlab.verify.code import output_matches

    return all(output_matches(x, y) for x, y in zip(a, b, strict=True))


def _group(outputs: list[list[str] | None]) -> list[int]:
    reps: list[list[str]] = []
    ids = []
    for out in outputs:
        if out is None:
            ids.append(-1)
            continue
        target = next((k for k, rep in enumerate(reps) if _same(rep, out)), None)
        if target is None:
            reps.append(out)
            target = len(reps) - 1
        ids.append(target)
    return ids


def execution_classes(
    programs: Sequence[Sequence[str | None]],
    inputs: Sequence[Sequence[str]],
    *,
    pool: object | None = None,
    workers: int = 2,
    limits: object | None = None,
) -> ExecutionClasses:
    """Run every program of every problem on that problem's inputs and group by outputs.

    Args:
        programs: per problem, each candidate's program source (None: no code extracted; use
            `verify.code.extract_code` on responses).
        inputs: per problem, the stdin strings to run on (generated or given test inputs; at
            least one for a problem with programs).
        pool: a `rewardlab.sandbox.SandboxPool`; default the one `verify.code` shares.
        workers: pool size when the default pool is used.
        limits: `rewardlab.sandbox.Limits` of each run (default: the pool's).

    Examples:
        >>> programs = [["print(2 * int(input()))", "x = int(input())\\nprint(x + x)", "print(1)"]]
        >>> ex = execution_classes(programs, [["3", "5"]])
        >>> ex.classes.tolist()
        [[0, 0, 1]]
    """
    if len(programs) != len(inputs):
        raise ArrayError("inputs", f"{len(inputs)} input lists for {len(programs)} problems")
    blind = next((p for p, row in enumerate(programs) if not len(inputs[p]) and any(src is not None for src in row)), None)
    if blind is not None:  # with nothing to run on, every program would "agree" and form one class
        raise ArrayError("inputs", f"problem {blind} has programs but no inputs to run them on (give it at least one)")
    if pool is None:
        from rewardlab.sandbox import SandboxConfig
        from rewardlab.verify.code import shared_pool

        pool = shared_pool(workers, SandboxConfig())
    jobs = [(p, j, k) for p, row in enumerate(programs) for j, src in enumerate(row) if src is not None
            for k in range(len(inputs[p]))]  # fmt: skip

    from rewardlab.sandbox import SandboxError

    def run(job: tuple[int, int, int]) -> tuple[bool | None, str]:
        p, j, k = job
        for _attempt in range(2):  # a worker that died between jobs is replaced on the retry
            try:
                result = pool.run(programs[p][j], stdin=inputs[p][k], limits=limits)  # type: ignore[attr-defined]
            except SandboxError:
                continue
            return bool(result.ok), str(result.stdout)
        return None, ""  # the sandbox broke twice, not the program: counted apart

    with ThreadPoolExecutor(max_workers=max(1, getattr(pool, "size", workers))) as ex:
        results = list(ex.map(run, jobs))
    outputs: list[list[list[str] | None]] = [[[] if src is not None else None for src in row] for row in programs]
    broken: set[tuple[int, int]] = set()
    for (p, j, _), (ok, stdout) in zip(jobs, results, strict=True):
        current = outputs[p][j]
        if ok is None:
            broken.add((p, j))
        if current is not None:
            outputs[p][j] = [*current, stdout] if ok else None
    failed = sum(1 for p, row in enumerate(programs) for j, src in enumerate(row)
                 if src is not None and outputs[p][j] is None and (p, j) not in broken)  # fmt: skip
    width = max((len(row) for row in programs), default=0)
    classes = np.full((len(programs), width), -1, dtype=np.int64)
    for p, row in enumerate(outputs):
        classes[p, : len(row)] = _group(row)
    return ExecutionClasses(classes, outputs, failed, len(broken))
