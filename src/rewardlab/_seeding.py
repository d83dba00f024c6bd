"""Seeded torch randomness that does not reset the caller's.

Building a network (`nn.Linear`'s initial weights) and training it (dropout, shuffles without a
generator) draw from torch's global generator, so a seed must be set there for a run to be
reproducible. Setting it with `torch.manual_seed` alone would also reset the stream of whatever
called us: an RL loop whose policy samples actions from the same generator, or a script that
seeded torch itself. `torch_seeded` runs a block on a fork of the generator (CPU, and every
visible CUDA device) and gives the caller's state back afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TorchStream", "torch_seeded"]


@contextmanager
def torch_seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's generators seeded with `seed`; restore them on exit."""
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


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
