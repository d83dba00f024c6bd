"""`Sample`: one thing to be rewarded — a prompt, a response, and what to check it against."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import orjson

from rewardlab.core.trajectory import (
    Trajectory,
    is_trajectory,
    messages_from_text,
    parse_trajectory,
)
from rewardlab.errors import InputError, SampleFieldError

# A JSON value, as it appears in datasets and in `info`.
JSON: TypeAlias = Any
# Chat format: [{"role": "user", "content": "..."}, ...]
Messages: TypeAlias = Sequence[Mapping[str, Any]]
Text: TypeAlias = str | Messages

_FIELDS = ("prompt", "response", "reference", "steps", "meta", "id", "group")
_NO_META: Any = object()  # `from_dict`: the row has no meta column


def canonical_json(value: JSON) -> str:
    """JSON with sorted keys and no spaces: equal values give equal strings (for hashing)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _hashed_bytes(text: str) -> bytes:
    # A Python string may hold a lone UTF-16 surrogate (JSON's "\ud800" escape reads as one,
    # e.g. from a response cut inside a surrogate pair). Strict UTF-8 refuses it; surrogatepass
    # gives it bytes of its own and leaves every other string's bytes as they were.
    return text.encode("utf-8", "surrogatepass")


def content_hash(value: JSON, *, size: int = 16) -> str:
    """Short stable hash of a JSON value (blake2b, `size` bytes, hex)."""
    return hashlib.blake2b(_hashed_bytes(canonical_json(value)), digest_size=size).hexdigest()


def sample_digest(sample: Sample) -> bytes:
    """16-byte hash of what a reward can see of `sample` (prompt, response, reference, steps,
    meta; never a given `id` or `group`): the result cache's key, and `Sample.content_key` in hex.

    orjson with sorted keys is the fast path (a server hashes every sample it is sent); values
    orjson refuses fall back to `canonical_json`. The bytes hashed are those the result cache
    was written with, so caches stay readable; they equal `canonical_json`'s except for floats
    with a negative exponent (``1e-07``) and NaN/infinity. Hashed once per sample, on first use.
    """
    cached: bytes | None = sample.__dict__.get("_digest")
    if cached is None:
        payload = [sample.prompt, sample.response, sample.reference, sample.steps, sample.meta]
        try:
            data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        except TypeError:
            data = _hashed_bytes(canonical_json(payload))
        cached = hashlib.blake2b(data, digest_size=16).digest()
        sample.__dict__["_digest"] = cached
    return cached


def is_text(value: object) -> bool:
    """A string, or a list of chat messages (mappings with a `content`): a text field's shape."""
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(m, Mapping) and "content" in m for m in value))


def text_of(value: Text | None) -> str:
    """Plain text of a string or of a chat message list (the last message's content)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not value:
        return ""
    content = value[-1].get("content", "")
    if isinstance(content, list):  # multi-part content: keep the text parts
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return str(content)


class _IdField:
    """`Sample.id` as a descriptor-typed dataclass field (Python docs, `dataclasses`,
    "Descriptor-typed fields"): `Sample(id=...)`, `replace`, equality and repr treat it as the
    field it is; the value stored is the id the caller gave, and reading an empty one gives
    `content_key`, hashed on first read (a cheap reward should not pay for a hash nobody reads).
    """

    def __get__(self, sample: Sample | None, owner: type[Sample] | None = None) -> str:
        if sample is None:
            return ""  # the field's default, asked for by the dataclass machinery
        return sample.given_id or sample.content_key

    def __set__(self, sample: Sample, value: str) -> None:
        sample.__dict__["given_id"] = value or ""


@dataclass(frozen=True, eq=True)
class Sample:
    """One response to be rewarded.

    Attributes:
        prompt: the prompt, as a string or as chat messages.
        response: the model's response, as a string or as chat messages.
        reference: what the response is checked against (gold answer, tests, rubric...);
            any JSON value, its meaning is the reward's.
        steps: optional segmentation of the response into reasoning steps (process rewards).
        meta: any other columns of the row (constraints, data source...).
        id: stable content hash of the fields above unless given.
        group: prompt-group id, for group transforms (GRPO groups); not part of `id`.
    """

    prompt: Text = ""
    response: Text = ""
    reference: JSON = None
    steps: tuple[str, ...] | None = None
    meta: Mapping[str, JSON] = field(default_factory=dict)
    id: _IdField = _IdField()  # a descriptor-typed field, see `_IdField`
    group: str | None = None

    def __post_init__(self) -> None:
        if self.steps is not None and not isinstance(self.steps, tuple):
            object.__setattr__(self, "steps", tuple(self.steps))

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def content_key(self) -> str:
        """Hash of prompt, response, reference, steps and meta (never of a given `id`).

        This, not `id`, is what caches key on: a caller-chosen id may be reused for a different
        response, the content cannot. It is `sample_digest` in hex, computed on first use
        (hashing costs microseconds that a cheap reward should not pay when nobody asks).
        """
        return sample_digest(self).hex()

    @property
    def given_id(self) -> str:
        """The id the caller gave, ``""`` if none (reading it never hashes the content)."""
        given: str = self.__dict__.get("given_id", "")
        return given

    @property
    def trajectory(self) -> Trajectory:
        """The response as an agent trajectory (`core.trajectory`), with the row's ``state`` column.

        Read once: `from_dict` reads and checks it for rows in an agent shape; other samples
        (a plain string or messages without tool calls) are read on first use.

        Raises:
            SampleFieldError: the response or the state breaks the trajectory shapes.
        """
        cached: Trajectory | None = self.__dict__.get("_trajectory")
        if cached is None:
            response = messages_from_text(self.response) if isinstance(self.response, str) else self.response
            cached = parse_trajectory(list(response), state=self.meta.get("state"))
            self.__dict__["_trajectory"] = cached
        return cached

    @property
    def response_text(self) -> str:
        """The response as plain text (last message content for chat responses)."""
        return text_of(self.response)

    @property
    def prompt_text(self) -> str:
        """The prompt as plain text (last message content for chat prompts)."""
        return text_of(self.prompt)

    def to_dict(self) -> dict[str, JSON]:
        """Plain dict with the same field names (what `from_dict` reads)."""
        out: dict[str, JSON] = {
            "prompt": self.prompt,
            "response": self.response,
            "reference": self.reference,
            "meta": dict(self.meta),
            "id": self.id,
        }
        if self.steps is not None:
            out["steps"] = list(self.steps)
        if self.group is not None:
            out["group"] = self.group
        return out

    @classmethod
    def from_dict(cls, row: Mapping[str, JSON], *, fields: Mapping[str, str] | None = None,
                  source: str | None = None, line: int | None = None) -> Sample:  # fmt: skip
        """Build a Sample from a dataset row or a request's sample: the one place rows are checked.

        The rules (the same for data files, `rewardlab.score` and the reward server):

        - the row is an object (mapping);
        - ``response`` is required: a string, or a list of chat messages (objects, each with a
          ``"content"`` key); ``prompt`` is the same, optional (default ``""``); a response in
          an agent shape (tool calls, tool results, OpenRLHF steps) is read by
          `core.trajectory.parse_trajectory` with the ``state`` column, kept in normal form;
        - ``reference`` is any JSON value (default ``None``);
        - ``steps`` is ``None`` or a list of strings;
        - ``meta`` is an object; every column that is not a Sample field joins it (a column
          wins over a ``meta`` key of the same name);
        - ``id`` and ``group`` are ``None``, a string, or an integer (turned into its decimal
          string: datasets number their rows); a bool, float or anything else is refused.
          An absent or empty ``id`` means the content hash.

        Args:
            row: the row; keys other than the mapped fields go to `meta`.
            fields: maps Sample field names to the row's column names, e.g.
                `{"response": "completion", "reference": "answer"}`.
            source: the file or stream the row came from, for error messages.
            line: the row's line number in `source`, for error messages.

        Raises:
            InputError: the row is not an object.
            SampleFieldError: a field breaks the rules above (`field` names the column).
        """
        if not isinstance(row, Mapping):
            raise InputError(f"expected a JSON object, got {type(row).__name__}", source=source, line=line)
        mapping, columns = _columns(tuple(sorted(fields.items()))) if fields else _SAME_NAMES
        where = (source, line)
        values, meta = _split_row(row, columns, mapping, where)
        trajectory = None  # plain strings, the common row, need no check; messages or a trajectory do
        if type(values.get("prompt", "")) is not str or type(values.get("response")) is not str:
            trajectory = _read_texts(values, meta, mapping, where)
        steps = values.get("steps")
        if steps is not None:
            steps = _steps(steps, mapping["steps"], where)
        id_, group = values.get("id"), values.get("group")
        if id_ is not None and type(id_) is not str:
            id_ = _label(id_, mapping["id"], where)
        if group is not None and type(group) is not str:
            group = _label(group, mapping["group"], where)
        sample = cls(
            prompt=values.get("prompt", ""), response=values["response"], reference=values.get("reference"),
            steps=steps, meta=meta, id=id_ or "", group=group,
        )  # fmt: skip
        if trajectory is not None:
            sample.__dict__["_trajectory"] = trajectory
        return sample


@functools.lru_cache(maxsize=64)
def _columns(fields: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], dict[str, str]]:
    """(field -> column, column -> field) for a field mapping; cached, rows share it."""
    mapping = {name: name for name in _FIELDS}
    mapping.update(dict(fields))
    return mapping, {mapping[name]: name for name in _FIELDS}


_SAME_NAMES = _columns(())  # no mapping, the common case: rows skip the cache lookup


def _split_row(
    row: Mapping[str, JSON], columns: Mapping[str, str], mapping: Mapping[str, str], where: tuple[str | None, int | None]
) -> tuple[dict[str, JSON], Mapping[str, JSON]]:
    """(the row's Sample fields by field name, its meta): meta is the ``meta`` column, which
    must be an object, with every column that is not a Sample field over it."""
    values: dict[str, JSON] = {}
    extra: dict[str, JSON] = {}
    for key, value in row.items():
        target = columns.get(key)
        if target is None:
            extra[key] = value
        else:
            values[target] = value
    given = values.get("meta", _NO_META)
    if given is _NO_META:
        return values, extra
    if not isinstance(given, Mapping):
        raise _field_error(f"field {mapping['meta']!r} must be an object", mapping["meta"], where)
    return values, ({**given, **extra} if extra else given)


def _read_texts(
    values: dict[str, JSON], meta: Mapping[str, JSON], mapping: Mapping[str, str], where: tuple[str | None, int | None]
) -> Trajectory | None:
    """Check a prompt and a response that are not both strings. A response in an agent shape
    (tool calls and results) is read and checked once, with the ``state`` column: its trajectory
    is returned and its messages, in normal form, replace the response in `values`."""
    if type(values.get("prompt", "")) is not str:  # chat messages, or a wrong type
        _check_text(values, "prompt", mapping, where)
    response = values.get("response")
    if type(response) is str:
        return None
    if is_trajectory(response):
        trajectory = parse_trajectory(response, state=meta.get("state"), field=mapping["response"], source=where[0], line=where[1])
        values["response"] = list(trajectory.messages)
        return trajectory
    _check_text(values, "response", mapping, where, required=True)
    return None


def _steps(steps: JSON, column: str, where: tuple[str | None, int | None]) -> tuple[str, ...]:
    """A ``steps`` value (not None) as a tuple of strings."""
    if not (isinstance(steps, list | tuple) and all(isinstance(s, str) for s in steps)):
        raise _field_error(f"field {column!r} must be a list of strings", column, where)
    return tuple(steps)


def _field_error(message: str, column: str, where: tuple[str | None, int | None]) -> SampleFieldError:
    return SampleFieldError(message, field=column, source=where[0], line=where[1])


def _check_text(
    values: dict[str, JSON], name: str, mapping: Mapping[str, str], where: tuple[str | None, int | None], *, required: bool = False
) -> None:
    column = mapping[name]
    if name not in values:
        if required:
            hint = (
                f"; if another column holds it, map it: fields={{{name!r}: 'completion'}} in Python, "
                f"--{name}-field COLUMN on the command line"
                if column == name else ""
            )
            raise _field_error(f"missing field {column!r}{hint}", column, where)
        return
    if is_text(values[name]):
        return
    value = values[name]
    raise _field_error(
        f"field {column!r} must be a string or a list of chat messages "
        f"({{'role': ..., 'content': ...}}), got {type(value).__name__}",
        column,
        where,
    )


def _label(value: JSON, column: str, where: tuple[str | None, int | None]) -> str:
    """A non-string `id` or `group` as a string: an integer (not a bool) becomes its digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _field_error(f"field {column!r} must be a string or an integer, got {type(value).__name__}", column, where)
