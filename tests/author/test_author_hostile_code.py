"""Static checks against routes out of a restricted namespace that a deny-list misses: each
bypass below passed the old checks; the allow-list rejects every one with its kind and line.
And a candidate whose value has no float is a recorded fate, not the loop's end."""

from __future__ import annotations

import pytest
from author_helpers import small_loop

from rewardlab.author import Proposal, author_reward, check_code, evaluate_candidate
from rewardlab.errors import RewardCodeFailed, RewardCodeRejected

SIG = "def reward(obs, action, next_obs, info):\n"

BYPASSES = [
    # a generator's frame holds the real builtins
    (SIG + "    g = (x for x in [1])\n    b = g.gi_frame.f_builtins\n    return b['ev' + 'al']('1')\n", "forbidden_attribute", 3),
    # a class pattern reads attributes by keyword, without an Attribute node
    (SIG + "    match ():\n        case tuple(_x=s):\n            return 0.0\n    return 0.0\n", "forbidden_syntax", 2),
    (SIG + "    match obs:\n        case dict(__subclasses__=s):\n            return 0.0\n    return 0.0\n", "forbidden_syntax", 2),
    # a dunder spelled as bytes, decoded at run time
    (SIG + "    name = b'_' + b'_import_' + b'_'\n    return name.decode()\n", "forbidden_attribute", 3),
    (SIG + "    return b'__import__'.decode()\n", "dunder", 2),
    # format fields read attributes: the field is built by concatenation
    (SIG + "    u = '_'\n    return ('{0.' + u + u + 'class' + u + u + '}').format(obs)\n", "forbidden_attribute", 3),
    (SIG + "    u = '_'\n    return ('{0.' + u + u + 'class' + u + u + '}').format_map({'0': obs})\n", "forbidden_attribute", 3),
    # lambda defaults and decorators evaluate code on the frame route
    (SIG + "    f = lambda g=(x for x in ()): g.gi_frame.f_back\n    return 0.0\n", "forbidden_attribute", 2),
    ("def grab(f):\n    return f\n\n@grab\n" + SIG + "    return 0.0\n", "forbidden_syntax", 5),
    # a builtin off the allow-list, shadowed in one scope and used in another
    ("def shadow():\n    getattr = 1\n\n" + SIG + "    return getattr(obs, 'x')\n", "forbidden_name", 2),
    (SIG + "    class K:\n        pass\n    return 0.0\n", "forbidden_syntax", 2),
    (SIG + "    return obs.mro\n", "forbidden_attribute", 2),
    # a module's attributes are all allowed: rebinding its name to another value must not be
    ("import math\n" + SIG + "    math = (x for x in ())\n    return math.gi_frame\n", "forbidden_name", 3),
    ("import math as m\n" + SIG + "    for m in [obs]:\n        pass\n    return m.gi_code\n", "forbidden_name", 3),
    ("import math\n\ndef reward(obs, action, next_obs, info, math=None):\n    return 0.0\n", "forbidden_name", 3),
]


@pytest.mark.parametrize(("code", "kind", "line"), BYPASSES, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(BYPASSES)])
def test_static_check_bypass_is_rejected(code: str, kind: str, line: int) -> None:
    with pytest.raises(RewardCodeRejected) as info:
        check_code(code)
    assert (info.value.kind, info.value.line) == (kind, line), str(info.value)


def test_ordinary_reward_code_still_passes() -> None:
    check_code(
        "import math\nimport math as m\nfrom math import hypot\n\n\ndef dist(o):\n    return hypot(o['x'], o.get('y', 0))\n\n\n"
        + SIG
        + "    parts = {'goal': float(info.get('success', False)), 'dist': -dist(next_obs)}\n"
        "    seen = sorted(k for k, v in obs.items() if isinstance(v, int) and v > 0)\n"
        "    try:\n        ratio = len(seen) / max(1, m.floor(abs(action)))\n    except ZeroDivisionError:\n        ratio = 0.0\n"
        "    parts['ratio'] = round(ratio, 3) if math.isfinite(ratio) else 0.0\n"
        "    return parts\n"
    )


def test_a_value_with_no_float_is_non_finite_not_overflow(maze, pool) -> None:
    code = SIG + "    return 10 ** 400\n"
    with pytest.raises(RewardCodeFailed) as info:
        evaluate_candidate(code, maze.transitions, maze.shape, pool)
    assert info.value.kind == "non_finite" and "an int of" in str(info.value)


class _Huge:
    name = "huge"
    CODES = (SIG + "    return 10 ** 400\n", SIG + "    return {'a': 1.0, 'b': -(10 ** 400)}\n")

    def propose(self, task, goal, round, indices, history, policy):  # type: ignore[no-untyped-def]
        return [Proposal(i, "p", self.CODES[i], self.CODES[i]) for i in indices]


def test_a_candidate_returning_10_to_the_400_is_a_recorded_fate(maze, pool) -> None:
    result = author_reward(maze, _Huge(), goal="reach the goal", config=small_loop(candidates=2, rounds=1), pool=pool)
    assert [r["fate"] for r in result.records] == ["non_finite", "non_finite"]
