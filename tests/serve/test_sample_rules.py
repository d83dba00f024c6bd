"""One set of rules for samples: `Sample.from_dict`, the pydantic `SampleIn` and the server's
score route accept and refuse the same rows, and build the same `Sample` from them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import InputError, SampleFieldError
from rewardlab.runner.io import RowFormat, RowScorer
from rewardlab.serve.schemas import SampleIn
from rewardlab.serve.settings import ServeSettings

from ._live import asgi_client, run

HUGE = "x" * 2_000_000

# (name, row, field the row is refused for; "" = refused as a whole row, None = accepted)
CASES: list[tuple[str, Any, str | None]] = [
    ("plain", {"prompt": "p", "response": "r"}, None),
    ("int_id", {"response": "r", "id": 7}, None),
    ("negative_int_id", {"response": "r", "id": -3}, None),
    ("int_group", {"response": "r", "group": 12}, None),
    ("bool_id", {"response": "r", "id": True}, "id"),
    ("bool_group", {"response": "r", "group": False}, "group"),
    ("float_id", {"response": "r", "id": 1.5}, "id"),
    ("object_id", {"response": "r", "id": {"a": 1}}, "id"),
    ("none_id", {"response": "r", "id": None}, None),
    ("empty_id", {"response": "r", "id": ""}, None),
    ("none_group", {"response": "r", "group": None}, None),
    ("none_reference", {"response": "r", "reference": None}, None),
    ("object_reference", {"response": "r", "reference": {"tests": ["assert f(1) == 2"]}}, None),
    ("missing_response", {"prompt": "p"}, "response"),
    ("none_response", {"response": None}, "response"),
    ("int_response", {"response": 5}, "response"),
    ("none_prompt", {"prompt": None, "response": "r"}, "prompt"),
    ("chat_messages", {"prompt": [{"role": "user", "content": "hi"}], "response": [{"role": "assistant", "content": "yo"}]}, None),
    ("multipart_content", {"response": [{"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]}, None),
    ("message_without_content", {"response": [{"role": "assistant"}]}, "response"),
    ("list_of_strings_response", {"response": ["a", "b"]}, "response"),
    ("steps_list", {"response": "r", "steps": ["a", "b"]}, None),
    ("steps_string", {"response": "r", "steps": "abc"}, "steps"),
    ("steps_of_ints", {"response": "r", "steps": [1, 2]}, "steps"),
    ("none_steps", {"response": "r", "steps": None}, None),
    ("meta_list", {"response": "r", "meta": [1]}, "meta"),
    ("none_meta", {"response": "r", "meta": None}, "meta"),
    ("extra_columns_join_meta", {"response": "r", "meta": {"a": 1}, "source": "gsm8k"}, None),
    ("column_wins_over_meta_key", {"k": 2, "response": "r", "meta": {"k": 1}}, None),
    ("huge_response", {"prompt": HUGE, "response": HUGE, "id": HUGE}, None),
    ("huge_key", {"response": "r", HUGE[:100_000]: 1}, None),
    ("not_an_object", 5, ""),
    ("list_row", ["response", "r"], ""),
]
IDS = [c[0] for c in CASES]


class Echo(BaseReward):
    """Scores 1 and returns the fields of the `Sample` the server built (lengths of long text)."""

    name = "test.echo"
    range = (1.0, 1.0)

    def compute(self, sample: Sample) -> RewardResult:
        return RewardResult.ok(1.0, info={"sample": _fields(sample)})


def _fields(sample: Sample) -> dict[str, Any]:
    def short(value: Any) -> Any:
        return f"<{len(value)} chars>" if isinstance(value, str) and len(value) > 1000 else value

    meta = {short(k): v for k, v in sample.meta.items()}
    out = {"prompt": sample.prompt, "response": sample.response, "reference": sample.reference, "meta": meta,
           "steps": list(sample.steps) if sample.steps is not None else None, "id": sample.id, "group": sample.group}  # fmt: skip
    return {k: short(v) for k, v in out.items()}


def _by_from_dict(row: Any) -> dict[str, Any] | str:
    try:
        return _fields(Sample.from_dict(row))
    except SampleFieldError as exc:
        return exc.field
    except InputError:
        return ""


def _by_sample_in(row: Any) -> dict[str, Any] | str:
    try:
        model = SampleIn.model_validate(row)
    except ValidationError as exc:
        return str(exc)
    return _fields(model.to_sample())


def _by_runner(row: Any) -> dict[str, Any] | str:
    job = RowScorer(Echo(), RowFormat("data.jsonl", "h", "v"))
    _, line, (_, status, _, _, error, *_) = job((1, orjson.dumps(row).decode()))
    if status == "error":
        return str(error)
    return orjson.loads(line)["reward_info"]["sample"]


@pytest.fixture(scope="module")
def server_outcomes() -> dict[str, Any]:
    """Every case sent to a real app (one request per case), keyed by case name."""
    from rewardlab.serve.app import create_app

    app = create_app({"echo": Echo()}, None, ServeSettings(workers=0, max_body_bytes=64 * 1024 * 1024))

    async def go() -> dict[str, Any]:
        out = {}
        async with asgi_client(app) as c:
            for name, row, _ in CASES:
                reply = await c.post("/v1/rewards/echo:score", json={"samples": [row], "use_cache": False})
                out[name] = reply
        await app.state.service.aclose()
        return out

    return run(go())


@pytest.mark.parametrize(("name", "row", "refused_for"), CASES, ids=IDS)
def test_from_dict_sample_in_runner_and_server_agree(name, row, refused_for, server_outcomes):
    local = _by_from_dict(row)
    validated = _by_sample_in(row)
    runner = _by_runner(row)
    reply = server_outcomes[name]
    if refused_for is None:
        assert isinstance(local, dict), local
        assert validated == local
        assert runner == local
        assert reply.status_code == 200, reply.text
        assert reply.json()["results"][0]["info"]["sample"] == local
    else:
        assert local == refused_for
        assert isinstance(validated, str) and "validation error" in validated
        assert isinstance(runner, str) and "data.jsonl:1" in runner
        assert reply.status_code == 422, reply.text
        error = reply.json()["error"]
        assert error["code"] == "invalid_request"
        expected_loc = ["body", "samples", 0] + ([refused_for] if refused_for else [])
        assert error["details"][0]["loc"] == expected_loc


def test_an_integer_id_becomes_its_decimal_string_everywhere(server_outcomes):
    assert Sample.from_dict({"response": "r", "id": 7}).id == "7"
    assert server_outcomes["int_id"].json()["results"][0]["info"]["sample"]["id"] == "7"


def test_a_column_wins_over_the_meta_key_of_the_same_name():
    assert Sample.from_dict({"k": 2, "response": "r", "meta": {"k": 1}}).meta == {"k": 2}
    assert Sample.from_dict({"meta": {"k": 1}, "k": 2, "response": "r"}).meta == {"k": 2}


def test_every_bad_sample_of_a_request_is_reported():
    from rewardlab.serve.app import create_app

    app = create_app({"echo": Echo()}, None, ServeSettings(workers=0))
    rows = [{"response": "ok"}, {"response": 1}, {"response": "ok", "id": True}]

    async def go() -> Any:
        async with asgi_client(app) as c:
            reply = await c.post("/v1/rewards/echo:score", json={"samples": rows})
        await app.state.service.aclose()
        return reply

    reply = run(go())
    assert reply.status_code == 422
    assert [d["loc"] for d in reply.json()["error"]["details"]] == [["body", "samples", 1, "response"], ["body", "samples", 2, "id"]]
