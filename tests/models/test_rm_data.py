"""Preference files: bad rows fail with file and line, never silently dropped."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import candidate_files
from rewardlab.errors import InputError
from rewardlab.models import read_pairs
from rewardlab.models.data import pairs_from_rows, split_pairs


def _write(tmp_path, rows):
    path = tmp_path / "prefs.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows))
    return path


def test_reads_strings_chat_messages_margin_and_tie(tmp_path):
    path = _write(tmp_path, [
        {"prompt": "p", "chosen": "good", "rejected": "bad", "margin": 1.5},
        {"prompt": [{"role": "user", "content": "q"}], "chosen": [{"role": "assistant", "content": "a"}],
         "rejected": "b", "tie": True},
    ])
    pairs = read_pairs(path)
    assert (pairs[0].margin, pairs[1].prompt, pairs[1].chosen, pairs[1].tie) == (1.5, "q", "a", True)


@pytest.mark.parametrize(("row", "message"), [
    ({"prompt": "p", "chosen": "a"}, "prefs.jsonl:2: .*missing field 'rejected'"),
    ({"prompt": "p", "chosen": " ", "rejected": "b"}, "prefs.jsonl:2: .*'chosen' is empty"),
    ({"chosen": "a", "rejected": "b", "margin": "big"}, "prefs.jsonl:2: .*'margin' must be a finite number"),
    ({"chosen": "a", "rejected": "b", "margin": 10**400}, r"prefs.jsonl:2: .*'margin' must be a finite number, got 1000.{56}$"),
    ({"chosen": "a", "rejected": 3}, "prefs.jsonl:2: .*'rejected' must be a string"),
    ("{broken", "prefs.jsonl:2: .*malformed JSON"),
])
def test_bad_rows_name_file_and_line(tmp_path, row, message):
    path = _write(tmp_path, [{"chosen": "a", "rejected": "b"}, row])
    with pytest.raises(InputError, match=message):
        read_pairs(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_pairs(tmp_path / "none.jsonl")
    with pytest.raises(InputError, match="no rows"):
        read_pairs(_write(tmp_path, [""]))


def test_split_never_puts_one_prompt_on_both_sides():
    rows = [{"prompt": f"q{i % 10}", "chosen": "a", "rejected": "b"} for i in range(100)]
    train, val = split_pairs(pairs_from_rows(rows), val_fraction=0.2)
    assert len(train) + len(val) == 100 and val
    assert not {p.prompt for p in train} & {p.prompt for p in val}


def test_real_math_responses_give_pairs_split_by_question(shared_data):
    from rewardlab.models.data import graded_pairs

    path = shared_data / "qwen25-math-cot-100.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    pairs = graded_pairs(rows, source=str(path))
    assert len(pairs) == 128 and len({p.group for p in pairs}) == 10  # 10 questions with mixed outcomes
    train, val = split_pairs(pairs, val_fraction=0.3)
    assert not {p.group for p in train} & {p.group for p in val}
    # the reward model shipped in the file (`pred_score`) ranks these pairs far above chance
    shipped = {(r["question"], c): s[0] for r in rows for c, s in zip(r["code"], r["pred_score"], strict=True)}
    wins = [shipped[(p.prompt, p.chosen)] > shipped[(p.prompt, p.rejected)] for p in pairs]
    assert sum(wins) / len(wins) > 0.85


def test_graded_rows_with_mismatched_lengths_fail():
    from rewardlab.models.data import graded_pairs

    with pytest.raises(InputError, match=r"x\.jsonl:1: column 'score' must be a list of 1 items"):
        graded_pairs([{"question": "q", "code": ["a"], "score": [True, False]}], source="x.jsonl")


def test_graded_pairs_read_labels_by_the_candidate_rules():
    from rewardlab.models.data import graded_pairs

    rows = [{"question": "q1", "code": ["right", "wrong", "unknown"], "score": [True, False, None], "idx": 1},
            {"question": "q2", "code": ["a", "b"], "score": ["yes", "no"], "idx": 2},  # strings are not labels
            {"question": "q3", "code": ["c", "d"], "score": [1, 0], "idx": 3}]
    with pytest.raises(InputError, match=r"x\.jsonl:2: column 'score' holds 'yes'"):
        graded_pairs(rows, source="x.jsonl")
    errors: list[InputError] = []
    pairs = graded_pairs(rows, source="x.jsonl", on_error=errors.append)
    assert [(p.chosen, p.rejected, p.group) for p in pairs] == [("right", "wrong", "1"), ("c", "d", "3")]  # null: in no pair
    assert [e.line for e in errors] == [2]


def test_read_pairs_names_the_file_line_of_a_bad_row_after_blank_lines(tmp_path):
    path = tmp_path / "prefs.jsonl"
    path.write_text('{"chosen": "a", "rejected": "b"}\n\n\n{"chosen": "a"}\n')
    with pytest.raises(InputError, match="rejected") as err:
        read_pairs(path)
    assert err.value.line == 4


def graded_pairs_row_at_a_time(rows: list[dict], on_error) -> list:
    """The reading `graded_pairs` stands for: the prompt, then `parse_candidate_row` item by
    item, row by row; every (right, wrong) pair of each row."""
    from candidate_files import item_by_item
    from rewardlab.core.sample import is_text, text_of
    from rewardlab.models.data import PreferencePair
    from rewardlab.runner.candidate_rows import CandidateColumns, file_columns, parse_candidate_row

    numbered = list(enumerate(rows, start=1))
    columns = CandidateColumns(prompt="question", responses="code", labels="score", reference=None, scores=None, answers=None)
    present = file_columns(numbered, columns, "x.jsonl", required=("responses", "labels"))
    pairs = []
    with item_by_item():
        for line, row in numbered:
            try:
                if "question" not in row:
                    raise InputError("missing field(s) ['question']", source="x.jsonl", line=line)
                if not is_text(row["question"]):
                    raise InputError("field 'question' must be a string or a list of chat messages ({'role': ..., "
                                     f"'content': ...}}), got {type(row['question']).__name__}", source="x.jsonl", line=line)
                checked = parse_candidate_row(line, row, columns, present, "x.jsonl")
            except InputError as exc:
                if on_error is None:
                    raise
                on_error(exc)
                continue
            prompt = text_of(row["question"])
            group = str(row.get("idx", prompt))
            right = [r for r, ok in zip(checked.responses, checked.labels, strict=True) if ok is True]
            wrong = [r for r, ok in zip(checked.responses, checked.labels, strict=True) if ok is False]
            pairs += [PreferencePair(prompt, c, w, group=group) for c in right for w in wrong]
    return pairs


def pairs_outcome(read, rows: list[dict]) -> tuple[object, list[tuple[int | None, str]]]:
    errors: list[InputError] = []
    try:
        return read(rows, errors.append), [(e.line, str(e)) for e in errors]
    except InputError as exc:
        return str(exc), [(e.line, str(e)) for e in errors]


_CHAT = [{"role": "user", "content": "q"}]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidate_files.rows(prompts=st.sampled_from(["q", None, _CHAT, {"role": "user"}, 5, ["q"]]), calm=2, plain={"score": st.sampled_from([True, False, None])}))
def test_graded_pairs_agree_with_the_row_at_a_time_reading(rows):
    """On hostile rows (wrong types, missing columns and prompts, NaN/inf, huge numbers, nested
    junk, booleans where numbers go; unknown labels among the usual ones), the column-at-a-time `graded_pairs` gives the same pairs
    and the same errors in the same order, and strict reading raises the same first error."""
    from rewardlab.models.data import graded_pairs

    got = pairs_outcome(lambda r, note: graded_pairs(r, source="x.jsonl", on_error=note), rows)
    want = pairs_outcome(graded_pairs_row_at_a_time, rows)
    assert got == want
    strict_got = pairs_outcome(lambda r, note: graded_pairs(r, source="x.jsonl"), rows)
    assert strict_got == pairs_outcome(lambda r, note: graded_pairs_row_at_a_time(r, None), rows)


def test_a_prompt_that_is_not_text_is_that_rows_error_not_a_crash():
    from rewardlab.models.data import graded_pairs

    rows = [{"question": {"x": 1}, "code": ["a", "b"], "score": [True, False]},  # text_of would index it
            {"question": "q2", "code": ["c", "d"], "score": [True, False]}]  # fmt: skip
    errors: list[InputError] = []
    pairs = graded_pairs(rows, source="x.jsonl", on_error=errors.append)
    assert [(p.prompt, p.chosen, p.rejected) for p in pairs] == [("q2", "c", "d")]
    assert [str(e) for e in errors] == ["x.jsonl:1: field 'question' must be a string or a list of chat messages "
                                        "({'role': ..., 'content': ...}), got dict"]  # fmt: skip


def test_a_row_without_the_prompt_gets_that_error_before_its_bad_labels():
    from rewardlab.models.data import graded_pairs

    rows = [{"question": "q1", "code": ["a", "b"], "score": [True, False]},
            {"code": ["c", "d"], "score": ["yes", False]},  # no prompt, and a bad label
            {"question": "q3", "code": ["e"], "score": ["no"]}]  # fmt: skip
    errors: list[InputError] = []
    pairs = graded_pairs(rows, source="x.jsonl", on_error=errors.append)
    assert [(p.chosen, p.rejected) for p in pairs] == [("a", "b")]
    assert [str(e) for e in errors] == ["x.jsonl:2: missing field(s) ['question']", "x.jsonl:3: column 'score' holds 'no'; "
                                        "expected true/false or 1/0 (null or NaN for unknown)"]  # fmt: skip
    with pytest.raises(InputError, match=r"x\.jsonl:2: missing field\(s\) \['question'\]"):
        graded_pairs(rows, source="x.jsonl")


PAIR_TEXT = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(["é", "数学", "🙂", "\u2028", '"\\', "\x00\x1f\x7f"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(PAIR_TEXT, PAIR_TEXT, PAIR_TEXT, PAIR_TEXT), max_size=5))
def test_write_pairs_writes_the_lines_json_dumps_writes(tmp_path_factory, texts):
    from rewardlab.models.data import PreferencePair, write_pairs

    pairs = [PreferencePair(p, c, r, group=g) for p, c, r, g in texts]
    path = write_pairs(pairs, tmp_path_factory.mktemp("pairs") / "sub" / "pairs.jsonl")
    want = "".join(json.dumps({"prompt": p, "chosen": c, "rejected": r, "group": g}, ensure_ascii=False) + "\n" for p, c, r, g in texts)
    assert path.read_bytes() == want.encode("utf-8")


def test_written_pairs_read_back(tmp_path):
    from rewardlab.models.data import PreferencePair, write_pairs

    pairs = [PreferencePair("combien ? é", "deux\n", 'trois "3"', group="g1"), PreferencePair("q", "🙂", "a\u2028b", group="g2")]
    back = read_pairs(write_pairs(pairs, tmp_path / "pairs.jsonl"))
    assert [(p.prompt, p.chosen, p.rejected, p.group) for p in back] == [(p.prompt, p.chosen, p.rejected, p.group) for p in pairs]


LONE_SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\ud83d cut", "\udc80"])  # a character cut in two


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(PAIR_TEXT | LONE_SURROGATES, PAIR_TEXT | LONE_SURROGATES, LONE_SURROGATES)
                .map(lambda t: ("p" + t[0], "c" + t[1], t[2])), min_size=1, max_size=4))
def test_write_pairs_writes_a_lone_surrogate_as_its_escape_and_reads_it_back(tmp_path_factory, texts):
    from rewardlab.models.data import PreferencePair, write_pairs

    pairs = [PreferencePair(p, c, r) for p, c, r in texts]
    path = write_pairs(pairs, tmp_path_factory.mktemp("pairs") / "pairs.jsonl")
    path.read_bytes().decode("utf-8")  # the file is UTF-8, which has no code for a lone surrogate
    assert [(p.prompt, p.chosen, p.rejected) for p in read_pairs(path)] == list(texts)


def test_write_pairs_writes_a_field_that_is_not_text_as_json_does(tmp_path):
    from rewardlab.models.data import PreferencePair, write_pairs

    odd = [PreferencePair("q", "a", "b", group=7), PreferencePair(["q"], "a", "b")]  # type: ignore[arg-type]
    path = write_pairs(odd, tmp_path / "pairs.jsonl")
    assert path.read_text(encoding="utf-8") == ('{"prompt": "q", "chosen": "a", "rejected": "b", "group": 7}\n'
                                                '{"prompt": ["q"], "chosen": "a", "rejected": "b", "group": ""}\n')  # fmt: skip
