"""Worst-case inputs for the maths verifier's in-process steps (everything before the worker).

Each generator builds an adversarial response of about `size` characters: the shapes that made
backtracking regexes or per-box rescans blow up (unclosed `\\boxed{` repeated, `<answer>`
without a closing tag, prose that is not a unit, long runs of spaces, `$` walls, deep
brackets, huge sets), plus random prose around a real answer. The timed call is what
`math.answer` does in the caller's process: extract, resolve hedges, check, with
`allow_symbolic=False` so nothing is sent to the sympy worker (whose time is bounded by its
kill timeout, not by this code). Math-Verify is timed on the same inputs for reference; it runs
everything in-process under its own `signal.alarm` timeout.

For each input the script prints the seconds at two sizes and their ratio: linear time gives a
ratio close to the size ratio (4), quadratic close to 16.

Run:  .venv/bin/python bench/bench_math_worst.py [--size 1000000] [--peer]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

_WORDS = ["the", "we", "so", "let", "answer", "is", "final", "thus", "therefore", "value", "of", "a", "an", "and", "sum", "then", "number"]


def _prose(rng: random.Random, size: int) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(_WORDS)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)


def _fill(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


# name -> (response of about `size` characters, reference)
WORST: dict[str, Callable[[int], tuple[str, str]]] = {
    "unclosed boxes": lambda n: (_fill("\\boxed{", n), "1"),
    "unclosed boxes then a box": lambda n: (_fill("\\boxed{1", n) + "\\boxed{2}", "2"),
    "nested boxes": lambda n: (_fill("\\boxed{", n // 2) + "7" + _fill("}", n // 14), "7"),
    "unclosed answer tags": lambda n: (_fill("<answer>", n), "1"),
    "answer tags without closing, then one": lambda n: (_fill("<answer>1 ", n) + "</answer>", "1"),
    "final-answer markers": lambda n: (_fill("the final answer is ", n), "1"),
    "answer lines": lambda n: (_fill("Answer: " + " " * 30 + "\n", n), "1"),
    "spaces after a marker": lambda n: ("The answer is" + " " * n + "5", "5"),
    "prose after a number (unit scan)": lambda n: ("5 " + _fill("abcdefgh ", n) + "!", "5"),
    "letters after a number": lambda n: ("\\boxed{5 " + "a" * n + "!}", "5"),
    "unit groups": lambda n: ("\\boxed{5" + _fill("\\text{ m}", n) + "}", "5"),
    "dollar walls": lambda n: ("\\boxed{" + "$" * n + "1" + "$" * n + "}", "1"),
    "latex openers": lambda n: (_fill("\\(", n), "1"),
    "display openers": lambda n: (_fill("\\[", n), "1"),
    "digits and commas": lambda n: (_fill("1,", n), "1"),
    "deep brackets": lambda n: ("\\boxed{" + "(" * (n // 2) + "1,2" + ")" * (n // 2) + "}", "(1,2)"),
    "big reversed set": lambda n: (
        "\\boxed{\\{" + ",".join(str(i) for i in range(n // 7, 0, -1)) + "\\}}",
        "\\{" + ",".join(str(i) for i in range(1, n // 7 + 1)) + "\\}",
    ),
    "nested text commands": lambda n: ("\\boxed{" + _fill("\\text{", n // 2) + "a" + _fill("}", n // 12) + "}", "a"),
    "spaces between letters": lambda n: ("\\boxed{a" + " " * n + "b}", "a b"),
    "random prose around an answer": lambda n: (_prose(random.Random(n), n) + " so the answer is $\\boxed{42}$.", "42"),
}


def rewardlab_call() -> Callable[[str, str], object]:
    from rewardlab.verify.math import CheckOptions, Hedge, check, extract_answer, final_answer

    opts = CheckOptions(allow_symbolic=False)

    def call(response: str, reference: str) -> object:
        answer = final_answer(extract_answer(response), reference, opts)
        if answer is None or isinstance(answer, Hedge):
            return answer
        return check(reference, answer, opts)

    return call


def math_verify_call() -> Callable[[str, str], object]:
    from math_verify import parse, verify

    return lambda response, reference: verify(parse("$" + reference + "$"), parse(response))


def timed(call: Callable[[str, str], object], response: str, reference: str) -> float:
    started = time.perf_counter()
    call(response, reference)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000, help="characters of the larger input")
    parser.add_argument("--peer", action="store_true", help="also time Math-Verify (at size/16: it is slow on these)")
    args = parser.parse_args()
    ours = rewardlab_call()
    theirs = math_verify_call() if args.peer else None
    big, small = args.size, args.size // 4
    print(f"{'input':40} {'s @' + str(small):>12} {'s @' + str(big):>12} {'ratio':>6}" + ("  math-verify s @" + str(big // 16) if theirs else ""))
    worst = 0.0
    for name, make in WORST.items():
        t_small = timed(ours, *make(small))
        t_big = timed(ours, *make(big))
        worst = max(worst, t_big)
        line = f"{name:40} {t_small:12.4f} {t_big:12.4f} {t_big / max(t_small, 1e-6):6.1f}"
        if theirs is not None:
            line += f"  {timed(theirs, *make(big // 16)):10.3f}"
        print(line)
    print(f"slowest rewardlab call at {big} characters: {worst:.3f} s")


if __name__ == "__main__":
    main()
