"""Reading datasets in and writing scored rows out: JSONL, Parquet, `datasets` saved to disk.

Input rows travel to the workers raw (a JSONL line stays a string), so parsing happens in
parallel and a malformed line becomes an `error/invalid_input` row naming file and line,
instead of stopping the run. Blank JSONL lines are not rows and are skipped.

Output: one row per input row, in order: the input's own fields, then

    reward              total score (null unless ok)
    reward_status       ok | error | skipped
    reward_error_kind   timeout | parse | crash | invalid_input | ...  (null unless error)
    reward_error        the error message
    reward/<component>  each component's score (null when it has none)
    reward_info         what the reward extracted and decided (JSON)
    source_line         1-based line (JSONL) or row (Parquet) of the input
    rewardlab_version, spec_hash   the stamps
"""

from __future__ import annotations

import codecs
import gc
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

import orjson

from rewardlab._lazy import require
from rewardlab.core import JSON, ErrorKind, Reward, RewardResult, Sample, stamp
from rewardlab.core.jsontext import loads, without_lone_surrogates
from rewardlab.errors import InputError

Item = TypeVar("Item")
Parsed = TypeVar("Parsed")

Format = Literal["jsonl", "parquet", "hf"]
#: (1-based line or row number, raw JSONL text, a decoded row, or why the row cannot be read)
RawRow = tuple[int, "str | dict[str, Any] | InputError"]

RESERVED = ("reward", "reward_status", "reward_error_kind", "reward_error", "reward_info", "source_line")
_MAX_RAW = 1000  # characters of a malformed line kept in the output


def detect_format(path: Path) -> Format:
    """The format of a data path, from its suffix (a directory is a saved `datasets` dataset)."""
    if not path.exists():
        raise InputError("file not found", source=str(path))
    if path.is_dir():
        return "hf"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise InputError(f"cannot tell the format from {suffix!r}; use .jsonl or .parquet", source=str(path))


def count_rows(path: Path, fmt: Format | None = None) -> int | None:
    """Number of rows, cheaply (for progress bars); None when unknown."""
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        with path.open("rb") as f:
            return sum(1 for line in f if line.strip())
    if fmt == "parquet":
        return int(_parquet_file(path).metadata.num_rows)
    return None


def iter_raw_rows(path: str | Path, fmt: Format | None = None, *, encoding: str | None = None) -> Iterator[RawRow]:
    """Rows of a data file as `(line, raw)`; JSONL lines are not parsed here.

    `encoding` is the text encoding of a JSONL file; None reads UTF-8, or what a byte-order
    mark at the start says (UTF-8 with BOM, UTF-16, UTF-32). A line whose bytes are not valid
    in the encoding is an `InputError` row naming the line, never decoded with replacement
    characters.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", source=str(path))
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        yield from _iter_jsonl(path, encoding)
    elif fmt == "parquet":
        yield from _iter_parquet(path)
    else:
        yield from _iter_hf(path)


_BOMS = (  # longest first: the UTF-32 LE mark begins with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# bytes that `errors="surrogateescape"` could not decode come out as U+DC80..U+DCFF
_UNDECODABLE = re.compile("[\udc80-\udcff]")


def text_encoding(path: Path, encoding: str | None = None) -> str:
    """The encoding to read `path` with: `encoding` if given (UTF-8 also strips a BOM),
    else the one its byte-order mark names, else UTF-8."""
    if encoding is not None:
        try:
            name = codecs.lookup(encoding).name
        except LookupError:
            raise InputError(f"unknown encoding {encoding!r} (e.g. utf-8, utf-16, latin-1, cp1252)", source=str(path)) from None
        return "utf-8-sig" if name == "utf-8" else name
    with path.open("rb") as f:
        head = f.read(4)
    return next((name for bom, name in _BOMS if head.startswith(bom)), "utf-8")


def _iter_jsonl(path: Path, encoding: str | None = None) -> Iterator[RawRow]:
    used = text_encoding(path, encoding)
    with path.open("r", encoding=used, errors="surrogateescape") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            bad = None if line.isascii() else _UNDECODABLE.search(line)
            if bad is None:
                yield number, line
                continue
            byte = ord(bad.group()) - 0xDC00
            yield number, InputError(
                f"bytes that are not valid {used.removesuffix('-sig')} (0x{byte:02x} at character {bad.start() + 1}); "
                "pass the file's encoding (`--encoding latin-1`, `encoding=` in Python) or fix the line",
                source=str(path), line=number,
            )


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a whole file's rows are built in memory.

    Each batch of new containers (the dicts and lists of parsed rows) triggers a collection, and
    the full ones walk every live object, so as a file's rows pile up, most of the time of
    loading a large file goes to the collector (bench/bench_select_file.py). Parsed rows hold
    no reference cycles: nothing is kept that a collection would have freed. The previous state
    is restored on exit, so pauses nest.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_each(
    items: Iterable[tuple[int, Item]], parse: Callable[[int, Item], Parsed], on_error: Callable[[InputError], None] | None
) -> tuple[list[Parsed], int]:
    """`parse(line, item)` of every numbered item, building the results with the GC paused
    (`gc_paused`). An item whose `parse` raises `InputError` is handed to `on_error` and left
    out, or, without `on_error`, the error is raised. Returns the results and how many were
    left out: the one loop of every reader that keeps going past bad rows."""
    out, bad = [], 0
    with gc_paused():
        for line, item in items:
            try:
                out.append(parse(line, item))
            except InputError as exc:
                if on_error is None:
                    raise
                on_error(exc)
                bad += 1
    return out, bad


def read_objects(path: str | Path, on_error: Callable[[InputError], None] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """`(line, row)` of every row of a JSONL, Parquet or saved-`datasets` file, all in memory.

    For the readers of whole training and evaluation files (pairs, step labels, candidate
    sets). Raises `InputError` naming the file and line for a missing file, bad JSON, a row
    that is not an object, or a file with no rows. With `on_error`, a bad row is handed to it
    and left out instead (the file must still hold one good row).
    """
    source = str(path)
    rows, bad = parse_each(iter_raw_rows(path), lambda line, raw: (line, decode_row(raw, source, line)), on_error)
    if not rows:
        raise InputError(f"no rows; the file needs at least one{f' ({bad} could not be read)' if bad else ''}", source=source)
    return rows


def _parquet_file(path: Path) -> Any:
    """`pyarrow.parquet.ParquetFile(path)`, or an `InputError` saying the file is not Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})", source=str(path)) from exc


def _iter_parquet(path: Path) -> Iterator[RawRow]:
    import pyarrow as pa

    number = 0
    try:
        for batch in _parquet_file(path).iter_batches(batch_size=4096):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"Parquet data cannot be read after row {number} ({exc})", source=str(path)) from exc


def _iter_hf(path: Path) -> Iterator[RawRow]:
    if not any(path.iterdir()):
        raise InputError("an empty folder; give a .jsonl or .parquet file, or a folder written by `datasets`' save_to_disk", source=str(path))
    load_from_disk = require("datasets", needed_by=f"reading the saved dataset {path}").load_from_disk
    try:
        dataset = load_from_disk(str(path))
    except FileNotFoundError as exc:  # what `datasets` raises for a folder it did not write
        raise InputError(f"not a saved `datasets` dataset ({exc}); give a .jsonl or .parquet file", source=str(path)) from exc
    if hasattr(dataset, "keys"):  # a DatasetDict: take the only split, or refuse
        splits = list(dataset.keys())
        if len(splits) != 1:
            raise InputError(f"the dataset has splits {splits}; point at one split's folder", source=str(path))
        dataset = dataset[splits[0]]
    for number, row in enumerate(dataset, start=1):
        yield number, dict(row)


def explode_rows(rows: Iterable[RawRow], fields: Sequence[str], source: str) -> Iterator[RawRow]:
    """One row per element of the list-valued `fields` (all of equal length), e.g. the 8
    sampled responses of a best-of-n file. Each gets `explode_index`; its line stays the input
    line. A row whose fields are missing, not lists, of unequal or zero length becomes one
    `invalid_input` row, so nothing is dropped."""
    for number, raw in rows:
        if isinstance(raw, InputError):
            yield number, raw
            continue
        try:
            row = decode_row(raw, source, number)
        except InputError:
            yield number, raw  # the worker reports the malformed line
            continue
        lists = [row.get(f) for f in fields]
        bad = [f for f, v in zip(fields, lists, strict=True) if not isinstance(v, list)]
        lengths = {len(v) for v in lists if isinstance(v, list)}
        if bad or len(lengths) != 1 or 0 in lengths:
            why = f"--explode fields {bad} are missing or not lists" if bad else f"--explode fields have lengths {sorted(lengths)}; need one non-zero length"
            yield number, InputError(why, source=source, line=number)
            continue
        for index, values in enumerate(zip(*lists, strict=True)):
            item = dict(row)
            item.update(zip(fields, values, strict=True))
            item["explode_index"] = index
            yield number, item


def read_samples(path: str | Path, *, fields: Mapping[str, str] | None = None) -> list[Sample]:
    """Every row of a data file as a `Sample`. Raises InputError on the first bad row."""
    source = str(path)
    samples = []
    with gc_paused():
        for number, raw in iter_raw_rows(path):
            samples.append(Sample.from_dict(decode_row(raw, source, number), fields=fields, source=source, line=number))
    return samples


def dumps(value: Any) -> bytes:
    """JSON bytes of an output row (orjson; stdlib json for what orjson refuses: huge ints, and
    lone surrogates, written as their ``\\ud800`` escapes so the file stays UTF-8)."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value, ensure_ascii=True, default=str).encode()


#: Levels of arrays and objects a data-file row may nest (the row itself is one). A Parquet
#: reader takes 100 schema levels and an array takes two there, so an output row of 48 levels
#: stays readable; pickle (rows cross to the workers) and the JSON writers go deeper. A deeper
#: row is refused when read: it could be scored but not written back.
MAX_ROW_DEPTH = 48


def decode_row(raw: str | dict[str, Any] | InputError, source: str, line: int) -> dict[str, Any]:
    """A raw row as a dict; raises InputError naming file and line (also for a row nested
    deeper than `MAX_ROW_DEPTH`)."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, InputError):
        raise raw
    try:
        row = loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", source=source, line=line) from exc
    except ValueError as exc:
        raise InputError(f"unreadable JSON: {exc}", source=source, line=line) from exc
    if not isinstance(row, dict):
        raise InputError(f"expected a JSON object, got {type(row).__name__}", source=source, line=line)
    if _opening_brackets(raw) > MAX_ROW_DEPTH and (depth := nesting_depth(row)) > MAX_ROW_DEPTH:
        raise InputError(f"the row nests arrays and objects {depth} levels deep; at most {MAX_ROW_DEPTH} "
                         "(flatten the field, or send a deep structure as a string)", source=source, line=line)  # fmt: skip
    return row


def _opening_brackets(raw: str | bytes) -> int:
    """Opening brackets in JSON text, counted at C speed: a bound on its nesting depth, so most
    rows are never walked."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{")
    return raw.count(b"[") + raw.count(b"{")


def nesting_depth(value: Any) -> int:
    """Levels of arrays and objects in a JSON value (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


#: (line, the input fields to keep, the row's Sample or the `invalid_input` result saying why not)
PreparedRow = tuple[int, dict[str, Any], "Sample | RewardResult"]


def prepare_row(raw_row: RawRow, source: str, fields: Mapping[str, str] | None, keep_input: bool) -> PreparedRow:
    """A raw row decoded and checked: its Sample, or an `invalid_input` result naming file and line.

    A row that cannot be read keeps its raw text (`raw_line`, cut to 1,000 characters) in the
    output whatever `keep_input` says, so the bad line can be found and fixed.
    """
    number, raw = raw_row
    try:
        row = decode_row(raw, source, number)
        sample = Sample.from_dict(row, fields=fields, source=source, line=number)
    except InputError as exc:
        base: dict[str, Any] = {"raw_line": raw[:_MAX_RAW]} if isinstance(raw, str) else {}
        return number, base, RewardResult.failure(ErrorKind.INVALID_INPUT, str(exc))
    return number, row if keep_input else {}, sample


def stop_if_strict(kind: str | None, message: str | None) -> None:
    """`--strict` (`ScoreFileOptions.strict`): stop at the first row that could not be read,
    i.e. whose result is `error/invalid_input`; the one check of every file path.

    Raises:
        InputError: with the row's message (it names the file and line).
    """
    if kind == ErrorKind.INVALID_INPUT:
        raise InputError(f"{message} (--strict stops at the first bad row)")


def score_prepared(
    items: Sequence[Sample | RewardResult], score_batch: Callable[[list[Sample]], Sequence[RewardResult]]
) -> list[RewardResult]:
    """One result per item, in order: the Samples scored in one `score_batch` call, the results
    already there (rows that could not be read) kept in their place."""
    valid = [item for item in items if isinstance(item, Sample)]
    scored = iter(score_batch(valid) if valid else ())
    return [next(scored) if isinstance(item, Sample) else item for item in items]


# What crosses the process boundary for every row is made of plain tuples and plain strings:
# pickling NamedTuples and enum members costs ~15 us a row both ways, plain tuples ~2.5 us.
# Readers unpack them whole into names (`RunSummary.add`), never index them.
#
# ComponentStat = (name, status, score, error_kind)
# RowStats      = (line, status, score, error_kind, error, components, errors_as_zero, errors_skipped, objectives)
# ScoredRow     = (row dict or None, JSON line bytes or None, RowStats)
ComponentStat = tuple[str, str, "float | None", "str | None"]
ObjectiveStat = tuple[str, "float | None"]  # an objective's value, None where it was not computed
RowStats = tuple[
    int, str, "float | None", "str | None", "str | None", tuple[ComponentStat, ...], tuple[str, ...], tuple[str, ...],
    tuple[ObjectiveStat, ...],
]
ScoredRow = tuple["dict[str, Any] | None", "bytes | None", RowStats]


def scored_row(row: Mapping[str, Any], number: int, result: RewardResult, version: str, spec_hash: str, serialize: bool) -> ScoredRow:
    """A scored file row as it is written: the output row (`flatten`) and its stats, with its
    JSON line instead of the row when `serialize`."""
    flat, stats = flatten(row, number, result, version, spec_hash)
    if serialize:
        return (None, dumps(flat), stats)
    return (flat, None, stats)


@dataclass(frozen=True)
class RowFormat:
    """How a file's raw rows are read (`prepare`: decoded, checked, made a Sample) and its scored
    rows written (`output`: flattened, stamped, and with `serialize` already its JSON line, so
    the writer only writes bytes)."""

    source: str
    spec_hash: str
    version: str
    fields: Mapping[str, str] | None = None
    keep_input: bool = True
    serialize: bool = True

    def prepare(self, raw_row: RawRow) -> PreparedRow:
        return prepare_row(raw_row, self.source, self.fields, self.keep_input)

    def output(self, row: Mapping[str, Any], number: int, result: RewardResult) -> ScoredRow:
        return scored_row(row, number, result, self.version, self.spec_hash, self.serialize)


@dataclass(frozen=True)
class RowScorer:
    """The job the workers run: raw row -> scored output row, in `rows`' format (decode, Sample,
    score, flatten). Serialized in the worker, several workers outrun a single-process loop."""

    reward: Reward
    rows: RowFormat

    def __call__(self, raw_row: RawRow) -> ScoredRow:
        number, row, item = self.rows.prepare(raw_row)
        return self.rows.output(row, number, self.reward.score(item) if isinstance(item, Sample) else item)

    def on_error(self, raw_row: RawRow, kind: ErrorKind, message: str) -> ScoredRow:
        """Output for an item whose worker timed out or died."""
        number, raw = raw_row
        source = self.rows.source
        try:
            row = decode_row(raw, source, number) if self.rows.keep_input else {}
        except InputError:
            row = {}
        return self.rows.output(row, number, RewardResult.failure(kind, f"{source}:{number}: {message}"))


def flatten(row: Mapping[str, Any], number: int, result: RewardResult, version: str, spec_hash: str) -> tuple[dict[str, Any], RowStats]:
    """The output row (input fields, total, status, error, one column per component, one per
    objective when the spec declares them, info, stamps) and its stats for the summary, in one pass (this runs once per row).

    Statuses and kinds are StrEnum members; `_value_` is their plain string (cheap to pickle).
    """
    out = dict(row)
    error = result.error
    kind = error.kind._value_ if error else None
    status = result.status._value_
    out["reward"] = result.score
    out["reward_status"] = status
    out["reward_error_kind"] = kind
    out["reward_error"] = error.message if error else None
    info: dict[str, JSON] = dict(result.info)
    parts = []
    for name, part in result.components.items():
        out["reward/" + name] = part.score
        part_status = part.status._value_
        entry: dict[str, JSON] = {"status": part_status}
        part_error = part.error
        part_kind = part_error.kind._value_ if part_error else None
        if part_error is not None:
            entry["error"] = part_error.to_dict()
        if part.info:
            entry.update(part.info)
        info[name] = entry
        parts.append((name, part_status, part.score, part_kind))
    vector: tuple[ObjectiveStat, ...] = ()
    if result.objectives is not None:  # a spec's reward vector: one column per objective
        for name, value in result.objectives.items():
            out["objective/" + name] = value
        vector = tuple(result.objectives.items())
    out["reward_info"] = info
    out["source_line"] = number
    out.update(stamp(spec_hash, version).to_dict())
    stats: RowStats = (
        number,
        status,
        result.score,
        kind,
        error.message if error else None,
        tuple(parts),
        tuple(result.info.get("errors_as_zero", ())),
        tuple(result.info.get("errors_skipped", ())),
        vector,
    )
    return out, stats


class RowWriter:
    """Writes output rows as JSONL or Parquet (chosen by the output's suffix)."""

    def __init__(self, path: str | Path, *, batch_rows: int = 8192):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError("is a folder; name the output file in it (e.g. `-o DIR/scored.jsonl`)", source=str(path))
        suffix = self.path.suffix.lower()
        if suffix not in (".jsonl", ".json", ".ndjson", ".parquet", ".pq"):
            raise InputError("output must end in .jsonl or .parquet", source=str(path))
        self.parquet = suffix in (".parquet", ".pq")
        self._file: IO[bytes] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Parquet opens its file at the first flush: open it now, so an unwritable place
            # fails before any row is scored
            self._file = self.path.open("ab" if self.parquet else "wb")
        except OSError as exc:
            raise InputError(f"cannot write the output here: {exc.strerror or exc}", source=str(path)) from exc
        if self.parquet:
            self._file.close()
            self._file = None
        self._buffer: list[dict[str, Any]] = []
        self._batch_rows = batch_rows
        self._writer: Any = None
        self._schema: Any = None
        self.rows = 0

    def write(self, row: dict[str, Any] | ScoredRow) -> None:
        """Write a row dict, or a worker's `ScoredRow` (its JSON line when it has one)."""
        self.rows += 1
        if isinstance(row, tuple):  # a ScoredRow
            flat, text, _ = row
            if text is not None and self._file is not None:
                self._file.write(text + b"\n")
                return
            row = flat if flat is not None else json.loads(text or b"{}")
        if self._file is not None:
            self._file.write(dumps(row) + b"\n")
            return
        self._buffer.append(row)
        if len(self._buffer) >= self._batch_rows:
            self._flush_parquet()

    def _flush_parquet(self) -> None:

        if not self._buffer:
            return
        rows = [{**r, "reward_info": json.dumps(r.get("reward_info"), default=str)} for r in self._buffer]
        try:
            self._write_table(rows)
        except UnicodeEncodeError:  # a lone surrogate, which UTF-8 has no code for
            self._write_table(_without_surrogates(rows, str(self.path)))
        self._buffer.clear()

    def _write_table(self, rows: list[dict[str, Any]]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._schema is None:
            columns: dict[str, None] = {}
            for r in rows:
                columns.update(dict.fromkeys(r))
            table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
            self._schema = _settle_null_types(table.schema)
            table = table.cast(self._schema)
            self._writer = pq.ParquetWriter(self.path, self._schema)
        else:
            names = self._schema.names
            table = pa.Table.from_pylist([{c: r.get(c) for c in names} for r in rows], schema=self._schema)
        self._writer.write_table(table)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        else:
            self._flush_parquet()
            if self._writer is not None:
                self._writer.close()
            elif self.rows == 0:
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.table({"reward": pa.array([], pa.float64())}), self.path)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _without_surrogates(rows: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """`rows` with each lone surrogate in their strings replaced by U+FFFD, and a warning:
    Parquet strings are UTF-8, which has no code for one (JSONL keeps its ``\\ud800``
    escape). The scores were computed on the text as given."""
    cleaned = [without_lone_surrogates(r) for r in rows]
    altered = sum(c != r for c, r in zip(cleaned, rows, strict=True))
    warnings.warn(
        f"{path}: {altered} row(s) hold a lone UTF-16 surrogate, written to Parquet as U+FFFD "
        "(Parquet strings are UTF-8; a .jsonl output keeps the text as given)",
        RuntimeWarning,
        stacklevel=3,
    )
    return cleaned


def _settle_null_types(schema: Any) -> Any:
    """Give columns that were all-null in the first batch a real type (scores are floats)."""
    import pyarrow as pa

    fields = []
    for f in schema:
        if pa.types.is_null(f.type):
            numeric = f.name == "reward" or f.name.startswith("reward/")
            f = pa.field(f.name, pa.float64() if numeric else pa.string())
        fields.append(f)
    return pa.schema(fields)
