"""Seeded torch randomness that does not reset the caller's.

Building a network (`nn.Linear`'s initial weights) and training it (dropout, shuffles without a
generator) draw from torch's global generator, so a seed must be set there for a run to be
reproducible. Setting it with `torch.manual_seed` alone would also reset the stream of whatever
called us: an RL loop whose policy samples actions from the same generator, or a script that
seeded torch itself. `torch_seeded` runs a block on a fork of the generator (CPU, and every
visible CUDA device) and gives the caller's state back afterwards; `all_seeded` does the same for
numpy's legacy global generator and Python's `random` too (the trainers use it).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["TorchStream", "all_seeded", "torch_seeded"]


@contextmanager
def torch_seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's generators seeded with `seed`; restore them on exit."""
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


@contextmanager
def all_seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's, numpy's legacy global and Python's `random` generators seeded
    with `seed`; give the caller all three states back on exit, also when the block raises.

    For training entry points, which a user calls inside an RL loop or a seeded script: their
    policy's action sampling and data shuffles continue as if training had not run.

    Why each is seeded: torch's generators are what training draws from (an MLP or ODIN head's
    initial weights, dropout while fine-tuning a transformer). Nothing in rewardlab's trainers,
    in transformers' model loading or in the tokenizers draws from numpy's or Python's global
    generator (checked: a training run leaves their states as it found them); they are seeded
    so that a `Backbone` of the user's own, or a library, that does draw from them is still
    reproducible from the seed, and forked so that those draws do not leak to the caller either.
    """
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        with torch_seeded(seed):
            random.seed(seed)
            np.random.seed(seed)
            yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)


class TorchStream:
    """One object's own torch random stream, for networks built in several steps (a base class,
    then its subclasses): each `active()` block continues the stream where the last one stopped,
    as if the global generator had been seeded once, and gives the caller's state back after.
    CPU generator only (the networks here are built on the CPU)."""

    def __init__(self, seed: int) -> None:
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self._state = torch.random.get_rng_state()

    @contextmanager
    def active(self) -> Iterator[None]:
        """Run the block on this stream."""
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.random.set_rng_state(self._state)
            try:
                yield
            finally:
                self._state = torch.random.get_rng_state()
