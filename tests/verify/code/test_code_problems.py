"""`code.tests` on problems: checkers, fail-fast, a data set's own limits, judges, the build cache."""

from __future__ import annotations

import dataclasses
import os

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import ErrorKind, Sample, Status
from rewardlab.verify.code import CodeTests
from rewardlab.verify.code.compile import BuildCache, build_key, compile_program
from rewardlab.verify.code.languages import LANGUAGES

# testlib's convention without testlib.h: checker <input> <output> <answer>; 0 ok, 1 wrong
# answer, 2 presentation error, 3 checker failure, 7 points (message starts with the score).
TWO_SUMMANDS_CHECKER = r"""
#include <fstream>
#include <iostream>
int main(int argc, char **argv) {
    std::ifstream inf(argv[1]), ouf(argv[2]), ans(argv[3]);
    long n, a, b;
    inf >> n;
    if (!(ouf >> a >> b)) { std::cerr << "expected two numbers"; return 2; }
    if (a + b == n) { std::cerr << "ok"; return 0; }
    if (a == n || b == n) { std::cerr << "points 0.5 one of them is n"; return 7; }
    std::cerr << "wrong answer " << a << "+" << b << " != " << n;
    return 1;
}
"""
FAILING_CHECKER = "#include <iostream>\nint main() { std::cerr << \"jury answer is inconsistent\"; return 3; }\n"
CASES = [{"input": "10\n", "output": "5 5\n"}, {"input": "7\n", "output": "3 4\n"}]


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0, score="pass_fraction")


def _with_checker(checker: str) -> dict[str, object]:
    return {"cases": CASES, "checker": {"source": checker, "language": "cpp"}}


@pytest.mark.parametrize(
    ("program", "verdicts", "score"),
    [
        ("n = int(input())\nprint(n - 1, 1)", ["pass", "pass"], 1.0),  # not the answer file's pair, still right
        ("n = int(input())\nprint(n, 0 if n == 10 else 5)", ["pass", "partial"], 0.75),
        ("print(1, 1)", ["wrong_answer", "wrong_answer"], 0.0),
        ("print('none')", ["wrong_answer", "wrong_answer"], 0.0),  # presentation error: not a pass
    ],
)
def test_checker_accepts_any_right_answer_and_gives_points(reward: CodeTests, program: str, verdicts: list[str], score: float) -> None:
    require_toolchain("cpp")
    result = reward.score(Sample(response=program, reference=_with_checker(TWO_SUMMANDS_CHECKER)))
    assert [t["verdict"] for t in result.info["tests"]] == verdicts, result.info["tests"]
    assert result.score == pytest.approx(score)


def test_a_failing_checker_is_an_error_not_a_zero(reward: CodeTests) -> None:
    require_toolchain("cpp")
    result = reward.score(Sample(response="print(5, 5)", reference=_with_checker(FAILING_CHECKER)))
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.kind is ErrorKind.CRASH and "checker" in result.error.message


def test_a_checker_that_does_not_build_is_invalid_input(reward: CodeTests) -> None:
    require_toolchain("cpp")
    result = reward.score(Sample(response="print(5, 5)", reference=_with_checker("int main() { return }")))
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.kind is ErrorKind.INVALID_INPUT and "does not build" in result.error.message


def test_fail_fast_stops_at_the_first_failure() -> None:
    fast = CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0, score="pass_fraction", fail_fast=True)
    cases = [{"input": str(i), "output": str(i)} for i in (1, 2, 3, 4)]
    result = fast.score(Sample(response="n = int(input())\nprint(n if n < 2 else -n)", reference={"cases": cases}))
    assert [t["verdict"] for t in result.info["tests"]] == ["pass", "wrong_answer", "not_run", "not_run"]
    assert result.score == 0.25 and result.info["total"] == 4


def test_the_data_sets_time_limit_is_the_limit() -> None:
    reward = CodeTests(workers=1, cpu_seconds=20.0, wall_seconds=20.0)
    row = {"public_tests": {"input": ["1\n"], "output": ["1\n"]}, "time_limit": {"seconds": 1, "nanos": 0}, "memory_limit_bytes": 64 << 20}
    result = reward.score(Sample(response="while True:\n    pass", reference=row))
    assert [t["verdict"] for t in result.info["tests"]] == ["cpu_timeout"]
    assert result.info["limits"] == {"cpu_seconds": 1.0, "memory_mb": 64}
    assert result.info["format"] == "code_contests"


def test_hackerearth_time_scale_multiplies_the_limit_per_language() -> None:
    row = {"public_tests": {"input": ["1\n"], "output": ["1\n"]}, "time_limit": {"seconds": 2, "nanos": 0}}
    scaled = CodeTests(workers=1, time_scale="hackerearth", wall_seconds=30.0)
    result = scaled.score(Sample(response="print(input())", reference=row))
    assert result.score == 1.0 and result.info["limits"]["cpu_seconds"] == 10.0  # Python: 5x
    own = CodeTests(workers=1, use_reference_limits=False, cpu_seconds=3.0, wall_seconds=30.0)
    assert own.score(Sample(response="print(input())", reference=row)).info["limits"]["cpu_seconds"] == 3.0


@pytest.mark.parametrize(
    ("judge", "output", "score"),
    [("float", "0.3333334\n", 1.0), ("lines", "0.3333334\n", 0.0), ("token_set", "0.333333 x\n", 0.0), ("tokens", "0.333333", 1.0)],
)
def test_judge_parameter(judge: str, output: str, score: float) -> None:
    reward = CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0, judge=judge)  # type: ignore[arg-type]
    result = reward.score(Sample(response=f"print({output!r}, end='')", reference={"cases": [{"input": "", "output": "0.333333"}]}))
    assert result.score == score, result.info["tests"]


def test_each_source_is_compiled_once(tmp_path: object) -> None:
    require_toolchain("c")
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0, compile_cache=str(tmp_path))
    program = '```c\n#include <stdio.h>\nint main(void) { puts("once"); return 0; }\n```'
    first, second = (reward.score(Sample(response=program, reference={"cases": [{"input": "", "output": "once"}]})) for _ in range(2))
    assert first.score == second.score == 1.0
    assert (first.info["compile"]["cached"], second.info["compile"]["cached"]) == (False, True)
    # a fresh process (a new in-memory cache) finds the build in the directory
    lang = LANGUAGES["c"]
    source = '#include <stdio.h>\nint main(void) { puts("once"); return 0; }\n'
    again = compile_program(reward.pool, lang, source, memory_mb=1024, cache=BuildCache(cache_dir=str(tmp_path)))
    assert again.cached and again.ok and again.artifacts.keys() == {"main"}
    assert build_key(lang, source, 1024) != build_key(lang, source + " ", 1024)


def test_language_fence_is_picked_from_a_mixed_response() -> None:
    require_toolchain("cpp")
    reward = CodeTests(workers=1, language="cpp", cpu_seconds=1.0, wall_seconds=6.0)
    response = "Idea:\n```python\nprint(2)\n```\nSolution:\n```cpp\n#include <cstdio>\nint main() { std::puts(\"3\"); }\n```\n"
    result = reward.score(Sample(response=response, reference={"cases": [{"input": "", "output": "3"}]}))
    assert result.score == 1.0 and result.info["extracted_from"] == "block 1 of 1"


def test_missing_toolchain_is_a_config_error_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from rewardlab.verify.code import languages

    monkeypatch.setattr(languages, "toolchain_path", lambda program: None)
    with pytest.raises(ValueError, match=r"install golang-1\.23-go"):
        CodeTests(language="go")


def test_rlimits_fallback_builds_and_runs_in_the_jobs_own_directory() -> None:
    """Without bubblewrap there is no private /tmp: commands are relative to the job's own
    working directory, so nothing is written to the host's /tmp."""
    require_toolchain("c")
    before = set(os.listdir("/tmp"))
    reward = CodeTests(workers=1, language="c", isolation="rlimits", cpu_seconds=1.0, wall_seconds=6.0)
    pass_ = reward.score(Sample(response='```c\n#include <stdio.h>\nint main(void) { puts("8"); return 0; }\n```',
                               reference={"cases": [{"input": "", "output": "8"}]}))  # fmt: skip
    assert pass_.score == 1.0 and pass_.info["isolation"] == "rlimits-only"
    assert not {"out", "main", "main.c"} & (set(os.listdir("/tmp")) - before)


HEADER_CHECKER = '#include "verdicts.h"\n#include <fstream>\nint main(int c, char **v) { std::ifstream o(v[2]); long x; o >> x; return x == 42 ? OK : WRONG; }\n'
VERDICTS_H = "#define OK 0\n#define WRONG 1\n"


def test_checker_headers_from_the_reference_or_from_a_host_file(tmp_path: object) -> None:
    """A checker that includes a header (testlib.h in practice) gets it next to its source:
    from the reference's checker `files`, or from `checker_headers` (a path on the host)."""
    require_toolchain("cpp")
    cases = [{"input": "", "output": "42"}]
    in_reference = {"cases": cases, "checker": {"source": HEADER_CHECKER, "files": {"verdicts.h": VERDICTS_H}}}
    reward = CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0)
    assert reward.score(Sample(response="print(42)", reference=in_reference)).score == 1.0
    assert reward.score(Sample(response="print(41)", reference=in_reference)).score == 0.0
    header = os.path.join(str(tmp_path), "verdicts.h")
    with open(header, "w") as f:
        f.write(VERDICTS_H)
    from_host = CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0, checker_headers={"verdicts.h": header})
    assert from_host.score(Sample(response="print(42)", reference={"cases": cases, "checker": HEADER_CHECKER})).score == 1.0
    with pytest.raises(ValueError, match="cannot read"):
        CodeTests(checker_headers={"testlib.h": os.path.join(str(tmp_path), "absent.h")})


def test_a_build_that_cannot_be_read_back_is_a_sandbox_error_not_a_zero(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile job whose artifacts land in a directory (the shape packaged Java had before it
    was built into a jar) sends back an archive the host refuses: our side failed, not the
    program, so the reward is an error result and the failure is not cached."""
    require_toolchain("c")
    nested = dataclasses.replace(LANGUAGES["c"], compile="mkdir -p out/pkg && gcc -O2 -o out/pkg/main {src}")
    source = '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n'
    cache = BuildCache(cache_dir=str(tmp_path))
    reward = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0, compile_cache=str(tmp_path))
    build = compile_program(reward.pool, nested, source, memory_mb=1024, cache=cache)
    assert build.status == "unreadable" and "unexpected entry" in build.message
    assert not compile_program(reward.pool, nested, source, memory_mb=1024, cache=cache).cached
    monkeypatch.setitem(LANGUAGES, "c", nested)
    result = CodeTests(workers=1, language="c", cpu_seconds=1.0, wall_seconds=6.0).score(
        Sample(response=f"```c\n{source}```", reference={"cases": [{"input": "", "output": "hi"}]})
    )
    assert result.status is Status.ERROR and result.error is not None and result.error.kind is ErrorKind.SANDBOX
