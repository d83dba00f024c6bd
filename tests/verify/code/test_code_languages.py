"""Every language: one program that, by its input, answers right, answers wrong, loops,
runs out of memory or fails, so one build gives five verdicts; and one that does not build.

Input "<mode> 2 3", expected output 5: mode 0 right, 1 wrong, 2 loops, 3 exhausts memory, 4
exits with an error.
"""

from __future__ import annotations

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import Sample, Status
from rewardlab.verify.code import CodeTests

MODES = {"cases": [{"input": f"{mode} 2 3\n", "output": "5\n"} for mode in range(5)]}
EXPECTED = ["pass", "wrong_answer", "cpu_timeout", "memory", "runtime_error"]

SOLVED: dict[str, str] = {
    "python": """
import sys
m, a, b = map(int, sys.stdin.read().split())
if m == 0: print(a + b)
elif m == 1: print(a + b + 1)
elif m == 2:
    while True: pass
elif m == 3:
    keep = []
    while True: keep.append(bytearray(1 << 20))
else: sys.exit(3)
""",
    "c": r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    int m; long a, b;
    if (scanf("%d %ld %ld", &m, &a, &b) != 3) return 2;
    if (m == 0) printf("%ld\n", a + b);
    else if (m == 1) printf("%ld\n", a + b + 1);
    else if (m == 2) { volatile unsigned long x = 0; for (;;) x++; }
    else if (m == 3) { for (;;) { char *p = malloc(1 << 20); memset(p, 1, 1 << 20); } }
    else return 3;
    return 0;
}
""",
    "cpp": r"""
#include <iostream>
#include <vector>
int main() {
    int m; long a, b;
    std::cin >> m >> a >> b;
    if (m == 0) std::cout << a + b << "\n";
    else if (m == 1) std::cout << a + b + 1 << "\n";
    else if (m == 2) { volatile unsigned long x = 0; for (;;) x++; }
    else if (m == 3) { std::vector<std::vector<char>> keep; for (;;) keep.emplace_back(1 << 20, 1); }
    else return 3;
}
""",
    "java": """
import java.util.*;
public class Solution {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        int m = in.nextInt(); long a = in.nextLong(), b = in.nextLong();
        if (m == 0) System.out.println(a + b);
        else if (m == 1) System.out.println(a + b + 1);
        else if (m == 2) { long x = 0; while (x >= 0) x = (x + 1) % 1000; }
        else if (m == 3) { List<long[]> keep = new ArrayList<>(); while (true) keep.add(new long[1 << 17]); }
        else throw new IllegalStateException("mode " + m);
    }
}
""",
    "javascript": """
const [m, a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);
if (m === 0) console.log(a + b);
else if (m === 1) console.log(a + b + 1);
else if (m === 2) { for (;;) {} }
else if (m === 3) { const keep = []; for (;;) keep.push(new Array(1 << 20).fill(m)); }
else throw new Error("mode " + m);
""",
    "typescript": """
import * as fs from "fs";
const [m, a, b]: number[] = fs.readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);
if (m === 0) console.log(a + b);
else if (m === 1) console.log(a + b + 1);
else if (m === 2) { for (;;) {} }
else if (m === 3) { const keep: number[][] = []; for (;;) keep.push(new Array<number>(1 << 20).fill(m)); }
else throw new Error("mode " + m);
""",
    "go": """
package main

import "fmt"

var counter int

func main() {
	var m int
	var a, b int64
	fmt.Scan(&m, &a, &b)
	switch m {
	case 0:
		fmt.Println(a + b)
	case 1:
		fmt.Println(a + b + 1)
	case 2:
		for {
			counter++
		}
	case 3:
		keep := [][]byte{}
		for {
			block := make([]byte, 1<<20)
			for i := range block {
				block[i] = 1
			}
			keep = append(keep, block)
		}
	default:
		panic(fmt.Sprintf("mode %d", m))
	}
}
""",
    "rust": """
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    match v[0] {
        0 => println!("{}", v[1] + v[2]),
        1 => println!("{}", v[1] + v[2] + 1),
        2 => { let mut x: u64 = 1; loop { x = x.wrapping_mul(3); if x == 0 { println!("{}", x); } } }
        3 => { let mut keep: Vec<Vec<u8>> = Vec::new(); loop { keep.push(vec![1u8; 1 << 20]); } }
        _ => std::process::exit(3),
    }
}
""",
}

BROKEN: dict[str, str] = {
    "c": "int main(void) { return undeclared; }",
    "cpp": "#include <vector>\nint main() { std::vector<int> v = 3; }",
    "java": "public class Main { public static void main(String[] a) { int x = \"text\"; } }",
    "javascript": "console.log((1 + );",
    "typescript": 'const n: number = "not a number";\nconsole.log(n);',
    "go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(undefinedName) }',
    "rust": 'fn main() { let x: i32 = "text"; println!("{}", x); }',
}


def _reward(language: str) -> CodeTests:
    # The JVM spends ~0.3 s of CPU starting; 2 s keeps it clear of the limit on a slow machine.
    cpu = 2.0 if language == "java" else 1.0
    return CodeTests(language=language, workers=1, cpu_seconds=cpu, wall_seconds=10.0, memory_mb=64, score="pass_fraction")


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(SOLVED))
def test_each_verdict_from_one_build(language: str) -> None:
    require_toolchain(language)
    result = _reward(language).score(Sample(response=f"```{language}\n{SOLVED[language]}\n```", reference=MODES))
    assert result.status is Status.OK, result.error
    assert [t["verdict"] for t in result.info["tests"]] == EXPECTED, result.info["tests"]
    assert result.score == pytest.approx(0.2)
    assert result.info["isolation"] == "bubblewrap"
    if language != "python":
        assert result.info["compile"]["status"] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(BROKEN))
def test_compile_error_scores_zero_with_the_compiler_message(language: str) -> None:
    require_toolchain(language)
    result = _reward(language).score(Sample(response=f"```{language}\n{BROKEN[language]}\n```", reference=MODES))
    assert result.status is Status.OK and result.score == 0.0
    assert [t["verdict"] for t in result.info["tests"]] == ["compile_error"] * 5
    assert result.info["compile"]["status"] == "compile_error"
    assert result.info["compile"]["message"].strip(), "the compiler's message is in info"
