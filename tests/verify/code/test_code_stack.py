"""Stack as the judges give it: deep recursion that needs more than the host's 8 MiB stack.

A recursive DFS over a path of 10^6 nodes (C++), and a recursion 200,000 calls deep (Java), are
accepted on Codeforces and Kattis, where the stack of C and C++ is bounded by the memory limit
only and Java runs with `-Xss64m`; under an 8 MiB stack (C++) or the JVM's default 1 MiB thread
stack (Java) both die.
"""

from __future__ import annotations

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import Sample, Status
from rewardlab.verify.code import CodeTests

DEPTH_CPP = 1_000_000
DEPTH_JAVA = 200_000

DFS_CPP = r"""
#include <cstdio>
#include <vector>
#include <algorithm>
std::vector<std::vector<int>> adj;
int depth(int u, int parent) {
    int best = 0;
    for (int v : adj[u]) if (v != parent) best = std::max(best, 1 + depth(v, u));
    return best;
}
int main() {
    int n;
    if (std::scanf("%d", &n) != 1) return 2;
    adj.resize(n);
    for (int i = 0; i + 1 < n; i++) { adj[i].push_back(i + 1); adj[i + 1].push_back(i); }
    std::printf("%d\n", depth(0, -1));
}
"""

DEEP_JAVA = """
import java.util.Scanner;
public class Main {
    static long down(int n, long acc) { return n == 0 ? acc : down(n - 1, acc + n) + 0; }
    public static void main(String[] args) {
        int n = new Scanner(System.in).nextInt();
        System.out.println(down(n, 0));
    }
}
"""

PYTHON_CONVENTION = """
import sys
sys.setrecursionlimit(10 ** 6)
def down(n):
    return 0 if n == 0 else 1 + down(n - 1)
print(down(int(input())))
"""


def _score(language: str, source: str, cases: list[dict[str, str]], cpu: float) -> dict[str, object]:
    reward = CodeTests(language=language, workers=1, cpu_seconds=cpu, wall_seconds=20.0, memory_mb=256)
    result = reward.score(Sample(response=f"```{language}\n{source}\n```", reference={"cases": cases}))
    assert result.status is Status.OK, result.error
    return {"score": result.score, "tests": result.info["tests"]}


@pytest.mark.slow
def test_cpp_recursive_dfs_over_a_long_path_gets_the_memory_limit_as_stack() -> None:
    require_toolchain("cpp")
    got = _score("cpp", DFS_CPP, [{"input": f"{DEPTH_CPP}\n", "output": f"{DEPTH_CPP - 1}\n"}], 2.0)
    assert got["score"] == 1.0, got


@pytest.mark.slow
def test_java_deep_recursion_runs_with_xss() -> None:
    require_toolchain("java")
    expected = DEPTH_JAVA * (DEPTH_JAVA + 1) // 2
    got = _score("java", DEEP_JAVA, [{"input": f"{DEPTH_JAVA}\n", "output": f"{expected}\n"}], 3.0)
    assert got["score"] == 1.0, got


def test_python_recursion_limit_is_the_programs_own() -> None:
    """As on Codeforces and AtCoder, a Python program raises its own recursion limit; the
    stack under it is bounded by the memory budget, not by the host's 8 MiB."""
    require_toolchain("python")
    got = _score("python", PYTHON_CONVENTION, [{"input": "100000\n", "output": "100000\n"}], 5.0)
    assert got["score"] == 1.0, got
