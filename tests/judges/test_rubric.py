"""The rubric engine: gates before quality, strict vs partial, principles, TOML, judge criteria."""

from __future__ import annotations

import pytest

import rewardlab
from rewardlab import Sample, Status
from rewardlab.judges.rubric import Rubric

GATE = {"name": "tagged", "kind": "gate", "use": "format.tags", "params": {"tags": ["answer"], "strict": False}}
CORRECT = {"name": "correct", "weight": 3.0, "use": "text.contains"}
MATHS = {"name": "maths", "weight": 1.0, "use": "math.answer"}


def sample(response, reference="Paris"):
    return Sample(prompt="Capital of France?", response=response, reference=reference)


def test_partial_credit_is_the_weighted_mean():
    correct = {**CORRECT, "params": {"reference_key": "answer"}}
    rubric = Rubric(criteria=[correct, {"name": "short", "weight": 1.0, "use": "text.contains", "params": {"reference_key": "short"}}])
    result = rubric.score(Sample(response="<answer>Paris</answer>", reference={"answer": "Paris", "short": "nope"}))
    assert result.score == pytest.approx(3 / 4)
    assert result.components["correct"].score == 1.0 and result.components["short"].score == 0.0


def test_failed_gate_scores_zero_and_skips_quality():
    rubric = Rubric(criteria=[GATE, CORRECT])
    result = rubric.score(sample("Paris, no tags"))
    assert result.status is Status.OK and result.score == 0.0 and result.info["failed_gates"] == ["tagged"]
    assert result.components["correct"].status is Status.SKIPPED and "tagged" in result.components["correct"].info["skip_reason"]


def test_passed_gate_lets_quality_count():
    result = Rubric(criteria=[GATE, CORRECT]).score(sample("<answer>Paris</answer>"))
    assert result.score == 1.0 and result.info["passed"] == ["tagged", "correct"]


def test_strict_mode_is_all_or_nothing():
    criteria = [{**CORRECT, "weight": 1.0, "params": {"reference_key": "answer"}}, {"name": "mentions_seine", "use": "text.contains", "params": {"reference_key": "river"}}]
    rubric = Rubric(criteria=criteria, mode="strict")
    half = rubric.score(Sample(response="Paris", reference={"answer": "Paris", "river": "Seine"}))
    full = rubric.score(Sample(response="Paris on the Seine", reference={"answer": "Paris", "river": "Seine"}))
    assert (half.score, full.score) == (0.0, 1.0)
    assert Rubric(criteria=criteria).score(Sample(response="Paris", reference={"answer": "Paris", "river": "Seine"})).score == 0.5


def test_principle_counts_as_pass_or_fail_not_its_grade(server):
    judge = {"base_url": server.base_url, "model": "m", "backoff": 0.01}
    graded = {"name": "quality", "judge": "Is it clear?", "grade": "score_1_10"}
    as_principle = {**graded, "kind": "principle"}
    # the judge rates a NOISY text [[4]] the first time it sees it: 3/9 on [0, 1]
    assert Rubric(criteria=[graded], judge=judge).score(sample("NOISY one")).score == pytest.approx(3 / 9)
    assert Rubric(criteria=[as_principle], judge=judge).score(sample("NOISY two")).score == 0.0  # 3/9 < threshold 0.5


def test_judge_criteria_ask_one_question_each(server):
    judge = {"base_url": server.base_url, "model": "m", "backoff": 0.01}
    rubric = Rubric(criteria=[{"name": "ok", "judge": "PASSCASE: cites a source"}, {"name": "bad", "judge": "FAILCASE: is concise"}], judge=judge)
    result = rubric.score(sample("an answer"))
    assert result.score == 0.5 and result.components["ok"].score == 1.0 and result.components["bad"].score == 0.0
    asked = [b["messages"][1]["content"] for b in server.requests]
    assert any("[Criterion]\nPASSCASE: cites a source" in a and "[Response]\nan answer" in a for a in asked)


def test_no_judge_call_for_a_sample_that_fails_a_gate(server):
    judge = {"base_url": server.base_url, "model": "m", "backoff": 0.01}
    rubric = Rubric(criteria=[GATE, {"name": "ok", "judge": "PASSCASE"}], judge=judge)
    results = rubric.score_batch([sample("untagged"), sample("<answer>Paris</answer>")])
    assert [r.score for r in results] == [0.0, 1.0] and len(server.requests) == 1


def test_criterion_error_makes_the_rubric_an_error_not_zero():
    dead = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0, "timeout": 2}
    rubric = Rubric(criteria=[CORRECT, {"name": "judged", "judge": "Is it right?"}], judge=dead)
    result = rubric.score(sample("Paris"))
    assert result.status is Status.ERROR and result.error.kind == "component" and "judged" in result.error.message
    assert result.components["correct"].score == 1.0 and result.components["judged"].error.kind == "remote"


def test_rubric_from_toml_file_and_in_a_spec(tmp_path):
    path = tmp_path / "rubric.toml"
    path.write_text(
        '[rubric]\nmode = "partial"\n\n[[rubric.criteria]]\nname = "tagged"\nkind = "gate"\nuse = "format.tags"\n'
        'params = { tags = ["answer"], strict = false }\n\n[[rubric.criteria]]\nname = "correct"\nuse = "text.contains"\n'
    )
    assert Rubric.from_toml(path).score(sample("<answer>Paris</answer>")).score == 1.0
    spec = {"reward": {"name": "r", "components": [{"name": "rubric", "use": "judge.rubric", "params": {"file": str(path)}}]}}
    rows = rewardlab.score(spec, [{"response": "<answer>Paris</answer>", "reference": "Paris"}, {"response": "Paris", "reference": "Paris"}])
    assert [r.score for r in rows] == [1.0, 0.0]
    assert rows[0].components["rubric"].components["correct"].score == 1.0


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ([], "at least one"),
        ([{"use": "text.exact"}], "name"),
        ([{"name": "a", "use": "text.exact", "judge": "q"}], "exactly one"),
        ([{"name": "a", "judge": "q"}], "judge"),
        ([{"name": "a", "use": "text.exact"}, {"name": "a", "use": "text.exact"}], "unique"),
        ([{"name": "a", "use": "text.exact", "kind": "must"}], "kind"),
        ([{"name": "a", "use": "text.exact", "weight": -1}], "weight"),
        ([{"name": "g", "kind": "gate", "use": "text.exact"}], "quality or principle"),
    ],
)
def test_bad_rubrics_fail_at_construction(criteria, message):
    with pytest.raises(ValueError, match=message):
        Rubric(criteria=criteria)


def test_bad_toml_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[rubric\n")
    with pytest.raises(ValueError, match=r"broken\.toml"):
        Rubric.from_toml(path)


def test_a_rubric_file_that_is_not_utf8_names_the_file_and_the_byte(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[rubric]\nname = "caf\xe9"\n')
    with pytest.raises(ValueError, match=r"latin1\.toml: not valid UTF-8 \(byte 0xe9 at position 20\)"):
        Rubric.from_toml(path)


def test_adaptive_weights_move_to_the_criterion_that_still_separates_the_group():
    # every member is correct (no spread); only "river" separates them, so it takes all the weight
    criteria = [{**CORRECT, "params": {"reference_key": "answer"}}, {"name": "river", "use": "text.contains", "params": {"reference_key": "river"}}]
    ref = {"answer": "Paris", "river": "Seine"}
    group = [Sample(response=r, reference=ref, group="g") for r in ["Paris", "Paris on the Seine", "Paris", "Paris, Seine"]]
    static = [r.score for r in Rubric(criteria=criteria).score_batch(group)]
    adaptive = Rubric(criteria=criteria, adaptive=True).score_batch(group)
    assert static == [0.75, 1.0, 0.75, 1.0]
    assert [r.score for r in adaptive] == [0.0, 1.0, 0.0, 1.0]
    assert adaptive[0].info["weights"] == {"correct": 0.0, "river": 0.5}  # weight 1 x std 0.5


def test_adaptive_group_where_nothing_varies_keeps_declared_weights():
    criteria = [{**CORRECT, "params": {"reference_key": "answer"}}, {"name": "river", "use": "text.contains", "params": {"reference_key": "river"}}]
    ref = {"answer": "Paris", "river": "Seine"}
    results = Rubric(criteria=criteria, adaptive=True).score_batch([Sample(response="Paris", reference=ref, group="g")] * 2)
    assert [r.score for r in results] == [0.75, 0.75] and "weights" not in results[0].info
