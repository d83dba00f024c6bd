"""Code rewards: run the program in a response against tests inside `rewardlab.sandbox`.

    >>> from rewardlab.core import Sample
    >>> from rewardlab.verify.code import CodeTests
    >>> reward = CodeTests(workers=1)
    >>> sample = Sample(response="```python\\nprint(int(input()) * 2)\\n```",
    ...                 reference={"cases": [{"input": "21", "output": "42"}]})
    >>> reward.score(sample).score
    1.0

Languages (`languages.py`), the compile-once build cache (`compile.py`), output judges and
checkers (`judges.py`, `stdio.py`), the data sets' own graders (`official.py`) and data-set
test formats (`formats.py`): docs/code.md.
"""

from rewardlab.verify.code.compile import Build, BuildCache
from rewardlab.verify.code.extract import Extracted, extract_code
from rewardlab.verify.code.formats import Problem, read_reference
from rewardlab.verify.code.harness import (
    CheckReport,
    PromptHelpers,
    TestVerdict,
    prompt_helpers,
    run_check,
)
from rewardlab.verify.code.judges import (
    Exact,
    FloatTokens,
    Judgement,
    Lines,
    Tokens,
    TokenSet,
    checker_judgement,
)
from rewardlab.verify.code.languages import LANGUAGES, Language
from rewardlab.verify.code.official import (
    AppsCompare,
    CodeContestsMatch,
    LiveCodeBenchLines,
    TacoCompare,
)
from rewardlab.verify.code.reward import CodeTests, output_matches, shared_pool

__all__ = [
    "LANGUAGES",
    "AppsCompare",
    "Build",
    "BuildCache",
    "CheckReport",
    "CodeContestsMatch",
    "CodeTests",
    "Exact",
    "Extracted",
    "FloatTokens",
    "Judgement",
    "Language",
    "Lines",
    "LiveCodeBenchLines",
    "Problem",
    "PromptHelpers",
    "TacoCompare",
    "TestVerdict",
    "TokenSet",
    "Tokens",
    "checker_judgement",
    "extract_code",
    "output_matches",
    "prompt_helpers",
    "read_reference",
    "run_check",
    "shared_pool",
]
