"""`rewardlab serve`, `rewardlab cache`, and `rewardlab score --resume / --remote` through `main(argv)`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewardlab.cli.main import main
from rewardlab.compose import build
from rewardlab.core import spec_hash
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

from ._live import LiveServer
from ._rewards import EXACT_SPEC, register_all

HERE = Path(__file__).parent
SLOW_SPEC = """
[reward]
name = "slow"
[[reward.components]]
name = "len"
use = "test.slow"
params = { delay = 0.004 }
"""


def _data(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"response": f"{i % 10}", "reference": "3", "i": i}) + "\n" for i in range(n)))
    return path


def test_cache_stats_and_clear(tmp_path, capsys):
    from rewardlab.core import RewardResult, Sample

    path = tmp_path / "c.sqlite"
    with ResultStore(path) as store:
        store.put_many("h", [(Sample(response=str(i)), RewardResult.ok(1)) for i in range(7)])
    assert main(["cache", "stats", "--cache", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 7
    assert main(["cache", "clear", "--cache", str(path)]) == 0
    assert "deleted 7 cached results" in capsys.readouterr().out
    with ResultStore(path) as store:
        assert store.stats().rows == 0


@pytest.mark.parametrize("command", ["stats", "clear"])
def test_cache_commands_on_a_missing_file_say_so_and_create_nothing(tmp_path, capsys, command):
    missing = tmp_path / "typo.sqlite"
    assert main(["cache", command, "--cache", str(missing)]) == 1
    assert "typo.sqlite: no cache file here" in capsys.readouterr().err
    assert not missing.exists()  # opening a store creates its file


def test_serve_with_an_invalid_option_is_a_usage_error(tmp_path):
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    assert main(["serve", str(spec), "--workers", "-1", "--no-cache"]) == 2
    assert main(["serve", str(spec), "--port", "99999", "--no-cache"]) == 2  # not a traceback from bind()


def test_serve_with_a_malformed_or_unserved_override_is_a_usage_error(tmp_path):
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    assert main(["serve", str(spec), "--no-cache", "--set", "exact.workers=many"]) == 2
    assert main(["serve", str(spec), "--no-cache", "--set", "exact.colour=red"]) == 2
    assert main(["serve", str(spec), "--no-cache", "--set", "nosuch.workers=1"]) == 2
    assert main(["serve", str(spec), "--no-cache", "--set", "workers=1"]) == 2


def test_serve_with_a_broken_spec_exits_1(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(EXACT_SPEC.replace("text.exact", "text.exactt"))
    assert main(["serve", str(spec), "--no-cache"]) == 1


@pytest.mark.network
def test_score_remote_writes_the_same_rows_as_local(tmp_path, make_app):
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    data = _data(tmp_path / "data.jsonl", 40)
    reward = build(spec)
    app = make_app({"exact": reward}, None, ServeSettings(workers=0))
    with LiveServer(app) as server:
        code = main(["score", str(spec), str(data), "-o", str(tmp_path / "remote.jsonl"), "--remote", server.url,
                     "--cache", str(tmp_path / "runs.sqlite"), "--no-progress"])
        assert code == 0
        by_name = main(["score", "exact", str(data), "-o", str(tmp_path / "by_name.jsonl"), "--remote", server.url,
                        "--cache", str(tmp_path / "runs.sqlite"), "--no-progress"])
        assert by_name == 0
    assert main(["score", str(spec), str(data), "-o", str(tmp_path / "local.jsonl"), "-w", "0", "--no-progress"]) == 0
    rows = {name: [json.loads(x) for x in (tmp_path / f"{name}.jsonl").read_text().splitlines()] for name in ("remote", "by_name", "local")}
    keep = ("i", "reward", "reward_status", "source_line", "spec_hash")
    for name in ("remote", "by_name"):
        assert [{k: r[k] for k in keep} for r in rows[name]] == [{k: r[k] for k in keep} for r in rows["local"]]
    assert rows["remote"][0]["spec_hash"] == spec_hash(reward)


@pytest.mark.network
def test_score_remote_refuses_a_spec_the_server_does_not_serve(tmp_path, make_app):
    served = build(EXACT_SPEC)
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC + "params = { case_sensitive = true }\n")  # same name, other spec
    data = _data(tmp_path / "data.jsonl", 3)
    app = make_app({"exact": served}, None, ServeSettings(workers=0))
    with LiveServer(app) as server:
        code = main(["score", str(spec), str(data), "-o", str(tmp_path / "o.jsonl"), "--remote", server.url,
                     "--cache", str(tmp_path / "runs.sqlite"), "--no-progress"])
    assert code == 2 and not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_score_killed_mid_run_resumes_without_losing_or_repeating_rows(tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW_SPEC)
    n = 1500
    data = _data(tmp_path / "data.jsonl", n)
    out, runs = tmp_path / "out.jsonl", tmp_path / "runs.sqlite"
    argv = ["score", str(spec), str(data), "-o", str(out), "--resume", "--cache", str(runs), "-w", "2", "--no-progress"]
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import _rewards; _rewards.register_all(); "
        f"from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 90
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.exists():
            try:
                with ResultStore(runs) as store:
                    done = store.stats().run_rows
            except Exception:  # the file may be mid-creation
                done = 0
            if done >= 300:
                break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 300 <= done < n and not out.exists(), "the run should have been killed mid-way"

    register_all()
    assert main(argv) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["source_line"] for r in lines] == list(range(1, n + 1))
    assert [r["i"] for r in lines] == list(range(n))
    assert all(r["reward"] == len(r["response"]) / 100 for r in lines)
    with ResultStore(runs) as store:
        assert store.integrity_check() == "ok"
        assert store.stats().run_rows == n
