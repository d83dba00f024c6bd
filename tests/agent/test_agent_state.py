"""`agent.state` and `agent.state_replay`: predicates as data, code in the sandbox, replay on JSON
and SQLite states; checks from the data that try to escape or hang are contained and typed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rewardlab.agent.replay import StateReplay
from rewardlab.agent.state import StateChecks
from rewardlab.core.sample import Sample
from rewardlab.errors import ConfigError
from rewardlab.sandbox.config import find_bwrap

ISOLATION = "bubblewrap" if find_bwrap() else "rlimits"
CALL = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "cancel", "arguments": {"order_id": "A"}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Cancelled; your refund of 1,093.34 is on its way."}]  # fmt: skip
STATE = {"orders": {"A": {"status": "cancelled", "total": 1093.34}, "B": {"status": "pending", "items": [1, 2]}}}
TOOLS = "def cancel(state, order_id):\n    state['orders'][order_id]['status'] = 'cancelled'\n"


def _checks(*checks: dict[str, Any], state: Any = STATE) -> Sample:
    return Sample.from_dict({"response": CALL, "state": state, "reference": {"checks": list(checks)}})


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ({"path": "orders.A.status", "op": "eq", "value": "cancelled"}, 1.0),
        ({"path": ["orders", "B", "status"], "value": "cancelled"}, 0.0),  # op defaults to eq
        ({"path": "orders.A.total", "op": "ge", "value": 1000}, 1.0),
        ({"path": "orders.A.total", "op": "lt", "value": "x"}, 0.0),  # not comparable: not met
        ({"path": "orders.B.items", "op": "contains", "value": 2}, 1.0),
        ({"path": "orders.B.items", "op": "len", "value": 2}, 1.0),
        ({"path": "orders.B.items.1", "op": "eq", "value": 2}, 1.0),
        ({"path": "orders.C", "op": "absent"}, 1.0),
        ({"path": "orders.C.status", "op": "eq", "value": None}, 0.0),  # absent is not null
        ({"path": "orders.A.status", "op": "in", "value": ["cancelled", "refunded"]}, 1.0),
    ],
)
def test_predicates_written_as_data(check: dict[str, Any], expected: float) -> None:
    result = StateChecks().score(_checks(check))
    assert result.status == "ok" and result.score == expected


def test_code_checks_run_in_the_sandbox_and_mix_with_predicates() -> None:
    code = "def check(state):\n    return sum(o['status'] == 'pending' for o in state['orders'].values()) / 2"
    result = StateChecks(isolation=ISOLATION).score(_checks({"path": "orders.A.status", "value": "cancelled"}, {"code": code, "name": "pending"}))
    assert result.status == "ok" and result.components["pending"].score == 0.5 and result.score == 0.75
    assert StateChecks(all_or_nothing=True, isolation=ISOLATION).score(_checks({"code": code})).score == 0.0


def test_no_state_is_an_error_not_a_zero() -> None:
    result = StateChecks().score(Sample.from_dict({"response": CALL, "reference": {"checks": [{"path": "a", "op": "exists"}]}}))
    assert result.status == "error" and result.error is not None and result.error.kind == "invalid_input"


def test_an_unknown_op_is_an_invalid_input_error() -> None:
    result = StateChecks().score(_checks({"path": "a", "op": "roughly"}))
    assert result.status == "error" and "op" in str(result.error)


def test_a_state_check_that_hangs_is_a_timeout() -> None:
    hang = {"code": "def check(state):\n    while True:\n        pass"}
    result = StateChecks(cpu_seconds=1.0, wall_seconds=5.0, isolation=ISOLATION).score(_checks(hang))
    assert result.status == "error" and result.error is not None and result.error.kind == "timeout"


def test_a_state_check_that_sleeps_is_a_timeout() -> None:
    sleep = {"code": "import time\ndef check(state):\n    time.sleep(60)\n    return True"}
    result = StateChecks(cpu_seconds=1.0, wall_seconds=2.0, isolation=ISOLATION).score(_checks(sleep))
    assert result.status == "error" and result.error is not None and result.error.kind == "timeout"


@pytest.mark.skipif(ISOLATION != "bubblewrap", reason="host files are hidden only under bubblewrap")
def test_a_state_check_cannot_read_host_files() -> None:
    here = Path(__file__).resolve()
    peek = {"code": f"def check(state):\n    return open({str(here)!r}).read().startswith('\"\"\"')"}
    result = StateChecks(isolation="bubblewrap").score(_checks(peek))
    assert here.read_text().startswith('"""')  # the host can read it...
    assert result.status == "error" and result.error is not None and "FileNotFoundError" in result.error.message  # ...the check cannot


@pytest.mark.skipif(ISOLATION != "bubblewrap", reason="the network namespace needs bubblewrap")
def test_a_state_check_has_no_network() -> None:
    net = {"code": "import socket\ndef check(state):\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    return True"}
    result = StateChecks(isolation="bubblewrap").score(_checks(net))
    assert result.status == "error" and result.error is not None and "OSError" in result.error.message


def test_tools_that_kill_their_process_are_contained() -> None:
    tools = "import os\nos._exit(0)\n"
    sample = Sample.from_dict({"response": CALL, "reference": {"initial": {"orders": {}}, "tools": tools, "actions": []}})
    result = StateReplay(isolation=ISOLATION).score(sample)
    assert result.status == "error" and result.error is not None and result.error.kind in ("sandbox", "invalid_input")


def _replay(reference: dict[str, Any], **row: Any) -> Any:
    return StateReplay(isolation=ISOLATION, **row.pop("options", {})).score(Sample.from_dict({"response": CALL, "reference": reference, **row}))


def test_json_replay_compares_final_states_and_outputs() -> None:
    initial = {"orders": {"A": {"status": "pending", "total": 1093.34}, "B": {"status": "pending", "items": [1, 2]}}}
    gold = {"initial": initial, "tools": TOOLS, "actions": [{"name": "cancel", "arguments": {"order_id": "A"}}], "outputs": ["1093.34"]}
    assert _replay(gold).score == 1.0  # the trajectory's own call replayed
    assert _replay(gold, state=STATE).score == 1.0  # the final state it carries
    wrong = {**gold, "actions": [{"name": "cancel", "arguments": {"order_id": "B"}}]}
    result = _replay(wrong)
    assert result.score == 0.0 and result.components["state"].score == 0.0 and result.components["outputs"].score == 1.0
    result = _replay({**gold, "outputs": ["B-17"]})
    assert result.score == 0.0 and result.components["outputs"].score == 0.0 and result.info["outputs"] == {"B-17": False}


def test_files_are_read_only_under_state_dir(tmp_path: Path) -> None:
    gold = {"initial": {"file": "../secret.json"}, "tools": TOOLS, "actions": []}
    result = _replay(gold, options={"state_dir": str(tmp_path)})
    assert result.status == "error" and "not a file under state_dir" in str(result.error)
    result = _replay({**gold, "initial": {"file": "x.json"}})
    assert result.status == "error" and "state_dir" in str(result.error)
    with pytest.raises(ConfigError):
        StateReplay(state_dir=str(tmp_path / "missing"))


def test_state_and_tools_files_that_are_not_utf8_are_invalid_input_naming_the_byte(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_bytes(b'{"orders": "\xff"}')
    (tmp_path / "tools.py").write_bytes(b"# caf\xe9\n")
    (tmp_path / "good.json").write_text('{"orders": {}}')
    for gold in ({"initial": {"file": "state.json"}, "tools": TOOLS, "actions": []},
                 {"initial": {"file": "good.json"}, "tools": {"file": "tools.py"}, "actions": []}):
        result = _replay(gold, options={"state_dir": str(tmp_path)})
        assert result.status == "error" and result.error.kind == "invalid_input", result
        assert "not valid UTF-8 (byte 0x" in result.error.message


def _database(path: Path, rows: list[tuple[str, str]]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT)")
    conn.executemany("INSERT INTO orders VALUES (?, ?)", rows)
    conn.commit()
    conn.close()


def test_sqlite_replay_on_a_copy_of_the_initial_database(tmp_path: Path) -> None:
    _database(tmp_path / "initial.db", [("A", "pending"), ("B", "pending")])
    _database(tmp_path / "final.db", [("B", "pending"), ("A", "cancelled")])  # same rows, other order
    _database(tmp_path / "wrong.db", [("A", "pending"), ("B", "cancelled")])
    before = (tmp_path / "initial.db").read_bytes()
    tools = "def cancel(conn, order_id):\n    conn.execute(\"UPDATE orders SET status = 'cancelled' WHERE id = ?\", (order_id,))\n"
    gold = {"initial": {"sqlite": "initial.db"}, "tools": tools, "actions": [{"name": "cancel", "arguments": {"order_id": "A"}}]}
    options = {"state_dir": str(tmp_path)}
    assert _replay(gold, options=options).score == 1.0
    assert _replay(gold, options=options, state={"sqlite": "final.db"}).score == 1.0
    assert _replay(gold, options=options, state={"sqlite": "wrong.db"}).score == 0.0
    assert (tmp_path / "initial.db").read_bytes() == before  # replayed on copies, in the sandbox
