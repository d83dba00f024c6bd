"""Code rewards: run the program in a response against tests inside `rewardlab.sandbox`.

    >>> from rewardlab.core import Sample
    >>> from rewardlab.verify.code import CodeTests
    >>> reward = CodeTests(workers=1)
    >>> sample = Sample(response="```python\\nprint(int(input()) * 2)\\n```",
    ...                 reference={"cases": [{"input": "21", "output": "42"}]})
    >>> reward.score(sample).score
    1.0
"""

from rewardlab.verify.code.extract import Extracted, extract_code
from rewardlab.verify.code.harness import (
    CheckReport,
    PromptHelpers,
    TestVerdict,
    prompt_helpers,
    run_check,
)
from rewardlab.verify.code.reward import CodeTests, output_matches, shared_pool

__all__ = [
    "CheckReport",
    "CodeTests",
    "Extracted",
    "PromptHelpers",
    "TestVerdict",
    "extract_code",
    "output_matches",
    "prompt_helpers",
    "run_check",
    "shared_pool",
]
