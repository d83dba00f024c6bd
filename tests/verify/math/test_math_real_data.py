"""The verifier over the 800 real Qwen2.5-Math responses, against the grader's labels and
against Math-Verify in the same run. Every disagreement with a label is listed with its reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab.verify.math import Outcome, check, extract_answer

DATA = "qwen25-math-cot-100.jsonl"
SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"  # ../shared/data

# (row idx, response index) -> (our outcome, why we differ from the label). Found by running the
# verifier over the file; keep in sync when the verifier changes.
DISAGREEMENTS: dict[tuple[int, int], tuple[Outcome, str]] = {
    **{
        (3, k): (
            Outcome.UNDECIDED,
            "gold '4:30p..' is a corrupted '\\text{4:30 p.m.}' (see the row's solution); it does "
            "not parse, so the verdict is undecided -> an error result, not the label's silent "
            "False. Every response answers 4:30 p.m., which is right: the labels are wrong.",
        )
        for k in range(8)
    },
    (72, 7): (
        Outcome.EQUIVALENT,
        "gold '10{,}000' is 10000 written with a LaTeX thousands separator; the response's "
        "\\boxed{10000} is right and the label False is a known grader false negative (SOURCES.md).",
    ),
}
# Labels that are wrong (the correct value), used for the corrected-label comparison.
CORRECTED = {**{(3, k): True for k in range(8)}, (72, 7): True}


def _pairs(path: Path) -> list[tuple[int, int, str, str, bool]]:
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        for k, (response, label) in enumerate(zip(row["code"], row["score"], strict=True)):
            out.append((row["idx"], k, row["gt"], response, bool(label)))
    return out


@pytest.fixture(scope="module")
def pairs(shared_data_dir: Path) -> list[tuple[int, int, str, str, bool]]:
    return _pairs(shared_data_dir / DATA)


@pytest.fixture(scope="module")
def shared_data_dir() -> Path:
    if not (SHARED_DATA / DATA).is_file():
        pytest.skip(f"{SHARED_DATA / DATA} is absent (real-data regression set)")
    return SHARED_DATA


def _ours(pairs: list[tuple[int, int, str, str, bool]], **options: object) -> dict[tuple[int, int], Outcome]:
    verdicts = {}
    for idx, k, gt, response, _ in pairs:
        answer = extract_answer(response).answer
        verdicts[idx, k] = Outcome.NOT_EQUIVALENT if answer is None else check(gt, answer, timeout=30, **options).outcome
    return verdicts


@pytest.mark.slow
def test_text_fallback_for_unparsed_references_matches_the_labels_count(pairs) -> None:
    # unparsed_reference="text" turns the broken '4:30p..' gold into a text comparison
    # (not equivalent), like graders that ignore the problem: 799 of 800 agree with the labels,
    # Math-Verify's count; the one left is the wrong '10{,}000' label.
    ours = _ours(pairs, unparsed_reference="text")
    agree = sum((ours[idx, k] is Outcome.EQUIVALENT) == label for idx, k, _, _, label in pairs)
    assert agree == 799
    assert ours[72, 7] is Outcome.EQUIVALENT


@pytest.mark.slow
def test_all_800_agree_with_labels_except_the_listed_ones(pairs) -> None:
    assert len(pairs) == 800
    ours = _ours(pairs)
    found = {}
    for idx, k, _, _, label in pairs:
        expected = Outcome.EQUIVALENT if label else Outcome.NOT_EQUIVALENT
        if ours[idx, k] is not expected:
            found[idx, k] = ours[idx, k]
    assert found == {key: outcome for key, (outcome, _) in DISAGREEMENTS.items()}


@pytest.mark.slow
def test_at_least_as_good_as_math_verify(pairs) -> None:
    math_verify = pytest.importorskip("math_verify")
    ours = _ours(pairs)
    ours_raw = mv_raw = ours_fixed = mv_fixed = 0
    for idx, k, gt, response, label in pairs:
        mv = bool(math_verify.verify(math_verify.parse("$" + gt + "$"), math_verify.parse(response)))
        ok = ours[idx, k] is Outcome.EQUIVALENT
        fixed = CORRECTED.get((idx, k), label)
        decided = ours[idx, k] is not Outcome.UNDECIDED
        ours_raw += decided and ok == label
        mv_raw += mv == label
        ours_fixed += decided and ok == fixed
        mv_fixed += mv == fixed
    # Raw labels: Math-Verify agrees on 799, including 8 silent "wrong" verdicts on a broken
    # gold; we agree on 791 and return 8 errors for that gold instead (listed above). Counting
    # a documented wrong label as ours, we are at least as good:
    assert ours_raw + sum(1 for key in DISAGREEMENTS if key in CORRECTED) >= mv_raw
    # With the 9 wrong labels corrected both agree on 792; Math-Verify's 8 misses on the broken
    # gold are silent zeros, ours are 8 error results that name the broken reference.
    assert ours_fixed >= mv_fixed, (ours_fixed, mv_fixed)
    assert (ours_raw, mv_raw, ours_fixed, mv_fixed) == (791, 799, 792, 792)


@pytest.mark.slow
def test_rewardlab_score_cli_on_the_real_file(pairs, tmp_path: Path) -> None:
    from rewardlab.cli.main import main

    # The file holds 8 responses per row; `rewardlab score` scores one response per row, so
    # the test flattens it into a temporary file (never into the repository).
    flat = tmp_path / "flat.jsonl"
    flat.write_text("\n".join(json.dumps({"response": r, "reference": gt, "label": lab}) for _, _, gt, r, lab in pairs))
    spec = tmp_path / "math.toml"
    spec.write_text('[reward]\nname = "math"\n[[reward.components]]\nname = "answer"\nuse = "math.answer"\n')
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(spec), str(flat), "-o", str(out), "--workers", "2", "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 800
    errors = [r for r in rows if r.get("reward_status") == "error" or r.get("status") == "error"]
    assert len(errors) == 8  # the broken '4:30p..' gold, reported, not zeroed
    agree = sum(1 for r in rows if r.get("reward") is not None and (r["reward"] == 1.0) == r["label"])
    assert agree == 791
