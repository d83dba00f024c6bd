"""A small MLP trained with torch and evaluated in numpy, so a fitted learner is plain arrays.

Every learner of this package that needs a function approximator uses `fit_mlp`: torch (CPU)
trains it, the weights come back as numpy arrays, and prediction is numpy only. A learner's
state is therefore a few arrays that `rewardlab.envs.persist.save_state` writes to an `.npz`
file without pickle, and scoring needs no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rewardlab._seeding import torch_seeded
from rewardlab.errors import ArrayError, InputError, TrainingError

__all__ = ["MLP", "fit_mlp"]


@dataclass(frozen=True)
class MLP:
    """`x -> W_L relu(... relu(x W_1 + b_1) ...) + b_L`: `weights[i]` is (in, out), `biases[i]` (out,)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(N, in) -> (N, out) float64."""
        h = np.asarray(x, dtype=np.float64)
        if h.ndim != 2 or h.shape[1] != self.weights[0].shape[0]:
            raise ArrayError("x", f"need shape (N, {self.weights[0].shape[0]}), got {h.shape}")
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
        return h

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The layers as `prefix.w0`, `prefix.b0`, ... for `save_state`."""
        out = {f"{prefix}.w{i}": w for i, w in enumerate(self.weights)}
        out.update({f"{prefix}.b{i}": b for i, b in enumerate(self.biases)})
        return out

    @classmethod
    def from_arrays(cls, prefix: str, arrays: dict[str, np.ndarray], *, source: str) -> MLP:
        """The MLP saved by `arrays(prefix)`; InputError when a layer is missing or misshapen."""
        n = sum(1 for k in arrays if k.startswith(f"{prefix}.w"))
        try:
            ws = tuple(np.asarray(arrays[f"{prefix}.w{i}"], dtype=np.float64) for i in range(n))
            bs = tuple(np.asarray(arrays[f"{prefix}.b{i}"], dtype=np.float64) for i in range(n))
        except KeyError as exc:
            raise InputError(f"saved network {prefix!r} misses layer {exc}", source=source) from None
        if n == 0 or any(w.ndim != 2 or b.shape != (w.shape[1],) for w, b in zip(ws, bs, strict=True)) or any(
            ws[i].shape[1] != ws[i + 1].shape[0] for i in range(n - 1)
        ):
            raise InputError(f"saved network {prefix!r} has no layers or layers that do not chain", source=source)
        return cls(ws, bs)


def fit_mlp(
    x: np.ndarray,
    y: np.ndarray,
    *,
    loss: Literal["mse", "bce"] = "mse",
    hidden: Sequence[int] = (64, 64),
    epochs: int = 200,
    lr: float = 3e-3,
    batch_size: int = 512,
    weight_decay: float = 1e-4,
    seed: int = 0,
) -> MLP:
    """Fit an MLP to `y` (N,) or (N, K) with Adam on minibatches; `loss="bce"` reads outputs as logits.

    Raises:
        ArrayError: x and y disagree in length, or hold non-finite values.
        TrainingError: the loss became non-finite.
    """
    import torch

    xs, ys = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    ys = ys.reshape(len(ys), -1) if ys.ndim <= 2 else ys
    if xs.ndim != 2 or len(xs) != len(ys) or len(xs) == 0:
        raise ArrayError("x", f"need (N, D) inputs and N targets, got {xs.shape} and {np.shape(y)}")
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise ArrayError("x", "inputs and targets must be finite")
    sizes = [xs.shape[1], *hidden, ys.shape[1]]
    rng = np.random.default_rng(seed)
    threads = torch.get_num_threads()
    # one thread: these nets are tiny, and on a shared machine torch's thread pool waits on
    # busy cores (a 10-epoch fit took 33 s with 2 threads under load, 0.5 s with one)
    torch.set_num_threads(1)
    try:
        return _train(xs, ys, sizes, loss, epochs, lr, batch_size, weight_decay, seed, rng)
    finally:
        torch.set_num_threads(threads)


def _train(xs: np.ndarray, ys: np.ndarray, sizes: list[int], loss: str, epochs: int, lr: float, batch_size: int,
           weight_decay: float, seed: int, rng: np.random.Generator) -> MLP:  # fmt: skip
    import torch
    from torch import nn

    with torch_seeded(seed):
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        net = nn.Sequential(*layers)
        opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
        crit = nn.MSELoss() if loss == "mse" else nn.BCEWithLogitsLoss()
        tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)
        for _ in range(epochs):
            order = rng.permutation(len(xs))
            for start in range(0, len(xs), batch_size):
                idx = torch.from_numpy(order[start : start + batch_size])
                opt.zero_grad()
                value = crit(net(tx[idx]), ty[idx])
                if not torch.isfinite(value):
                    raise TrainingError(f"the {loss} loss became {float(value)}; lower lr ({lr})")
                value.backward()
                opt.step()
    linears = [m for m in net if isinstance(m, nn.Linear)]
    return MLP(tuple(m.weight.detach().numpy().T.astype(np.float64) for m in linears),
               tuple(m.bias.detach().numpy().astype(np.float64) for m in linears))  # fmt: skip
