"""Fixtures for model tests: small synthetic pair sets and cheap backbones."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in these tests may touch the network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch

from rewardlab.models.backbones import HashingBackbone
from rewardlab.models.synthetic import SyntheticConfig, make_pairs

# Two cores serve many test runs at once: one intra-op thread avoids spin-waiting on a busy CPU
# (measured: the same test 17.6 s with 2 threads, 12.0 s with 1, under load).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def hashing() -> HashingBackbone:
    return HashingBackbone(n_features=1024)


@pytest.fixture(scope="session")
def unbiased_pairs():
    """Train/val/test pairs whose spurious features are independent of the label."""
    cfg = SyntheticConfig(bias=0.5, noise=0.1)
    return (make_pairs(800, split="train", config=cfg),
            make_pairs(200, split="test", config=SyntheticConfig(seed=1)),
            make_pairs(600, split="test", config=SyntheticConfig(seed=2)))
