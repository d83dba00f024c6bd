"""Loaded as a module inside the sandbox (`rewardlab.sandbox`): replays tool calls on a state and
runs state checks. Standard library only; nothing here runs in the host process.

The code it runs comes with the data (tool implementations, check functions), so it runs here,
in a fresh sandboxed child per sample, and answers with plain values: hashes, booleans, numbers
and short error strings.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from typing import Any

MODULE_NAME = "rewardlab_agent_replay"


def _namespace(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "rl_tools"}
    exec(compile(source, "<tools>", "exec"), namespace)
    return namespace


def _tools(namespace: dict[str, Any]) -> dict[str, Any]:
    table = namespace.get("TOOLS")
    if isinstance(table, dict):
        return table
    return {k: v for k, v in namespace.items() if callable(v) and not k.startswith("_")}


def _apply(tools: dict[str, Any], target: Any, actions: list[list[Any]], skip: set[str]) -> list[str]:
    """Call each action's tool on `target`; a tool that raises or is unknown changes nothing more
    (as an environment answers "Error: ..." and goes on)."""
    errors = []
    for name, kwargs in actions:
        if name in skip:
            continue
        tool = tools.get(name)
        if tool is None:
            errors.append(f"unknown tool {name!r}")
            continue
        try:
            tool(target, **kwargs)
        except Exception as exc:  # the environment's answer is an error; the state stays as the tool left it
            errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
    return errors


def state_hash(state: Any) -> str:
    """sha256 of the state's canonical JSON (sorted keys): equal states, equal hashes."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def rl_replay_json(initial: str, tools_source: str, gold: list[list[Any]], candidate: list[list[Any]] | None,
                   skip: list[str]) -> dict[str, Any]:  # fmt: skip
    """Hashes of the `initial` state (JSON text: one string crosses the boundary faster than a
    large tree of values) after the gold actions and after the candidate's actions (None: the
    candidate's final state is given by the host, which hashes it itself)."""
    tools = _tools(_namespace(tools_source))
    gold_state = json.loads(initial)
    gold_errors = _apply(tools, gold_state, gold, set(skip))
    out: dict[str, Any] = {"gold": state_hash(gold_state), "gold_errors": gold_errors}
    if candidate is not None:
        state = json.loads(initial)
        out["candidate_errors"] = _apply(tools, state, candidate, set(skip))
        out["candidate"] = state_hash(state)
    return out


def _db(path: str, data: bytes) -> sqlite3.Connection:
    with open(path, "wb") as handle:
        handle.write(data)
    return sqlite3.connect(path)


def database_hash(conn: sqlite3.Connection) -> str:
    """sha256 over every table's schema and rows, rows sorted (row order is not state)."""
    digest = hashlib.sha256()
    tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name").fetchall()
    for name, sql in tables:
        digest.update(json.dumps([name, sql]).encode())
        rows = conn.execute(f'SELECT * FROM "{name.replace(chr(34), chr(34) * 2)}"').fetchall()
        for row in sorted(json.dumps(list(r), default=repr) for r in rows):
            digest.update(row.encode())
    return digest.hexdigest()


def rl_replay_sqlite(initial: bytes, tools_source: str, gold: list[list[Any]], candidate: list[list[Any]] | None,
                     final: bytes | None, skip: list[str]) -> dict[str, Any]:  # fmt: skip
    """The same for SQLite: `initial` and `final` are database files' bytes; tools take a connection."""
    tools = _tools(_namespace(tools_source))
    gold_conn = _db("/tmp/gold.db", initial)
    gold_errors = _apply(tools, gold_conn, gold, set(skip))
    gold_conn.commit()
    out: dict[str, Any] = {"gold": database_hash(gold_conn), "gold_errors": gold_errors}
    if final is not None:
        out["candidate"] = database_hash(_db("/tmp/final.db", final))
    else:
        conn = _db("/tmp/candidate.db", initial)
        out["candidate_errors"] = _apply(tools, conn, candidate or [], set(skip))
        conn.commit()
        out["candidate"] = database_hash(conn)
    for path in ("/tmp/gold.db", "/tmp/final.db", "/tmp/candidate.db"):
        if os.path.exists(path):
            os.remove(path)
    return out


def rl_checks(state: Any, sources: list[str]) -> list[list[Any]]:
    """Run each check's `check(state)`; a check's answer is a bool or a number, or the error it raised."""
    out: list[list[Any]] = []
    for source in sources:
        try:
            value = _namespace(source)["check"](json.loads(json.dumps(state)))
        except Exception as exc:
            out.append(["error", f"{type(exc).__name__}: {str(exc)[:300]}"])
            continue
        if isinstance(value, bool) or (isinstance(value, int | float) and value == value):
            out.append(["ok", float(value)])
        else:
            out.append(["error", f"check() returned {type(value).__name__}, expected a bool or a number"])
    return out
