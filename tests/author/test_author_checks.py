"""Static checks: each hostile or broken pattern is rejected with its kind and line."""

from __future__ import annotations

import pytest

from rewardlab.author import CodePolicy, check_code
from rewardlab.errors import RewardCodeError, RewardCodeRejected

SIG = "def reward(obs, action, next_obs, info):\n"

REJECTED = [
    ("import os\n" + SIG + "    return 0.0\n", "forbidden_import", 1),
    ("from os import path\n" + SIG + "    return 0.0\n", "forbidden_import", 1),
    ("import math, subprocess\n" + SIG + "    return 0.0\n", "forbidden_import", 1),
    ("from . import secrets\n" + SIG + "    return 0.0\n", "forbidden_import", 1),
    (SIG + "    return ().__class__.__base__\n", "dunder", 2),
    (SIG + "    return __import__('os').getpid()\n", "dunder", 2),
    (SIG + "    return getattr(obs, 'get')\n", "forbidden_name", 2),
    (SIG + "    return eval('1 + 1')\n", "forbidden_name", 2),
    (SIG + "    return len(open('/etc/passwd').read())\n", "forbidden_name", 2),
    (SIG + "    return type(obs)\n", "forbidden_name", 2),
    (SIG + "    k = '__cl' 'ass__'\n    return 0.0\n", "dunder", 2),
    (SIG + "    return 0.0 +\n", "syntax", 2),
    ("def reward(obs, action):\n    return 0.0\n", "signature", 1),
    ("def reward(obs, action, next_obs, info, extra):\n    return 0.0\n", "signature", 1),
    ("def reward(obs, action, next_obs, info, *, scale):\n    return 0.0\n", "signature", 1),
    ("def shaped(obs, action, next_obs, info):\n    return 0.0\n", "signature", None),
    ("   \n", "no_code", None),
    (SIG + "    return 0.0\n" + "x = 1\n" * 500, "too_large", None),
]


@pytest.mark.parametrize(("code", "kind", "line"), REJECTED, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(REJECTED)])
def test_rejected_code_names_its_kind_and_line(code, kind, line):
    with pytest.raises(RewardCodeRejected) as info:
        check_code(code)
    assert info.value.kind == kind
    assert info.value.line == line
    assert isinstance(info.value, RewardCodeError)


def test_allowed_code_passes_and_returns_the_tree():
    code = "import math\nfrom math import sqrt\n\n\ndef helper(o):\n    return sqrt(o['x'])\n\n\n" + SIG + (
        "    return {'dist': -math.hypot(obs['x'], obs['y']), 'bonus': float(info.get('success', False))}\n"
    )
    tree = check_code(code)
    assert any(getattr(n, "name", "") == "reward" for n in tree.body)


def test_reward_with_defaults_or_varargs_is_accepted():
    check_code("def reward(obs, action, next_obs, info, scale=1.0):\n    return 0.0\n")
    check_code("def reward(*args):\n    return 0.0\n")


def test_the_allow_list_is_a_policy():
    code = "import random\n" + SIG + "    return random.random()\n"
    with pytest.raises(RewardCodeRejected):
        check_code(code)
    check_code(code, CodePolicy(allowed_imports=frozenset({"math", "random"})))


def test_null_bytes_are_a_syntax_rejection_not_a_crash():
    with pytest.raises(RewardCodeRejected) as info:
        check_code(SIG + "    return 0.0\x00\n")
    assert info.value.kind == "syntax"
