"""The toolchains of code.tests are the pinned, documented ones, and the language features of
AtCoder's 2023 judge (and the newer ones these toolchains bring) compile and run in the sandbox.

The pins live in three places that must agree: `Language.version` (what the reward expects),
the `pins` of the Makefile's system-deps (what every machine installs) and the table of
docs/code.md "Languages" (what users read). An installed toolchain at another version fails
here; a missing one is skipped, or fails under CI=true, where make system-deps must have run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import Sample, Status
from rewardlab.errors import ConfigError
from rewardlab.verify.code import CodeTests
from rewardlab.verify.code.languages import LANGUAGES, installed_version, version_matches

ROOT = Path(__file__).resolve().parents[3]
#: The Debian package of each language's toolchain, as system-deps pins it (TypeScript comes from
#: npm, pinned by its own line of the target; python3 is the system's interpreter, not installed).
PACKAGES = {"c": "gcc", "cpp": "g++", "java": "openjdk-17-jdk-headless", "javascript": "nodejs",
            "go": "golang-1.23-go", "rust": "rustc-web"}  # fmt: skip


def _makefile_pins() -> dict[str, str]:
    target = ROOT.joinpath("Makefile").read_text().split("\nsystem-deps:", 1)[1]
    found = re.search(r'pins="([^"]+)"', target)
    assert found, "the system-deps target lists its pins as pins=\"package:version ...\""
    return dict(pin.split(":", 1) for pin in found.group(1).split())


def _docs_rows() -> dict[str, str]:
    text = ROOT.joinpath("docs/code.md").read_text()
    section = text.split("### Languages", 1)[1].split("\n### ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.M)}


def test_makefile_installs_the_versions_the_reward_expects() -> None:
    pins = _makefile_pins()
    for name, package in PACKAGES.items():
        assert pins.get(package) == LANGUAGES[name].version, (name, package, pins)
    typescript = ROOT.joinpath("Makefile").read_text().split("\nsystem-deps:", 1)[1]
    assert f"typescript@{LANGUAGES['typescript'].version}." in typescript


def test_docs_name_each_languages_pinned_version_and_flags() -> None:
    rows = _docs_rows()
    assert set(rows) == set(LANGUAGES), rows.keys()
    for name, lang in LANGUAGES.items():
        row = rows[name]
        assert re.search(rf"\b{re.escape(lang.version)}\b", row), (name, lang.version, row)
        if name in PACKAGES:
            assert f"`{PACKAGES[name]}`" in row, (name, row)
        if lang.standard:
            assert f"-std={lang.standard}" in row, (name, row)


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_installed_toolchain_is_the_pinned_version(name: str) -> None:
    require_toolchain(name)
    lang = LANGUAGES[name]
    found = installed_version(lang)
    assert version_matches(found, lang.version), f"{name}: {lang.version_command} reports {found}, pinned {lang.version} (make system-deps)"


def test_version_match_is_by_release_not_by_prefix() -> None:
    assert version_matches("1.23.5", "1.23") and version_matches("17", "17") and version_matches("12.2.0", "12.2")
    assert not version_matches("1.23.5", "1.2") and not version_matches("20.20.2", "18.20") and not version_matches(None, "1")


def _run(language: str, program: str, cases: dict[str, object], **params: object) -> dict[str, object]:
    require_toolchain(language)
    reward = CodeTests(language=language, workers=1, cpu_seconds=5.0, wall_seconds=60.0, memory_mb=256, **params)  # type: ignore[arg-type]
    result = reward.score(Sample(response=f"```{language}\n{program}\n```", reference=cases))
    assert result.status is Status.OK, result.error
    return dict(result.info)


CPP20 = r"""
#include <algorithm>
#include <iostream>
#include <numeric>
#include <ranges>
#include <set>
#include <vector>
int main() {
    int n; std::cin >> n;
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), 1);
    auto evens = v | std::views::filter([](int x) { return x % 2 == 0; }) | std::views::transform([](int x) { return x * x; });
    long sum = 0;
    for (int x : evens) sum += x;
    std::set<int> seen(v.begin(), v.end());
    std::ranges::sort(v, std::ranges::greater{});
    std::cout << sum << ' ' << seen.contains(n) << ' ' << seen.contains(n + 1) << ' ' << v.front() << '\n';
}
"""


def test_cpp20_ranges_and_contains_compile_by_default() -> None:
    info = _run("cpp", CPP20, {"cases": [{"input": "6", "output": "56 1 0 6"}]})
    assert info["standard"] == "gnu++20" and info["all_pass"], info


def test_cpp_standard_per_problem_and_per_reward() -> None:
    """A row's `standard` wins over the default: C++20 code fails under "c++17", and C++17 code
    that C++20 broke (`requires` as a name) passes under it and fails by default."""
    as17 = {"cases": [{"input": "6", "output": "56 1 0 6"}], "standard": "c++17"}
    info = _run("cpp", CPP20, as17)
    assert info["standard"] == "c++17" and info["compile"]["status"] == "compile_error", info  # type: ignore[index]
    old = "#include <iostream>\nint main() { int requires = 4; std::cout << requires * 2 << '\\n'; }"
    cases = {"cases": [{"input": "", "output": "8"}]}
    assert _run("cpp", old, {**cases, "standard": "gnu++17"})["all_pass"]
    assert not _run("cpp", old, cases)["all_pass"]
    assert _run("cpp", old, cases, standard="c++14")["all_pass"]  # the reward's own default


def test_a_standard_the_language_does_not_take_is_refused() -> None:
    with pytest.raises(ConfigError, match="c\\+\\+17"):
        CodeTests(language="c", standard="c++17")
    with pytest.raises(ConfigError, match="no standard option"):
        CodeTests(language="python", standard="c++17")
    require_toolchain("cpp")
    reward = CodeTests(language="cpp", workers=1)
    result = reward.score(Sample(response="```cpp\nint main() {}\n```", reference={"cases": [{"input": "", "output": ""}], "standard": "c++99"}))
    assert result.status is Status.ERROR and result.error is not None and result.error.kind == "invalid_input", result
    assert "c++99" in result.error.message


def test_rust_let_else_compiles() -> None:
    program = """
use std::io::Read;
fn parse(s: &str) -> Option<i64> {
    let Ok(n) = s.trim().parse::<i64>() else { return None; };
    Some(n)
}
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let total: i64 = s.split_whitespace().filter_map(parse).sum();
    println!("{total}");
}
"""
    assert _run("rust", program, {"cases": [{"input": "3 x 4", "output": "7"}]})["all_pass"]


def test_go_min_max_slices_and_range_over_int_compile() -> None:
    program = """
package main

import (
	"fmt"
	"slices"
)

func main() {
	var n int
	fmt.Scan(&n)
	xs := []int{}
	for i := range n {
		xs = append(xs, (i*7)%5)
	}
	slices.Sort(xs)
	fmt.Println(min(xs[0], 3), max(xs[len(xs)-1], 1), slices.Contains(xs, 4), slices.Index(xs, 2))
}
"""
    assert _run("go", program, {"cases": [{"input": "5", "output": "0 4 true 2"}]})["all_pass"]
