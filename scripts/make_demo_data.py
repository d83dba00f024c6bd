"""Regenerate src/rewardlab/demo/rlvr_sample.jsonl (deterministic; run from the repo root).

Sixteen arithmetic prompts with four responses each (right, wrong, right-but-unformatted,
right-but-padded), eight answers that only a maths verifier recognises as right (LaTeX fractions,
thousands separators, decimals), and four damaged rows of the kinds real data has.
"""

import json
import random
from pathlib import Path

OUT = Path("src/rewardlab/demo/rlvr_sample.jsonl")


def arithmetic_rows(rng: random.Random) -> list[dict]:
    rows = []
    for i in range(16):
        a, b = rng.randint(12, 99), rng.randint(3, 29)
        op = rng.choice(["+", "*", "-"])
        ans = {"+": a + b, "*": a * b, "-": a - b}[op]
        word = {"+": "plus", "*": "times", "-": "minus"}[op]
        prompt = f"What is {a} {word} {b}? Put the final answer in <answer></answer>."
        wrong = ans + rng.choice([-10, -1, 1, 2, 10])
        think = f"We need {a} {op} {b}. Computing step by step gives {ans}."
        variants = [
            f"<think>{think}</think>\n<answer>{ans}</answer>",
            f"<think>{a} {op} {b} is {wrong}, I think.</think>\n<answer>{wrong}</answer>",
            f"The answer is {ans}.",  # right answer, wrong format: the gate stops it
            f"<think>{think} " + "Let me double-check. " * 40 + f"</think>\n<answer> {ans} </answer>",  # padded
        ]
        for k, response in enumerate(variants):
            rows.append({"id": f"q{i:02d}-{k}", "group": f"q{i:02d}", "prompt": prompt, "response": response, "reference": str(ans)})
    return rows


def latex_rows() -> list[dict]:
    # (prompt, reference, answer as a model writes it): equal for a maths verifier, not for `==`
    cases = [
        ("What fraction of a day is 12 hours?", "\\frac{1}{2}", "0.5"),
        ("Halve 3.", "1.5", "\\frac{3}{2}"),
        ("How many grams are in 10 kilograms?", "10000", "10{,}000"),
        ("What is 2 to the power 10?", "1024", "1,024"),
        ("Simplify 6/8.", "\\frac{3}{4}", "\\dfrac{3}{4}"),
        ("What is sqrt(8) in simplest radical form?", "2\\sqrt{2}", "2 \\sqrt 2"),
        ("Solve x + 3 = 5.", "2", "x = 2"),
        ("What is 1/3 as a repeating decimal?", "\\frac{1}{3}", "0.\\overline{3}"),
    ]
    return [
        {"id": f"latex-{i}", "group": f"latex-{i}", "prompt": p, "response": f"<think>Work it out.</think>\n<answer>{a}</answer>", "reference": ref}
        for i, (p, ref, a) in enumerate(cases)
    ]


def main() -> None:
    rng = random.Random(7)
    lines = [json.dumps(r) for r in arithmetic_rows(rng) + latex_rows()]
    # real-world damage the runner must survive; each still gets an output row:
    lines.insert(5, '{"id": "broken-1", "prompt": "What is 2 plus 2?", "response": "<answer>4</answer>"')  # truncated JSON
    lines.insert(20, json.dumps({"id": "no-response", "prompt": "What is 3 plus 3?", "reference": "6"}))
    lines.insert(33, json.dumps({"id": "no-reference", "group": "qx", "prompt": "Name a prime.", "response": "<think>2 is prime</think><answer>2</answer>"}))
    chat = {
        "id": "chat",
        "group": "qy",
        "prompt": [{"role": "user", "content": "What is 5 times 5?"}],
        "response": [{"role": "assistant", "content": "<think>5*5=25</think><answer>25</answer>"}],
        "reference": "25",
    }
    lines.insert(40, json.dumps(chat))
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} rows to {OUT}")


if __name__ == "__main__":
    main()
