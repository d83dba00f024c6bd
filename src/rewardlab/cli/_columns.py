"""The column options of candidate files, one definition for `rewardlab eval` and `rewardlab
select`: the same names (`--labels`, old spelling `--correct`), the same defaults and the same
help, all taken from `CandidateColumns`. ``''`` turns an optional column off."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardlab.cli._options import Flag, attribute_docs, settings_values
from rewardlab.runner.candidate_rows import CandidateColumns

__all__ = ["EVAL_COLUMNS", "SELECT_COLUMNS", "candidate_columns"]

_DOCS = attribute_docs(CandidateColumns)


def _flag(field: str, *decls: str) -> Flag:
    text = _DOCS[field].replace("`", "")
    return Flag(field, decls, help=f"{text[:1].upper()}{text[1:].rstrip('.')} ('' for none).")


# `--correct` was `rewardlab select`'s name for the labels column (docs/select.md): still accepted
_LABELS = _flag("labels", "--labels", "--correct")
EVAL_COLUMNS = (_flag("responses"), _flag("reference"), _LABELS, _flag("scores"), _flag("answers"), _flag("prompt"))
SELECT_COLUMNS = (*EVAL_COLUMNS, _flag("tokens"))


def candidate_columns(flags: tuple[Flag, ...], values: Mapping[str, Any]) -> CandidateColumns:
    """The `CandidateColumns` of a command's column options (``''`` is None: no such column)."""
    return CandidateColumns(**{field: value or None for field, value in settings_values(flags, values).items()})
