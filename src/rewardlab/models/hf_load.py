"""Loading off-the-shelf Hugging Face models for `model.hf` and `model.hf_prm`: local only, once.

* **Where**: a directory, or a hub id resolved through the local Hugging Face cache
  (`huggingface_hub.snapshot_download(..., local_files_only=True)`), never the network; a model
  that is not there is a `ModelNotFoundError` that says how to download it once.
* **On what**: `cpu`, `cuda`, `cuda:N` or `auto` (the first GPU when there is one), in `fp32`,
  `bf16` or `fp16` (`auto`: bf16 on a GPU that supports it, else fp16; fp32 on CPU, where
  fp16 matmuls are slow or missing and fp32 keeps scores exact across batchings).
* **Once**: loaded models are kept per process, keyed by (directory, class, device, dtype), so
  every spec, every reward instance and every server request that names the same model shares
  one copy of the weights.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

try:
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ConfigError, InputError, MissingWeightsError, ModelNotFoundError

__all__ = [
    "Dtype",
    "LoadedModel",
    "ModelKind",
    "load_model",
    "rebuild",
    "remote_kind",
    "resolve_device",
    "resolve_dtype",
]

Dtype = Literal["auto", "fp32", "bf16", "fp16"]
#: which transformers auto class builds the model: a sequence classifier (one or more scalar
#: heads), a token classifier (a score per token: PRMs), or a causal LM (step-tag PRMs that read
#: the logits of a "good"/"bad" token, Math-Shepherd style), or `AutoModel` for remote code
ModelKind = Literal["sequence", "token", "causal_lm", "remote"]

_TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(eq=False)
class LoadedModel:
    """A model in eval mode, its tokenizer, and where it runs.

    `lock` serialises tokenizer calls: a fast tokenizer is one Rust object whose settings
    change per call, and two server batches may tokenize at the same time.
    """

    model: Any
    tokenizer: Any
    directory: Path
    device: torch.device
    dtype: torch.dtype
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def config(self) -> Any:
        return self.model.config


_LOADED: dict[tuple[str, str, str, str, bool], LoadedModel] = {}
_LOADING = threading.Lock()


def hf_cache_dir() -> Path:
    """The hub cache in effect now (`HF_HUB_CACHE`, else `$HF_HOME/hub`, else ~/.cache/huggingface/hub),
    read at call time so that a changed environment is honoured."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def resolve_model_dir(model: str, *, revision: str | None = None) -> Path:
    """The local directory of `model`: the path itself, or its snapshot in the local HF cache.

    Raises:
        ModelNotFoundError: not a directory and not cached (the message says how to download it).
        InputError: a directory without a `config.json`.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise InputError("not a Hugging Face model directory: it has no config.json", source=model)
        return path.resolve()
    if model.count("/") > 1 or model.startswith((".", "/", "~")):  # a path that does not exist
        raise InputError("no such model directory", source=model)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    cache = hf_cache_dir()
    try:
        found = snapshot_download(model, revision=revision, cache_dir=str(cache), local_files_only=True)
    except (LocalEntryNotFoundError, FileNotFoundError) as exc:
        raise ModelNotFoundError(model, cache=str(cache), revision=revision) from exc
    snapshot = Path(str(found))
    if not (snapshot / "config.json").exists():
        raise ModelNotFoundError(model, cache=str(cache), revision=revision)
    return snapshot


def resolve_device(device: str) -> torch.device:
    """`cpu`, `cuda`, `cuda:N` or `auto` as a torch device, checked against the machine.

    Raises:
        ConfigError: a CUDA device on a machine without one, an index past the last GPU, or a
            name that is none of the above.
    """
    if device == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ConfigError(f"device {device!r}: this machine has no CUDA device (or torch is a CPU build); "
                              "use device='cpu' or 'auto'")
        index = 0 if device == "cuda" else _cuda_index(device)
        if index >= torch.cuda.device_count():
            raise ConfigError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s) here "
                              f"(cuda:0 .. cuda:{torch.cuda.device_count() - 1})")
        return torch.device(f"cuda:{index}")
    raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}")


def _cuda_index(device: str) -> int:
    tail = device.partition(":")[2]
    if not tail.isdigit():
        raise ConfigError(f"device {device!r}: write a GPU as cuda:N with N a number")
    return int(tail)


def resolve_dtype(dtype: Dtype, device: torch.device) -> torch.dtype:
    """The torch dtype for `dtype` on `device` (see the module doc for `auto`).

    Raises:
        ConfigError: an unknown name, or fp16 on CPU.
    """
    if dtype == "auto":
        if device.type != "cuda":
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if dtype not in _TORCH_DTYPES:
        raise ConfigError(f"dtype must be 'auto', 'fp32', 'bf16' or 'fp16', got {dtype!r}")
    if dtype == "fp16" and device.type == "cpu":
        raise ConfigError("dtype='fp16' needs a GPU (CPU half-precision kernels are slow or missing); "
                          "use 'bf16' or 'fp32' on CPU")
    return _TORCH_DTYPES[dtype]


#: how many samples a forward pass takes: memory knobs, not what is computed, so they are not
#: parameters (not hashed into the spec hash); `__reduce__` carries them separately
BATCHING_PARAMS = ("max_tokens_per_batch", "max_batch_size")


def scoring_params(recorded: Mapping[str, Any], **resolved: Any) -> dict[str, Any]:
    """A model reward's `params`: those `BaseReward` recorded from its `__init__` call, in
    signature order, with the values it resolved (`resolved`) and without `BATCHING_PARAMS`."""
    return {k: resolved.get(k, v) for k, v in recorded.items() if k not in BATCHING_PARAMS}


def rebuild(cls: type, params: dict[str, Any]) -> Any:
    """`cls(**params)`: how a model reward is unpickled (a Ray task, a spawned worker). The
    weights are not pickled; the receiving process loads them once, from the same directory."""
    return cls(**params)


def load_model(model: str, *, kind: ModelKind, device: str = "cpu", dtype: Dtype = "auto",
               revision: str | None = None, trust_remote_code: bool = False) -> LoadedModel:
    """The model and tokenizer of `model`, loaded once per process for each (kind, device, dtype).

    Raises:
        ModelNotFoundError, InputError: see `resolve_model_dir`; also a directory that
            transformers cannot load as `kind` (the message names the class it tried).
        ConfigError: see `resolve_device` and `resolve_dtype`.
    """
    directory = resolve_model_dir(model, revision=revision)
    where = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, where)
    key = (str(directory), kind, str(where), str(torch_dtype), trust_remote_code)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _load(model, directory, kind, where, torch_dtype, trust_remote_code)
        return _LOADED[key]


_AUTO_NAMES = {"sequence": "AutoModelForSequenceClassification", "token": "AutoModelForTokenClassification",
               "causal_lm": "AutoModelForCausalLM"}


def remote_kind(model: str, wanted: ModelKind, *, revision: str | None = None,
                trust_remote_code: bool) -> ModelKind:
    """`wanted`, unless the model's remote code maps only `AutoModel` (InternLM2-Reward,
    Qwen2.5-Math-PRM): then `remote`. ArmoRM maps `AutoModelForSequenceClassification` and
    stays `sequence`. Without `trust_remote_code` the config's `auto_map` is never read."""
    if not trust_remote_code or wanted == "remote":
        return wanted
    config = json.loads((resolve_model_dir(model, revision=revision) / "config.json").read_text())
    auto_map = config.get("auto_map") or {}
    return "remote" if _AUTO_NAMES[wanted] not in auto_map and "AutoModel" in auto_map else wanted


def _auto_class(kind: ModelKind) -> Any:
    import transformers

    return {"sequence": transformers.AutoModelForSequenceClassification,
            "token": transformers.AutoModelForTokenClassification,
            "causal_lm": transformers.AutoModelForCausalLM,
            "remote": transformers.AutoModel}[kind]


def _load(name: str, directory: Path, kind: ModelKind, device: torch.device, dtype: torch.dtype,
          trust_remote_code: bool) -> LoadedModel:
    from transformers import AutoTokenizer

    auto = _auto_class(kind)
    try:
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True,
                                                  trust_remote_code=trust_remote_code)
        model, info = auto.from_pretrained(directory, local_files_only=True, dtype=dtype,
                                           trust_remote_code=trust_remote_code, output_loading_info=True)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"transformers cannot load it as {auto.__name__}: {exc}", source=name) from exc
    _check_weights(str(name), model, info, trust_remote_code)
    model.to(device)
    model.eval()
    return LoadedModel(model, tokenizer, directory, device, dtype)


def _check_weights(name: str, model: Any, info: Mapping[str, Any], trust_remote_code: bool) -> None:
    """Refuse a checkpoint that lacks weights of the class it was loaded as.

    transformers reports them in the loading info (`missing_keys`; `mismatched_keys` when a head
    of another shape was dropped) and initialises them at random: a base encoder loaded as a
    classifier, a policy checkpoint loaded as a reward model, a base model loaded as a PRM.

    Raises:
        MissingWeightsError: naming the checkpoint, the class and the missing weights.
    """
    missing = sorted(str(k) for k in info.get("missing_keys") or ())
    missing += sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get("mismatched_keys") or ())
    if not missing:
        return
    saved = list(getattr(model.config, "architectures", None) or [])
    model_class = type(model).__name__
    if getattr(model.config, "auto_map", None) and not trust_remote_code:
        hint = (f"; the checkpoint's own code ({saved[0] if saved else 'auto_map'}) defines its head: set "
                "trust_remote_code = true if you trust that code")
    elif saved and saved[0] != model_class:
        hint = (f"; the checkpoint was saved as {saved[0]}, not {model_class}: use a checkpoint saved with its "
                "trained scoring head")
    else:
        hint = "; use a checkpoint saved with its trained scoring head"
    raise MissingWeightsError(name, model_class, missing, hint=hint)
