"""The `math.answer` reward: registry, spec, info, and errors that are never zeros."""

from __future__ import annotations

import pytest

from rewardlab.core import ErrorKind, Sample, Status, registry
from rewardlab.verify.math import MathAnswer


def test_registered_under_math_answer() -> None:
    reward = registry.create("math.answer", {"strict": True, "timeout": 3.0})
    assert isinstance(reward, MathAnswer)
    assert reward.name == "math.answer" and reward.range == (0.0, 1.0)
    assert reward.describe()["params"]["strict"] is True


def test_unknown_parameter_fails_when_built() -> None:
    from rewardlab.errors import SpecError

    with pytest.raises(SpecError, match="strict"):
        registry.create("math.answer", {"stric": True})


def test_correct_wrong_and_info() -> None:
    reward = MathAnswer()
    good = reward.score(Sample(response="so \\boxed{\\dfrac{2}{4}}", reference="\\frac{1}{2}"))
    assert good.status is Status.OK and good.score == 1.0
    assert good.info["extracted"] == "\\dfrac{2}{4}" and good.info["source"] == "boxed"
    assert good.info["candidate"] == "\\frac{2}{4}" and good.info["verdict"] == "equivalent"
    bad = reward.score(Sample(response="\\boxed{3}", reference="4"))
    assert bad.status is Status.OK and bad.score == 0.0 and bad.info["verdict"] == "not_equivalent"


def test_no_answer_is_a_wrong_answer_not_an_error() -> None:
    result = MathAnswer(strict=True).score(Sample(response="the answer is 4", reference="4"))
    assert result.status is Status.OK and result.score == 0.0
    assert "no answer found" in result.info["reason"]


def test_undecided_is_an_error_never_a_zero() -> None:
    result = MathAnswer().score(Sample(response="\\boxed{5}", reference="\\frac{1}{"))
    assert result.status is Status.ERROR and result.score is None
    assert result.error is not None and result.error.kind is ErrorKind.PARSE
    screened = MathAnswer().score(Sample(response="\\boxed{9^9^9^9}", reference="5"))
    assert screened.status is Status.ERROR and screened.error.kind is ErrorKind.UNSUPPORTED


def test_missing_reference_is_invalid_input() -> None:
    result = MathAnswer().score(Sample(response="\\boxed{5}"))
    assert result.status is Status.ERROR and result.error.kind is ErrorKind.INVALID_INPUT


def test_list_of_references_and_solution_reference() -> None:
    reward = MathAnswer()
    assert reward.score(Sample(response="\\boxed{0.5}", reference=["1/3", "\\frac12"])).score == 1.0
    solution = "We compute ... so the result is $\\boxed{\\frac{1}{2}}$."
    assert reward.score(Sample(response="\\boxed{0.5}", reference=solution)).score == 1.0
    assert MathAnswer(reference_mode="answer").score(Sample(response="\\boxed{0.5}", reference="\\boxed{0.5}")).score == 1.0


def test_chat_response_and_letter_gold() -> None:
    sample = Sample(response=[{"role": "assistant", "content": "Option \\boxed{(C)}"}], reference="C")
    assert MathAnswer().score(sample).score == 1.0


def test_usable_from_a_spec() -> None:
    import rewardlab

    spec = {
        "reward": {
            "name": "rlvr",
            "components": [{"name": "correct", "use": "math.answer", "weight": 1.0, "params": {"strict": True}}],
        }
    }
    results = rewardlab.score(spec, [{"response": "\\boxed{12}", "reference": "12"}, {"response": "12", "reference": "12"}])
    assert [r.score for r in results] == [1.0, 0.0]


def test_public_surface() -> None:
    import rewardlab.verify.math as math_pkg

    assert sorted(math_pkg.__all__) == sorted(
        ["SOURCES", "CheckOptions", "ExtractOptions", "Extraction", "Hedge", "MathAnswer", "Outcome", "SympyPool",
         "Verdict", "check", "default_pool", "extract_answer", "final_answer", "find_boxed", "warm_up"]
    )
    assert all(hasattr(math_pkg, name) for name in math_pkg.__all__)


def test_importing_the_package_does_not_import_sympy() -> None:
    import subprocess
    import sys

    code = "import sys, rewardlab.verify.math; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # sympy lives in the worker processes only


def test_reward_pickles_for_spawned_workers() -> None:
    import pickle

    reward = pickle.loads(pickle.dumps(MathAnswer(strict=True, min_sig_figs=4, approximate="always")))
    assert reward.params["min_sig_figs"] == 4 and reward.extract_options.strict
    assert reward.score(Sample(response="\\boxed{0.3333}", reference="\\frac13")).score == 1.0
    assert reward.score(Sample(response="\\boxed{0.333}", reference="\\frac13")).score == 0.0
