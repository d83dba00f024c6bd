"""Group rewards behind the server: groups whole per request, never cached or shared per sample.

A group reward's result depends on the other members of the group, so the batcher must not cut
a request's group across batches, merge two requests' groups, share identical samples (two
members with the same answer are two votes) or answer from the per-sample cache.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.errors import GroupSplitError
from rewardlab.runner import ScoreFileOptions, score_file
from rewardlab.serve.client import AsyncClient, Client, RemoteReward
from rewardlab.serve.remote import RemoteExecutor
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

from ._live import LiveServer

pytestmark = pytest.mark.network

VOTE = {"reward": {"name": "ttrl", "components": [
    {"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3, "answer_key": "ans"}},
]}}  # fmt: skip


def _rows(groups: int = 8) -> list[dict]:
    """Interleaved groups of 5 (3 vote `g`, 2 vote `g+100`): any cut through a group changes it."""
    by_group = [[{"prompt": f"q{g}", "response": str(a), "group": f"g{g}", "meta": {"ans": str(a)}} for a in (g + 100, g, g + 100, g, g)] for g in range(groups)]
    return [by_group[g][k] for k in range(5) for g in range(groups)]


def _one_piece(rows: list[dict]) -> list[tuple]:
    return [(r.status, r.score) for r in build(VOTE).score_batch([Sample.from_dict(x) for x in rows])]


def test_served_group_reward_lists_its_group_keys(make_app):
    app = make_app({"ttrl": build(VOTE)}, None, ServeSettings(workers=0))
    with LiveServer(app) as server, Client(server.url) as client:
        assert client.rewards()[0]["group_keys"] == ["group"]


def test_recorded_run_through_a_pool_server_scores_groups_whole(make_app, tmp_path):
    """A file over a real socket: chunks of 7 rows, requests of 3, backend batches of 4."""
    rows = _rows()
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    app = make_app({"ttrl": build(VOTE)}, None, ServeSettings(workers=2, max_batch=4))
    with LiveServer(app) as server:
        executor = RemoteExecutor(server.url, "ttrl", batch_size=3)
        try:
            opts = ScoreFileOptions(record_every=7, run_store=tmp_path / "runs.sqlite")
            score_file("ttrl", source, tmp_path / "out.jsonl", opts, executor=executor, spec_hash=executor.spec_hash())
        finally:
            executor.close()
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(Status(o["reward_status"]), o["reward"]) for o in out] == _one_piece(rows)


def test_remote_reward_with_group_keys_keeps_groups_in_one_request(make_app):
    rows = _rows()
    app = make_app({"ttrl": build(VOTE)}, None, ServeSettings(workers=0, max_batch=2))
    with LiveServer(app) as server:
        remote = RemoteReward(server.url, "ttrl", group_keys={"group"}, batch_size=4)
        results = remote.score_batch([Sample.from_dict(r) for r in rows])
        remote.close()
    assert [(r.status, r.score) for r in results] == _one_piece(rows)


def test_two_requests_with_the_same_group_id_are_not_merged(make_app):
    """Each request's group "g" is its own group, however the batcher collects them."""
    app = make_app({"ttrl": build(VOTE)}, None, ServeSettings(workers=0, max_batch=64, max_wait_ms=50))
    first = [{"group": "g", "response": a, "meta": {"ans": a}} for a in ("1", "1", "1", "2")]
    second = [{"group": "g", "response": a, "meta": {"ans": a}} for a in ("2", "2", "2", "1")]

    async def both() -> list[list]:
        async with AsyncClient("http://t", transport=httpx.ASGITransport(app)) as client:  # type: ignore[arg-type]
            return list(await asyncio.gather(client.score("ttrl", first), client.score("ttrl", second)))

    one, two = asyncio.run(both())
    assert [r.score for r in one] == [1.0, 1.0, 1.0, 0.0]
    assert [r.score for r in two] == [1.0, 1.0, 1.0, 0.0]
    assert one[0].components["vote"].info["group_size"] == 4


def test_identical_members_are_separate_votes_and_never_come_from_the_cache(make_app, tmp_path):
    app = make_app({"ttrl": build(VOTE)}, ResultStore(tmp_path / "c.sqlite"), ServeSettings(workers=0))
    three_sevens = [{"group": "g", "response": "7", "meta": {"ans": a}} for a in ("7", "7", "7", "8", "8")]
    two_sevens = [{"group": "g", "response": "7", "meta": {"ans": a}} for a in ("7", "7", "8", "8", "8")]
    with LiveServer(app) as server, Client(server.url) as client:
        a = client.score("ttrl", three_sevens)
        b = client.score("ttrl", two_sevens)  # the same "7" samples, in a group where 7 lost
    assert a[0].components["vote"].info["votes"] == {"7": 3, "8": 2}
    assert [r.score for r in a] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert [r.score for r in b] == [0.0, 0.0, 1.0, 1.0, 1.0]


def test_a_group_larger_than_the_server_takes_is_a_group_split_error(make_app):
    app = make_app({"ttrl": build(VOTE)}, None, ServeSettings(workers=0, max_samples=4))
    small = [{"group": f"s{i // 2}", "response": "1", "meta": {"ans": "1"}} for i in range(6)]
    big = [{"group": "big", "response": "1", "meta": {"ans": "1"}} for _ in range(5)]
    with LiveServer(app) as server, Client(server.url) as client:
        # groups of 2 in a request of 6 > 4: the client halves at group boundaries
        assert len(client.score("ttrl", small, group_keys={"group"})) == 6
        with pytest.raises(GroupSplitError, match="a group of 5 samples"):
            client.score("ttrl", big, group_keys={"group"})
