"""Without an extra, every command says which one to install: a message naming
`pip install 'rewardlab[...]'`, exit code 1, no traceback; `list` and `check` mark what is
unavailable. Each test runs a real interpreter in which the optional packages cannot be
imported (tests/without_extras.py), not a mock of the import system.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from without_extras import run_cli, run_python

MATH_SPEC = """
[reward]
name = "maths"
[[reward.components]]
name = "correct"
use = "math.answer"
"""

TEXT_SPEC = """
[reward]
name = "overlap"
[[reward.components]]
name = "bleu"
use = "similarity.bleu"
"""

EXACT_SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "maths.toml").write_text(MATH_SPEC)
    (tmp_path / "text.toml").write_text(TEXT_SPEC)
    (tmp_path / "exact.toml").write_text(EXACT_SPEC)
    rows = [{"prompt": "q", "response": f"\\boxed{{{i}}}", "reference": str(i % 3)} for i in range(6)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    candidates = [
        {"question": "p1", "gt": "1", "code": ["\\boxed{1}", "\\boxed{2}"], "pred": ["1", "2"], "score": [True, False]},
        {"question": "p2", "gt": "5", "code": ["\\boxed{4}", "\\boxed{5}"], "pred": ["4", "5"], "score": [False, True]},
    ]
    (tmp_path / "cands.jsonl").write_text("".join(json.dumps(r) + "\n" for r in candidates))
    return tmp_path


def _says_which_extra(run, extra: str) -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    assert f"pip install 'rewardlab[{extra}]'" in run.stderr + run.stdout, run.stderr + run.stdout


def test_the_child_really_cannot_import_a_blocked_package(tmp_path):
    run = run_python("import importlib.util\nprint(importlib.util.find_spec('sympy'))\nimport sympy", tmp_path, blocked=["sympy"])
    assert run.returncode == 1 and "ModuleNotFoundError: No module named 'sympy'" in run.stderr
    assert __import__("importlib").util.find_spec("sympy") is not None  # installed here, blocked there


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["serve", "exact.toml", "--port", "0"], "serve"),
        (["audit", "exact.toml", "--data", "data.jsonl", "-o", "audit"], "eval"),
        (["eval", "--data", "cands.jsonl", "-o", "eval"], "eval"),
        (["select", "curves", "cands.jsonl", "-o", "curves"], "select"),
        (["select", "simulate", "-n", "5"], "select"),
        (["math", "check", "x^2+2x+1", "(x+1)^2"], "math"),
        (["check", "text.toml"], "text"),
        (["score", "text.toml", "data.jsonl", "-w", "0"], "text"),
        (["check", "maths.toml"], "math"),
        (["score", "maths.toml", "data.jsonl", "-w", "0"], "math"),
        (["score", "math.answer", "data.jsonl", "-w", "0"], "math"),
    ],
    ids=lambda v: "-".join(v[:2]) if isinstance(v, list) else v,
)
def test_a_command_without_its_extra_names_it(files, args, extra):
    _says_which_extra(run_cli(args, files), extra)


def test_list_marks_rewards_whose_extras_are_missing(files):
    run = run_cli(["list", "--json"], files)
    assert run.returncode == 0, run.stderr
    rows = {row["name"]: row for row in json.loads(run.stdout)}
    assert rows["text.exact"]["available"] and rows["text.exact"]["unavailable"] is None
    for name, extra in [("math.answer", "math"), ("similarity.bleu", "text"), ("model.rm", "models"), ("judge.llm", "serve")]:
        assert not rows[name]["available"], name
        assert f"pip install 'rewardlab[{extra}]'" in rows[name]["unavailable"], rows[name]
    short = run_cli(["list", "math."], files)
    assert "math.answer  [0, 1]  (unavailable)" in short.stdout
    assert "pip install 'rewardlab[math]'" in short.stdout


def test_check_passes_what_the_core_install_can_run(files):
    run = run_cli(["check", "exact.toml"], files)
    assert run.returncode == 0 and "✓ exact.toml" in run.stdout, run.stdout + run.stderr


def test_math_answer_built_directly_gives_dependency_results_not_crashes(tmp_path):
    code = """
from rewardlab import Sample
from rewardlab.verify.math.reward import MathAnswer
reward = MathAnswer()
hard = reward.score(Sample(response=r"\\boxed{(x+1)^2}", reference="x^2+2x+1"))
easy = reward.score(Sample(response=r"\\boxed{2}", reference="2"))
print(hard.status.value, hard.error.kind.value, "|", hard.error.message)
print(easy.status.value, easy.score)
"""
    run = run_python(code, tmp_path, blocked=["sympy", "latex2sympy2_extended"])
    assert run.returncode == 0, run.stderr
    hard, easy = run.stdout.strip().splitlines()
    assert hard.startswith("error dependency |") and "pip install 'rewardlab[math]'" in hard
    assert "Traceback" not in hard
    assert easy == "ok 1.0"  # the string step needs no sympy


def test_the_python_api_raises_dependency_error(tmp_path):
    code = """
import rewardlab
from rewardlab.errors import DependencyError
from rewardlab.evaluate.stats import mcnemar_exact
from rewardlab.runner.ray import ensure_ray
for attempt in (lambda: rewardlab.score("math.answer", [{"response": "1", "reference": "1"}]),
                lambda: __import__("rewardlab.serve", fromlist=["create_app"]).create_app,
                lambda: mcnemar_exact([1, 0, 1], [0, 1, 1]),
                ensure_ray):
    try:
        attempt()
    except DependencyError as exc:
        print(type(exc).__name__, isinstance(exc, ImportError), exc.extras, exc.install)
"""
    run = run_python(code, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "DependencyError True ('math',) pip install 'rewardlab[math]'",
        "DependencyError True ('serve',) pip install 'rewardlab[serve]'",
        "DependencyError True ('eval',) pip install 'rewardlab[eval]'",
        "DependencyError True ('ray',) pip install 'rewardlab[ray]'",
    ]


@pytest.mark.parametrize(
    ("call", "extra"),
    [
        ("from rewardlab.evaluate.passk import pass_at_k_many; pass_at_k_many([4], [1], 2)", "eval"),
        ("from rewardlab.select.adaptive import beta_stop_confidence; beta_stop_confidence(3, 1)", "select"),
        ("from rewardlab.integrations.openai_graders import spec_to_toml; spec_to_toml({'reward': {}})", "text"),
        ("from rewardlab.author.tasks import gym_task_env; gym_task_env('CliffWalking-v1')", "rl"),
        ("from rewardlab.serve.launch import run_server; from rewardlab.serve.settings import ServeSettings; "
         "run_server(['text.exact'], ServeSettings(), port=0)", "serve"),
    ],
    ids=["passk", "adaptive", "graders", "author", "serve"],
)
def test_library_functions_name_their_extra(tmp_path, call, extra):
    code = f"from rewardlab.errors import DependencyError\ntry:\n    {call}\nexcept DependencyError as exc:\n    print(exc.install)"
    run = run_python(code, tmp_path)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stdout.strip() == f"pip install 'rewardlab[{extra}]'"


def test_a_replacement_registered_under_a_builtin_name_brings_its_own_needs(tmp_path):
    code = """
import rewardlab
rewardlab.register("math.answer", rewardlab.registry.factory("text.exact"), overwrite=True)
print(rewardlab.registry.unavailable("math.answer"), [r.score for r in rewardlab.score("math.answer", [{"response": "a", "reference": "a"}])])
"""
    run = run_python(code, tmp_path, blocked=["sympy", "latex2sympy2_extended"])
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "None [1.0]"
