"""`rewardlab eval` and `rewardlab select` read candidate files with one reader: the same hostile
file gives the same unreadable lines with the same messages in every command's output."""

from __future__ import annotations

import json
import math
import re

import pytest

from rewardlab.cli.main import main


def _good(i: int) -> dict:
    right = [j % 2 == 0 for j in range(3)]
    return {"question": f"q{i}", "gt": "1", "code": ["a " * (j + 1) for j in range(3)], "pred": ["1" if r else "2" for r in right],
            "pred_score": [[0.2 + 0.3 * j] for j in range(3)], "score": right}


HOSTILE = {  # line -> (raw line, what its message says)
    2: ('{"question": "q", "code": [', "malformed JSON"),
    4: (json.dumps({**_good(9), "pred_score": [["high"], [0.1], [0.2]]}), "column 'pred_score' holds 'high'; expected a number"),
    5: (json.dumps({**_good(9), "pred": ["1", "2"]}), "column 'pred' must be a list of 3 items (one per response), got 2 items"),
    7: (json.dumps({k: v for k, v in _good(9).items() if k != "score"}), "column 'score' is missing here but present in other rows"),
    8: (json.dumps({**_good(9), "pred_score": [[math.inf], [0.1], [0.2]]}), "column 'pred_score' holds inf; expected a finite number"),
    10: (json.dumps({**_good(9), "score": ["yes", False, True]}), "column 'score' holds 'yes'; expected true/false or 1/0"),
}


@pytest.fixture
def hostile(tmp_path):
    good = iter(_good(i) for i in range(20))
    lines = [HOSTILE[n][0] if n in HOSTILE else json.dumps(next(good)) for n in range(1, 13)]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _printed(out: str, path) -> list[str]:
    """The `file:line: reason` lines a command printed about the rows it left out."""
    return [line.strip() for line in out.splitlines() if re.match(rf"\s*{re.escape(str(path))}:\d+: ", line)]


def test_eval_and_select_report_the_same_unreadable_lines_with_the_same_messages(tmp_path, hostile, capsys):
    assert main(["eval", "--data", str(hostile), "-o", str(tmp_path / "eval")]) == 0
    eval_printed = capsys.readouterr().out
    assert main(["select", "pick", str(hostile), "-m", "best_of_n", "-o", str(tmp_path / "picks.jsonl")]) == 0
    pick_printed = capsys.readouterr().out
    assert main(["select", "curves", str(hostile), "-o", str(tmp_path / "curves"), "--methods", "oracle,best_of_n"]) == 0

    from_eval = json.loads((tmp_path / "eval" / "report.json").read_text())["unreadable"]
    picks = [json.loads(line) for line in (tmp_path / "picks.jsonl").read_text().splitlines()]
    from_pick = [{"line": r["line"], "error": r["error"]} for r in picks if r["status"] == "error"]
    from_curves = json.loads((tmp_path / "curves" / "curves.json").read_text())["unreadable"]
    assert from_eval == from_pick == from_curves
    assert [r["line"] for r in from_eval] == sorted(HOSTILE)
    for row in from_eval:
        assert HOSTILE[row["line"]][1] in row["error"], row
    assert f"{len(HOSTILE)} rows could not be read and are left out" in eval_printed
    assert _printed(eval_printed, hostile) == _printed(pick_printed, hostile) != []
    assert [r["line"] for r in picks] == list(range(1, 13))  # one output row per line of the file


def test_the_readable_rows_are_the_same_problems_for_both(tmp_path, hostile):
    assert main(["eval", "--data", str(hostile), "-o", str(tmp_path / "eval")]) == 0
    assert main(["select", "pick", str(hostile), "-m", "best_of_n", "-o", str(tmp_path / "picks.jsonl")]) == 0
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    picks = [json.loads(line) for line in (tmp_path / "picks.jsonl").read_text().splitlines()]
    ok = [r for r in picks if r["status"] == "ok"]
    assert report["n_problems"] == len(ok) == 12 - len(HOSTILE)
    # both pick the top file score (0.8, a right answer) on every problem
    assert report["selectors"]["file scores"]["best_of_n"]["estimate"] == 1.0
    assert {r["chosen"] for r in ok} == {2} and all(r["credit"] == 1.0 for r in ok)


@pytest.mark.parametrize("spelling", ["--labels", "--correct"])
def test_select_and_eval_name_the_labels_column_alike(tmp_path, spelling):
    rows = [{**_good(i), "ok": _good(i)["score"]} for i in range(3)]
    for row in rows:
        del row["score"]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["select", "pick", str(path), "-m", "best_of_n", "-o", str(tmp_path / "p.jsonl"), spelling, "ok"]) == 0
    assert all(json.loads(line)["credit"] == 1.0 for line in (tmp_path / "p.jsonl").read_text().splitlines())
    assert main(["eval", "--data", str(path), "-o", str(tmp_path / "eval"), spelling, "ok"]) == 0
    assert json.loads((tmp_path / "eval" / "report.json").read_text())["gold"] == "file labels"
