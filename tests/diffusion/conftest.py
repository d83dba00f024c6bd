"""Small toy diffusion models shared by the diffusion tests (trained once per session)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rewardlab.diffusion.toy import ToyDiffusion, ToyDiffusionConfig, train_toy_diffusion  # noqa: E402

# Two cores serve many test runs at once: one intra-op thread avoids spin-waiting on a busy CPU.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def ring_model() -> ToyDiffusion:
    return train_toy_diffusion(ToyDiffusionConfig(data="ring", train_iters=800, lr=5e-3, batch_size=128, seed=0))


@pytest.fixture(scope="session")
def image_model() -> ToyDiffusion:
    return train_toy_diffusion(ToyDiffusionConfig(data="image", train_iters=300, hidden=64, seed=0))


@pytest.fixture(scope="session")
def flow_ring_model() -> ToyDiffusion:
    return train_toy_diffusion(
        ToyDiffusionConfig(data="ring", kind="flow", train_iters=600, lr=5e-3, batch_size=128, seed=0)
    )
