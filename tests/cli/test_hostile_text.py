"""Text that UTF-8 has no code for, through the commands a user runs.

- A lone UTF-16 surrogate in a data row (JSON's ``"\\ud800"`` escape: a text cut inside a
  surrogate pair) reaches the reports: the HTML page shows U+FFFD, the JSON keeps the escape.
- A file whose bytes are not UTF-8 (a spec, a reward machine, a response, reward code) is an
  error naming the file and the first bad byte, never a traceback.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from rewardlab.cli.main import main
from serve._rewards import EXACT_SPEC as SPEC


def test_an_audit_of_rows_with_lone_surrogates_writes_both_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "spec.toml").write_text(SPEC)
    rows = [{"prompt": "p \ud83d" if i == 3 else "p", "response": "4 \udc00" if i % 5 == 0 else str(i % 3),
             "reference": "4", "meta": {"label": i % 2 == 0, "level": "L\ud800" if i < 10 else "L2"}}
            for i in range(30)]  # fmt: skip
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))  # ensure_ascii: the escapes
    out = tmp_path / "out"
    argv = ["audit", str(tmp_path / "spec.toml"), "-d", str(data), "-o", str(out), "--label-field", "label", "--group-by", "level"]
    assert main(argv) == 0, capsys.readouterr().err
    page = (out / "report.html").read_bytes().decode("utf-8")
    assert "\ufffd" in page
    report = json.loads((out / "report.json").read_bytes().decode("utf-8"))
    assert "L\ud800" in json.dumps(report, ensure_ascii=False)  # the group's name, as given


NOT_UTF8 = b"caf\xe9"  # Latin-1


@pytest.mark.parametrize(
    ("name", "content", "argv", "where"),
    [
        ("spec.toml", b'[reward]\nname = "' + NOT_UTF8 + b'"\n', ["check", "{file}"], "byte 0xe9 at position 20"),
        ("spec.toml", b'[reward]\nname = "' + NOT_UTF8 + b'"\n', ["score", "{file}", "{data}", "-o", "{out}"], "byte 0xe9"),
        ("machine.toml", b"# " + NOT_UTF8 + b"\n", ["rm", "check", "{file}"], "byte 0xe9 at position 5"),
        ("response.txt", b"\\boxed{" + NOT_UTF8 + b"}", ["math", "extract", "{file}"], "byte 0xe9 at position 10"),
        ("reward.py", b"# " + NOT_UTF8 + b"\n", ["author", "check", "{file}", "--task", "office/coffee"], "byte 0xe9"),
    ],
)
def test_a_file_that_is_not_utf8_is_an_error_naming_the_file_and_the_byte(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], name: str, content: bytes, argv: list[str], where: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    data = tmp_path / "d.jsonl"
    data.write_text('{"response": "4", "reference": "4"}\n')
    filled = [a.format(file=path, data=data, out=tmp_path / "o.jsonl") for a in argv]
    assert main(filled) == 1
    printed = capfd.readouterr()
    said = printed.out + printed.err  # `check` lists problems on stdout, the others say errors on stderr
    assert "not valid UTF-8" in said and where in said and name in said
    assert "Traceback" not in said


def test_a_response_on_stdin_that_is_not_utf8_is_an_error(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\\boxed{" + NOT_UTF8 + b"}")))
    assert main(["math", "extract"]) == 1
    assert "<stdin>: not valid UTF-8 (byte 0xe9 at position 10)" in capfd.readouterr().err
