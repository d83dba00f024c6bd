"""`rewardlab select search` in-process through `main(argv)`, against a real HTTP server on loopback."""

from __future__ import annotations

import json

import pytest
from completions_server import CompletionsServer

from rewardlab.cli.main import main

PRM_SPEC = '[reward]\nname = "works"\n[[reward.components]]\nname = "work"\nuse = "text.regex"\nparams = { pattern = "part|answer" }\n'


@pytest.fixture
def server():
    with CompletionsServer() as running:
        yield running


def _files(tmp_path, rows):
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "prm.toml"
    spec.write_text(PRM_SPEC)
    return data, spec


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _argv(server, data, out, *extra):
    return ["select", "search", str(data), "--base-url", server.base_url, "--model", "fake-model", "-o", str(out), *extra]


def test_beam_search_over_http_writes_one_stamped_row_per_problem(tmp_path, server, capsys):
    data, spec = _files(tmp_path, [{"question": "What is 2 + 2?", "gt": "4"}, {"question": "What is 3 + 2?", "gt": "5"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--reward", str(spec), "--width", "2", "--expand", "2", "--retries", "0")) == 0
    rows = _rows(out)
    assert [r["answer"] for r in rows] == ["4", "4"]  # the fake model always ends in \boxed{4}
    assert [r["correct"] for r in rows] == [True, False]
    assert rows[0]["steps"][-1] == "Step 3: so the answer is \\boxed{4}." and rows[0]["tokens"] > 0
    assert all(r["spec_hash"] and r["rewardlab_version"] for r in rows)
    assert max(len(r["prompt"]) for r in server.requests) == 4  # width x expand prompts in one request
    assert "accuracy 0.5000 on 2 judged" in capsys.readouterr().out


def test_a_failing_problem_is_an_error_row_and_the_others_are_still_searched(tmp_path, server, capsys):
    data, spec = _files(tmp_path, [{"question": "BADJSON", "gt": "4"}, {"question": "What is 2 + 2?", "gt": "4"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--reward", str(spec), "--retries", "0")) == 1
    rows = _rows(out)
    assert rows[0]["answer"] is None and "not JSON" in rows[0]["error"]
    assert rows[1]["answer"] == "4" and rows[1]["correct"] is True
    assert "1 generation errors" in capsys.readouterr().out


def test_a_503_is_retried_by_the_cli(tmp_path, server):
    data, spec = _files(tmp_path, [{"question": "FLAKY 2 + 2", "gt": "4"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--reward", str(spec), "--method", "best_of_n", "--n", "2")) == 0
    assert _rows(out)[0]["answer"] == "4"


@pytest.mark.parametrize("method", ["dvts", "best_first", "mcts"])
def test_every_prm_method_runs_over_http(tmp_path, server, method):
    data, spec = _files(tmp_path, [{"question": "What is 2 + 2?", "gt": "4"}])
    out = tmp_path / "out.jsonl"
    argv = _argv(server, data, out, "--reward", str(spec), "--method", method, "--expand", "2", "--simulations", "4")
    assert main(argv) == 0
    assert _rows(out)[0]["answer"] == "4"


def test_majority_needs_no_prm(tmp_path, server):
    data, _ = _files(tmp_path, [{"question": "What is 2 + 2?"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--method", "majority", "--n", "3", "--reference", "")) == 0
    row = _rows(out)[0]
    assert row["answer"] == "4" and row["solutions"] == 3 and row["correct"] is None and row["score"] is None


def test_the_adaptive_vote_stops_when_confident_and_needs_no_prm(tmp_path, server):
    # the fake model always answers 4: 1 - 2^-(k+1) first reaches 0.95 at k = 4 agreeing samples
    data, _ = _files(tmp_path, [{"question": "What is 2 + 2?", "gt": "4"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--method", "adaptive", "--n", "16", "--confidence", "0.95")) == 0
    row = _rows(out)[0]
    assert (row["answer"], row["samples"], row["stopped"], row["solutions"], row["correct"]) == ("4", 4, "vote", 4, True)
    assert len(server.requests) == 4 * 3  # four solutions of three one-step requests each, and no more


def test_an_adaptive_confidence_outside_its_range_is_a_usage_error(tmp_path, server):
    data, _ = _files(tmp_path, [{"question": "What is 2 + 2?"}])
    assert main(_argv(server, data, tmp_path / "o.jsonl", "--method", "adaptive", "--confidence", "1.0")) == 2
    assert not server.requests


def test_early_rejection_is_calibrated_on_held_out_problems_then_searches(tmp_path, server, capsys):
    # the fake model always answers 4: held-out problems whose gold is 5 give the wrong rollouts
    data, spec = _files(tmp_path, [{"question": "What is 2 + 2?", "gt": "4"}, {"question": "And 2 + 2?", "gt": "4"}])
    held = tmp_path / "held.jsonl"
    held.write_text("".join(json.dumps({"question": f"Held {i}?", "gt": gt}) + "\n" for i, gt in enumerate(["4", "5", "4", "5"])))
    out = tmp_path / "out.jsonl"
    argv = _argv(server, data, out, "--reward", str(spec), "--method", "early_rejection", "--n", "2", "--calibration", str(held))
    assert main(argv) == 0
    rows = _rows(out)
    assert [r["answer"] for r in rows] == ["4", "4"] and all(r["correct"] for r in rows)
    assert "early rejection threshold" in capsys.readouterr().out
    held_prompts = {p for body in server.requests for p in body["prompt"] if p.startswith("Held")}
    assert len(held_prompts) >= 4  # every held-out problem was rolled out (fit on two, threshold on two)


def test_early_rejection_needs_calibration_problems_with_gold_answers(tmp_path, server, capsys):
    data, spec = _files(tmp_path, [{"question": "What is 2 + 2?"}])
    out = tmp_path / "out.jsonl"
    assert main(_argv(server, data, out, "--reward", str(spec), "--method", "early_rejection")) == 2  # no --calibration
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps({"question": "Held?", "gt": "4"}) + "\n" + json.dumps({"question": "No gold"}) + "\n")
    argv = _argv(server, data, out, "--reward", str(spec), "--method", "early_rejection", "--calibration", str(held))
    assert main(argv) == 1
    assert "line 2 has no gold answer" in capsys.readouterr().err


def test_a_prm_method_without_a_reward_is_a_usage_error(tmp_path, server):
    data, _ = _files(tmp_path, [{"question": "What is 2 + 2?"}])
    assert main(_argv(server, data, tmp_path / "o.jsonl", "--method", "beam")) == 2
    assert not server.requests  # refused before any request


def test_an_unknown_model_is_an_error_row_naming_the_status(tmp_path, server):
    data, spec = _files(tmp_path, [{"question": "What is 2 + 2?"}])
    out = tmp_path / "out.jsonl"
    argv = ["select", "search", str(data), "--base-url", server.base_url, "--model", "missing", "-o", str(out), "--reward", str(spec)]
    assert main(argv) == 1
    assert "404" in _rows(out)[0]["error"]


def test_an_unreadable_problem_is_an_error_row_in_its_place_and_the_others_are_searched(tmp_path, server, capsys):
    data, spec = _files(tmp_path, [{"question": ""}, {"question": "What is 2 + 2?", "gt": "4"}])
    data.write_text(data.read_text() + "{not json\n" + json.dumps({"question": "What is 2 + 2?"}) + "\n")
    out = tmp_path / "o.jsonl"
    assert main(_argv(server, data, out, "--reward", str(spec), "--retries", "0")) == 1  # errors: exit 1
    rows = _rows(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4]
    assert "must hold the problem text" in rows[0]["error"] and "malformed JSON" in rows[2]["error"]
    assert rows[0]["answer"] is None and rows[0]["problem"] is None
    assert [r["answer"] for r in (rows[1], rows[3])] == ["4", "4"] and rows[1]["correct"] is True
    printed = capsys.readouterr().out
    assert "problems.jsonl:1" in printed and "2 rows could not be read" in printed
    assert "searched 2 problems" in printed and "0 generation errors" in printed


def test_the_search_defaults_are_declared_once():
    """`rewardlab select search`, `SearchOptions` and the search functions share their budgets."""
    import dataclasses
    import inspect

    from rewardlab.cli.select import search_command
    from rewardlab.select.options import SearchOptions
    from rewardlab.select.search import beam_search, best_first_search, diverse_tree_search

    options = {f.name: f.default for f in dataclasses.fields(SearchOptions)}
    command = {name: p.default.default for name, p in inspect.signature(search_command).parameters.items()
               if name in options}  # fmt: skip
    assert command == {k: v for k, v in options.items() if k in command} and len(command) >= 9
    for fn, names in [(best_first_search, ("expand", "max_tokens")), (beam_search, ("width", "expand")),
                      (diverse_tree_search, ("expand",))]:  # fmt: skip
        assert {n: inspect.signature(fn).parameters[n].default for n in names} == {n: options[n] for n in names}
