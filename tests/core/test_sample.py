import pickle

import pytest

from rewardlab.core import Sample
from rewardlab.errors import InputError


def test_id_is_a_stable_content_hash():
    a = Sample(prompt="p", response="r", reference="x")
    b = Sample(prompt="p", response="r", reference="x")
    assert a.id == b.id and len(a.id) == 32
    assert Sample(prompt="p", response="r2", reference="x").id != a.id


def test_group_is_not_part_of_the_id():
    assert Sample(response="r", group="g1").id == Sample(response="r", group="g2").id


def test_given_id_is_kept():
    assert Sample(response="r", id="row-7").id == "row-7"


def test_sample_is_frozen_and_hashable_and_picklable():
    s = Sample(response="r", meta={"k": [1, 2]}, steps=["a", "b"])
    with pytest.raises(AttributeError):
        s.response = "x"  # type: ignore[misc]
    assert s.steps == ("a", "b")
    assert {s: 1}[s] == 1
    assert pickle.loads(pickle.dumps(s)) == s


def test_response_text_of_chat_messages():
    s = Sample(response=[{"role": "assistant", "content": "hello"}], prompt=[{"role": "user", "content": "hi"}])
    assert s.response_text == "hello"
    assert s.prompt_text == "hi"


def test_from_dict_maps_fields_and_keeps_the_rest_in_meta():
    s = Sample.from_dict({"completion": "42", "answer": "42", "source": "gsm8k"}, fields={"response": "completion", "reference": "answer"})
    assert (s.response, s.reference, dict(s.meta)) == ("42", "42", {"source": "gsm8k"})


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"prompt": "p"}, "missing field 'response'"),
        ({"response": 3}, "field 'response' must be a string"),
        ({"response": "r", "steps": "abc"}, "must be a list of strings"),
        ({"response": "r", "meta": [1]}, "field 'meta' must be an object"),
        ({"response": "r", "id": {"a": 1}}, "field 'id' must be a string"),
    ],
)
def test_from_dict_rejects_bad_rows_naming_file_and_line(row, message):
    with pytest.raises(InputError) as err:
        Sample.from_dict(row, source="data.jsonl", line=12)
    assert "data.jsonl:12" in str(err.value) and message in str(err.value)


def test_from_dict_rejects_non_objects():
    with pytest.raises(InputError, match="expected a JSON object, got list"):
        Sample.from_dict([1, 2], source="x", line=1)  # type: ignore[arg-type]


def test_round_trip_through_dict():
    s = Sample(prompt="p", response="r", reference={"tests": "t"}, steps=("a",), meta={"m": 1}, group="g")
    assert Sample.from_dict(s.to_dict()) == s


def test_content_key_is_the_cache_digest_and_keeps_the_stored_keys():
    """One sample digest: `Sample.content_key` is `sample_digest` in hex, and the digest is the
    one caches were written with (values from the earlier `store.sample_digest`)."""
    from rewardlab.core import sample_digest
    from rewardlab.store import sample_key

    s = Sample(prompt="q", response="a", reference=1.5, steps=("x",), meta={"k": [1, "é"], "a": None}, id="given")
    assert sample_digest(s).hex() == "773eb947409ef2ac49f29c497f5e9a93" == s.content_key == sample_key(s)
    # a float with a negative exponent is where the stored digest and the earlier content_key differed
    small = Sample(response="b", meta={"v": 1e-07})
    assert small.content_key == sample_digest(small).hex() == "191af799f8bc3d13e0df7375d24c4a31" == small.id
