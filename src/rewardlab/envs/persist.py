"""Save and load learned rewards and bonuses as `.npz` files (no pickle: safe to load).

One file holds a JSON header (what it is and how it was configured) and named arrays (weights,
counts, every torch module's state dict). `load_state(path, kind)` checks the kind before
anything is built, so loading an RND file into a count bonus is a clear error, not garbage.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rewardlab.errors import InputError

__all__ = ["load_state", "module_arrays", "save_state", "set_module_arrays"]

_HEADER = "__rewardlab__"
_FORMAT = 1


def save_state(path: str | Path, kind: str, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` and a JSON header `{kind, format, config}` to `path` (an `.npz` file)."""
    header = json.dumps({"kind": kind, "format": _FORMAT, "config": config})
    with open(path, "wb") as fh:  # a file object: np.savez would append ".npz" to other names
        np.savez(fh, **{_HEADER: np.array(header), **arrays})  # type: ignore[arg-type]


def load_state(path: str | Path, kind: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """`(config, arrays)` saved by `save_state` under `kind`.

    Raises:
        InputError: the file cannot be read, is not a rewardlab state file, or holds another kind.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"cannot read a saved state: {exc}", source=str(path)) from exc
    if _HEADER not in arrays:
        raise InputError("not a rewardlab state file (no header); save it with .save(path)", source=str(path))
    header = json.loads(str(arrays.pop(_HEADER)))
    if header.get("kind") != kind:
        raise InputError(f"this file holds a {header.get('kind')!r}, not a {kind!r}", source=str(path))
    return dict(header["config"]), arrays


def module_arrays(prefix: str, module: Any) -> dict[str, np.ndarray]:
    """A torch module's state dict as numpy arrays named `prefix.name`."""
    return {f"{prefix}.{k}": v.detach().cpu().numpy() for k, v in module.state_dict().items()}


def set_module_arrays(prefix: str, module: Any, arrays: dict[str, np.ndarray], *, source: str) -> None:
    """Load `prefix.*` arrays into a torch module; InputError when names or shapes differ."""
    import torch

    mine = module.state_dict()
    theirs = {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + ".")}
    if set(theirs) != set(mine) or any(tuple(mine[k].shape) != v.shape for k, v in theirs.items()):
        raise InputError(
            f"saved {prefix!r} does not fit this model (layers or sizes differ); build it with the saved "
            "configuration", source=source,
        )
    module.load_state_dict({k: torch.as_tensor(v) for k, v in theirs.items()})
