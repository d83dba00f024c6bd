"""The commonest mistakes of a first hour get a message and a non-zero exit code, never a
traceback (an exception escaping `main` fails these tests); and the one-line paths: a reward
name where a spec goes, `rewardlab init`, field mapping in Python, `--max-error-rate`, encodings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rewardlab
from rewardlab.cli.main import main
from rewardlab.errors import InputError, SpecError

SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text('{"response": "Paris", "reference": "paris"}\n{"response": "Rome", "reference": "paris"}\n')
    return path


def _fails(argv: list[str], capsys, *needles: str, code: int = 1) -> str:
    assert main([*argv, "--no-progress"] if argv[0] == "score" else argv) == code
    err = capsys.readouterr().err
    for needle in needles:
        assert needle in err, err
    return err


def test_missing_input_file(spec, tmp_path, capsys):
    _fails(["score", str(spec), str(tmp_path / "missing.jsonl")], capsys, "missing.jsonl", "file not found")


def test_corrupt_parquet(spec, tmp_path, capsys):
    bad = tmp_path / "rows.parquet"
    bad.write_bytes(b"PAR1 this is not parquet at all PAR1")
    _fails(["score", str(spec), str(bad)], capsys, "rows.parquet", "not a readable Parquet file")


def test_output_that_is_a_folder(spec, data, tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    _fails(["score", str(spec), str(data), "-o", str(folder)], capsys, "is a folder", "DIR/scored.jsonl")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_output_that_cannot_be_written(spec, data, capsys, suffix):
    # /proc takes no new files, even from root
    _fails(["score", str(spec), str(data), "-o", f"/proc/rewardlab-test{suffix}"], capsys, "cannot write the output here")


def test_empty_datasets_folder(spec, tmp_path, capsys):
    folder = tmp_path / "dataset"
    folder.mkdir()
    _fails(["score", str(spec), str(folder)], capsys, "an empty folder")


def test_a_folder_datasets_did_not_write(spec, tmp_path, capsys):
    pytest.importorskip("datasets")
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    _fails(["score", str(spec), str(folder)], capsys, "not a saved `datasets` dataset")


def test_an_empty_input_file_fails_score_and_eval_alike(spec, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    _fails(["score", str(spec), str(empty)], capsys, "empty.jsonl", "no rows")
    _fails(["eval", str(spec), "--data", str(empty), "-o", str(tmp_path / "eval")], capsys, "empty.jsonl", "no rows")


def test_a_missing_spec_file(data, tmp_path, capsys):
    _fails(["score", str(tmp_path / "nope.toml"), str(data)], capsys, "spec file not found")


def test_strict_is_a_flag_and_help_shows_no_value_for_it(spec, data, tmp_path, capsys):
    assert main(["score", "--help"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("--strict"))
    assert "<bool>" not in line
    assert main(["score", str(spec), str(data), "--strict", "-o", str(tmp_path / "o.jsonl"), "--no-progress"]) == 0


def test_max_error_rate(spec, tmp_path, capsys):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"response": "a", "reference": "a"}\n{"response": "b", "reference": "a"}\nnot json\n')
    out = tmp_path / "out.jsonl"
    err = _fails(["score", str(spec), str(mixed), "-o", str(out), "--max-error-rate", "0.2"], capsys, "1 of 3 rows are errors")
    assert "--max-error-rate 0.2" in err
    assert len(out.read_text().splitlines()) == 3  # the rows are written all the same
    assert main(["score", str(spec), str(mixed), "-o", str(out), "--max-error-rate", "0.5", "--no-progress"]) == 0
    assert main(["score", str(spec), str(mixed), "-o", str(out), "--max-error-rate", "1.5", "--no-progress"]) == 2


def _scored(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("workers", ["0", "1"])
def test_encodings(spec, tmp_path, workers):
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"response": "a", "reference": "a"}\n{"response": "caf\xe9", "reference": "a"}\n')
    out = tmp_path / "out.jsonl"
    assert main(["score", str(spec), str(bom), "-o", str(out), "-w", workers, "--no-progress"]) == 0
    first, second = _scored(out)
    assert first["reward_status"] == "ok" and first["reward"] == 1.0  # the BOM is not part of the JSON
    assert second["reward_error_kind"] == "invalid_input"
    assert second["reward_error"].startswith(f"{bom}:2: bytes that are not valid utf-8 (0xe9")
    assert "--encoding" in second["reward_error"]
    assert main(["score", str(spec), str(bom), "-o", str(out), "-w", workers, "--encoding", "latin-1", "--no-progress"]) == 0
    assert [row["reward_status"] for row in _scored(out)] == ["error", "ok"]  # latin-1 reads the BOM as text
    wide = tmp_path / "utf16.jsonl"
    wide.write_text('{"response": "café", "reference": "café"}\n', encoding="utf-16")  # with its BOM
    assert main(["score", str(spec), str(wide), "-o", str(out), "-w", workers, "--no-progress"]) == 0
    assert _scored(out)[0]["reward"] == 1.0


def test_an_unknown_encoding(spec, data, capsys):
    _fails(["score", str(spec), str(data), "--encoding", "klingon"], capsys, "unknown encoding 'klingon'")


def test_a_reward_name_is_a_spec_everywhere(data, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["score", "text.exact", str(data), "-o", str(out), "--no-progress"]) == 0
    assert [row["reward"] for row in _scored(out)] == [1.0, 0.0]
    assert main(["check", "text.exact"]) == 0
    rows = [{"completion": "Paris", "answer": "paris"}]
    mapping = {"response": "completion", "reference": "answer"}
    assert [r.score for r in rewardlab.score("text.exact", rows, fields=mapping)] == [1.0]
    unmapped = rewardlab.score("text.exact", rows)[0]
    assert unmapped.error is not None and "fields={'response': 'completion'}" in unmapped.error.message
    from rewardlab.integrations.trl import as_trl_reward

    assert as_trl_reward("text.exact")(prompts=["q", "q"], completions=["Paris", "Rome"], solution=["paris"] * 2) == [1.0, 0.0]
    from rewardlab.serve.launch import load_rewards

    # what `rewardlab serve text.exact exact=text.exact` serves
    assert sorted(load_rewards(["text.exact", "exact=text.exact"])) == ["exact", "text.exact"]


def test_a_file_named_like_a_reward_is_read_as_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("text.exact").write_text(SPEC.replace('name = "exact"\n[[', 'name = "from-file"\n[[', 1))
    assert rewardlab.build("text.exact").name == "from-file"


def test_init_writes_a_spec_that_checks(tmp_path, capsys):
    path = tmp_path / "reward.toml"
    assert main(["init", str(path), "--use", "text.exact", "--use", "format.tags"]) == 0
    text = path.read_text()
    assert "# params.case_sensitive = false" in text
    assert main(["check", str(path)]) == 0
    uncommented = text.replace("# params.case_sensitive = false", "params.case_sensitive = true")
    assert rewardlab.build(uncommented).components[0].reward.params["case_sensitive"] is True
    _fails(["init", str(path)], capsys, "exists already", "--force")
    assert main(["init", str(path), "--force"]) == 0  # the demo's maths spec
    assert 'use = "math.answer"' in path.read_text()
    _fails(["init", str(tmp_path / "x.toml"), "--use", "text.exactt"], capsys, "did you mean")


def test_list_is_short_and_keeps_brackets(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "geometry.interval_iou  [0, 1]" in out and "`rewardlab list NAME`" in out
    assert "case_sensitive" not in out  # parameters only in `list NAME`
    assert main(["list", "geometry.interval_iou"]) == 0
    detail = capsys.readouterr().out
    assert "`[start, end]`" in detail  # rich markup used to eat it
    assert "threshold: float | None = None" in detail
    assert main(["list", "no-such-thing"]) == 1


def test_input_errors_survive_a_worker_process():
    import pickle

    error = pickle.loads(pickle.dumps(InputError("bad bytes", source="data.jsonl", line=3)))
    assert str(error) == "data.jsonl:3: bad bytes" and (error.source, error.line, error.reason) == ("data.jsonl", 3, "bad bytes")


def test_advantages_of_an_unscored_file(data, capsys):
    _fails(["advantages", str(data)], capsys, "no row has an ok score in column 'reward'", "rewardlab score")


@pytest.mark.parametrize("command", [["eval", "--data"], ["select", "curves"]])
def test_report_folders_that_cannot_be_made(tmp_path, capsys, command):
    candidates = tmp_path / "cands.jsonl"
    rows = [{"question": "p1", "gt": "1", "code": ["\\boxed{1}", "\\boxed{2}"], "pred": ["1", "2"], "score": [True, False]}]
    candidates.write_text("".join(json.dumps(r) + "\n" for r in rows))
    a_file = tmp_path / "taken"
    a_file.write_text("")
    for out in ("/proc/rewardlab-report", str(a_file)):
        _fails([*command, str(candidates), "-o", out], capsys, out)


def test_list_survives_a_broken_registration(capsys, monkeypatch):
    from rewardlab.core import registry

    monkeypatch.setitem(registry._lazy, "acme.broken", "rewardlab_no_such_package.rewards:Broken")
    assert main(["list", "acme."]) == 0
    out = capsys.readouterr().out
    assert "acme.broken  ?  (unavailable)" in out and "cannot be imported" in out
    assert main(["list", "text.exact"]) == 0


def test_a_misspelled_reward_name_is_not_read_as_toml(tmp_path, capsys):
    with pytest.raises(SpecError, match=r"not a registered reward name \(did you mean 'math.answer'\?\)"):
        rewardlab.build("math.anwser")
    _fails(["score", "math.anwser", str(tmp_path / "x.jsonl")], capsys, "did you mean 'math.answer'?")
    odd = tmp_path / "odd[1]=.toml"
    odd.write_text(SPEC)
    assert rewardlab.build(str(odd)).name == "exact"  # a .toml path, whatever its characters
    assert rewardlab.build('[reward]\nname = "x"\n[[reward.components]]\nname = "a"\nuse = "text.exact"').name == "x"
