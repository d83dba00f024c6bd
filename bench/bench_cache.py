"""Result-cache layouts side by side: what an insert, a lookup, an LRU touch and an eviction cost.

The server's writer thread commits a first pass's results 256 rows at a time; what that costs
per row depends on the SQLite layout, and on how many rows the store already holds (a random-key
index that no longer fits in SQLite's page cache dirties a page per row). Two parts, one run:

1. Layouts, in raw SQL on the same rows (encoded results of the `cheap` spec of
   bench_serve.py, random 16-byte keys), each in a fresh file pre-filled with ``--rows`` rows:
   the previous layout (``result_rows``: hex text keys, ``created``, an index on ``used``) and
   the new one (`rewardlab.store.cache`: spec id + 16-byte BLOB key, no ``created``), with and
   without the ``used`` index, and with ``created``. Per row: insert (batches of 256, CPU and
   wall), lookup of 256 keys per statement on a second (reader) connection, hit and miss, the
   LRU touch (``UPDATE used``), and one eviction of a tenth (ms). ``--cache-kib`` repeats the
   layouts with a larger ``PRAGMA cache_size``.
2. `ResultStore` itself (this tree), and with ``--old-store FILE`` the same calls on an older
   ``cache.py`` (e.g. ``git show c552376~1:src/rewardlab/serve/cache.py > /tmp/old_cache.py``),
   which keyed by hex strings: ``put_encoded`` per row in batches of 256, ``get_encoded`` hit and
   miss per row in batches of 256; the ratio old / new.

Run: .venv/bin/python bench/bench_cache.py [--rows 0,200000] [--cache-kib 0]
     [--old-store /tmp/old_cache.py]
Times are CPU (process time) unless marked wall; the machine is shared, so take the best of a
few runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from bench_serve import SPEC, make_samples

from rewardlab.compose import build
from rewardlab.store import cache as new_cache

BATCH = 256
NEW_ROWS = 10_240  # inserted, looked up (hits) and missed per measurement

_NEW = "CREATE TABLE t (spec INTEGER NOT NULL, key BLOB NOT NULL, result BLOB NOT NULL, {created}used REAL NOT NULL, UNIQUE (spec, key));{index}"
_USED = " CREATE INDEX t_used ON t (used);"
LAYOUTS: dict[str, tuple[str, str]] = {  # name -> (schema, row shape)
    "previous (hex text keys, created, used index)": (
        "CREATE TABLE t (spec_hash TEXT NOT NULL, sample_key TEXT NOT NULL, result TEXT NOT NULL, "
        "created REAL NOT NULL, used REAL NOT NULL, UNIQUE (spec_hash, sample_key));" + _USED,
        "text",
    ),
    "small keys + created + used index": (_NEW.format(created="created REAL NOT NULL, ", index=_USED), "created"),
    "small keys + used index": (_NEW.format(created="", index=_USED), "small"),
    "small keys (rewardlab.store.cache)": (_NEW.format(created="", index=""), "small"),
}
SPEC_HASH = "a" * 64


def encoded_results(n: int) -> list[bytes]:
    reward = build(SPEC)
    return [new_cache.encode_result(r) for r in reward.score_batch(make_samples(n))]


def timed(fn: Callable[[], object], n: int) -> tuple[float, float]:
    """Microseconds of CPU and of wall time per unit of `n`."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6


def connect(path: str, cache_kib: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if cache_kib:
        db.execute(f"PRAGMA cache_size = -{cache_kib}")
    return db


def bench_layout(folder: str, schema: str, shape: str, pre: int, cache_kib: int, enc: list[bytes]) -> dict[str, Any]:
    path = os.path.join(folder, f"{shape}-{abs(hash(schema))}-{pre}-{cache_kib}.sqlite")
    db = connect(path, cache_kib)
    db.executescript(schema)
    rng = random.Random(0)
    digests = [rng.getrandbits(128).to_bytes(16, "little") for _ in range(pre + NEW_ROWS)]
    key: Callable[[bytes], Any] = (lambda h: h.hex()) if shape == "text" else (lambda h: h)
    spec: Any = SPEC_HASH if shape == "text" else 1
    width = 4 if shape == "small" else 5

    def row(k: int, h: bytes, used: float) -> tuple[Any, ...]:
        return (spec, key(h), enc[k % len(enc)], *([used] * (width - 3)))

    insert = f"INSERT OR REPLACE INTO t VALUES ({','.join('?' * width)})"
    start = time.time() - 10_000
    for i in range(0, pre, 5000):  # pre-filled rows were used in the past, oldest first
        db.execute("BEGIN")
        db.executemany(insert, [row(k, h, start + k * 0.01) for k, h in enumerate(digests[i : i + 5000], start=i)])
        db.execute("COMMIT")
    now = time.time()
    fresh = [row(k, h, now) for k, h in enumerate(digests[pre:])]

    def insert_all() -> None:
        for i in range(0, len(fresh), BATCH):
            db.execute("BEGIN IMMEDIATE")
            db.executemany(insert, fresh[i : i + BATCH])
            db.execute("COMMIT")

    out: dict[str, Any] = {"insert": timed(insert_all, len(fresh))}
    reader = connect(path, cache_kib)
    spec_col, key_col = ("spec_hash", "sample_key") if shape == "text" else ("spec", "key")
    marks = ",".join("?" * BATCH)
    select = f"SELECT {key_col}, result, used FROM t WHERE {spec_col} = ? AND {key_col} IN ({marks})"
    hits = [key(h) for h in rng.sample(digests, NEW_ROWS)]
    misses = [key(rng.getrandbits(128).to_bytes(16, "little")) for _ in range(NEW_ROWS)]

    def lookup(keys: list[Any], expect: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(0, len(keys), BATCH):
                found = reader.execute(select, [spec, *keys[i : i + BATCH]]).fetchall()
                assert len(found) == expect
        return run

    out["hit"] = timed(lookup(hits, BATCH), len(hits))
    out["miss"] = timed(lookup(misses, 0), len(misses))
    if pre >= NEW_ROWS:
        stale = [key(h) for h in rng.sample(digests[:pre], NEW_ROWS)]
        update = f"UPDATE t SET used = ? WHERE {spec_col} = ? AND {key_col} IN ({marks})"
        out["touch"] = timed(lambda: [db.execute(update, [now + 1, spec, *stale[i : i + BATCH]]) for i in range(0, len(stale), BATCH)], len(stale))
        tenth = (pre + NEW_ROWS) // 10
        evict = "DELETE FROM t WHERE rowid IN (SELECT rowid FROM t ORDER BY used LIMIT ?)"
        cpu, wall = timed(lambda: db.execute(evict, (tenth,)), 1)
        out["evict_ms"] = (cpu / 1e3, wall / 1e3)
    out["mb"] = os.path.getsize(path) / 1e6
    reader.close()
    db.close()
    return out


def load_module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("old_cache", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_cache"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def bench_store(module: ModuleType, folder: str, pre: int, enc: list[bytes]) -> dict[str, tuple[float, float]]:
    """`ResultStore.put_encoded` / `get_encoded` per row; hex keys for a module without `sample_digest`."""
    hexkeys = not hasattr(module, "sample_digest")
    rng = random.Random(1)
    keys: list[Any] = [rng.getrandbits(128).to_bytes(16, "little") for _ in range(pre + NEW_ROWS)]
    if hexkeys:
        keys = [k.hex() for k in keys]
    path = Path(folder) / f"{module.__name__}-{pre}.sqlite"
    store = module.ResultStore(path, max_rows=10 * (pre + NEW_ROWS))
    rows = [(k, enc[i % len(enc)]) for i, k in enumerate(keys)]
    for i in range(0, pre, 5000):
        store.put_encoded(SPEC_HASH, rows[i : i + 5000])
    fresh = rows[pre:]
    out = {"insert": timed(lambda: [store.put_encoded(SPEC_HASH, fresh[i : i + BATCH]) for i in range(0, len(fresh), BATCH)], len(fresh))}
    hits = rng.sample(keys, NEW_ROWS)
    misses = [rng.getrandbits(128).to_bytes(16, "little") for _ in range(NEW_ROWS)]
    misses = [k.hex() for k in misses] if hexkeys else misses

    def lookup(chosen: list[Any], expect: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(0, len(chosen), BATCH):
                assert len(store.get_encoded(SPEC_HASH, chosen[i : i + BATCH])) == expect
        return run

    out["hit"] = timed(lookup(hits, BATCH), len(hits))  # rows used within a minute: no touch
    out["miss"] = timed(lookup(misses, 0), len(misses))
    store.close()
    return out


def fmt(pair: tuple[float, float] | None) -> str:
    return "-" if pair is None else f"{pair[0]:.2f} / {pair[1]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="0,200000", help="rows already in the store, comma-separated")
    parser.add_argument("--cache-kib", default="0", help="PRAGMA cache_size values in KiB to try (0: SQLite's 2 MB)")
    parser.add_argument("--old-store", help="an older cache.py to run the ResultStore part on too")
    parser.add_argument("--skip-layouts", action="store_true")
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    enc = encoded_results(20_000)
    print(f"SQLite {sqlite3.sqlite_version}, Python {sys.version.split()[0]}; {NEW_ROWS} rows per measurement, batches of {BATCH}")
    with tempfile.TemporaryDirectory() as folder:
        if not args.skip_layouts:
            print("\n| layout | rows before | page cache | insert us/row (cpu / wall) | hit us/row | miss us/row | touch us/row | evict a tenth, ms | file MB |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for pre in sizes:
                for kib in (int(x) for x in args.cache_kib.split(",")):
                    for name, (schema, shape) in LAYOUTS.items():
                        r = bench_layout(folder, schema, shape, pre, kib, enc)
                        print(f"| {name} | {pre:,} | {kib or 2000} KiB | {fmt(r['insert'])} | {fmt(r['hit'])} | {fmt(r['miss'])} | "
                              f"{fmt(r.get('touch'))} | {fmt(r.get('evict_ms'))} | {r['mb']:.1f} |", flush=True)
        modules = [("this tree", new_cache)] + ([("--old-store", load_module(args.old_store))] if args.old_store else [])
        print("\n| ResultStore | rows before | put_encoded us/row (cpu / wall) | get_encoded hit | get_encoded miss |")
        print("|---|---:|---:|---:|---:|")
        for pre in sizes:
            results = {}
            for label, module in modules:
                results[label] = r = bench_store(module, folder, pre, enc)
                print(f"| {label} | {pre:,} | {fmt(r['insert'])} | {fmt(r['hit'])} | {fmt(r['miss'])} |", flush=True)
            if len(results) == 2:
                old, new = results["--old-store"], results["this tree"]
                print(f"| old / new (cpu) | {pre:,} | {old['insert'][0] / new['insert'][0]:.2f}x | "
                      f"{old['hit'][0] / new['hit'][0]:.2f}x | {old['miss'][0] / new['miss'][0]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
