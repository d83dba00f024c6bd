"""Seeded networks and blocks do not reset the caller's generators, and stay reproducible."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from caller_generators import caller_draws, seed_caller  # noqa: E402
from rewardlab._seeding import TorchStream, all_seeded, torch_seeded  # noqa: E402


def _next_draws() -> list[float]:
    return torch.rand(3).tolist()


def test_a_seeded_block_gives_the_callers_stream_back():
    torch.manual_seed(123)
    want = _next_draws()
    torch.manual_seed(123)
    with torch_seeded(0):
        inside = torch.rand(2)
    assert _next_draws() == want  # as if the block had not run
    with torch_seeded(0):
        assert torch.equal(torch.rand(2), inside)  # and the block itself is reproducible


def test_a_stream_continues_across_blocks_like_one_seeding():
    torch.manual_seed(0)
    once = torch.rand(4)
    stream = TorchStream(0)
    with stream.active():
        first = torch.rand(2)
    torch.rand(5)  # the caller's own draws in between do not disturb the stream
    with stream.active():
        second = torch.rand(2)
    assert torch.equal(torch.cat([first, second]), once)


@pytest.mark.parametrize("build", ["rnd", "icm", "disagreement", "redistribution", "preferences"])
def test_building_an_env_reward_leaves_the_callers_generator_alone(build):
    from rewardlab.envs.intrinsic import DisagreementBonus, ICMBonus, RNDBonus
    from rewardlab.envs.preferences import PreferenceRewardModel
    from rewardlab.envs.redistribution import ModelRedistribution

    make = {"rnd": lambda: RNDBonus(4, seed=1), "icm": lambda: ICMBonus(4, 2, seed=1),
            "disagreement": lambda: DisagreementBonus(4, 2, seed=1),
            "redistribution": lambda: ModelRedistribution(4, seed=1),
            "preferences": lambda: PreferenceRewardModel(4, hidden=8, seed=1)}[build]  # fmt: skip
    torch.manual_seed(7)
    want = _next_draws()
    torch.manual_seed(7)
    a = make()
    assert _next_draws() == want  # an RL loop's own sampling continues as before
    b = make()  # same seed, same initial weights
    pa = [p.detach().numpy() for m in _modules(a) for p in m.parameters()]
    pb = [p.detach().numpy() for m in _modules(b) for p in m.parameters()]
    assert pa and all(np.array_equal(x, y) for x, y in zip(pa, pb, strict=True))


def _modules(obj):
    nn = torch.nn
    found = []
    for value in vars(obj).values():
        if isinstance(value, nn.Module):
            found.append(value)
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, nn.Module)]
    return found



def test_an_all_seeded_block_gives_torch_numpy_and_random_back():
    seed_caller()
    want = caller_draws()
    seed_caller()
    with all_seeded(0):
        inside = caller_draws()
    assert caller_draws() == want
    with all_seeded(0):
        assert caller_draws() == inside  # the block is reproducible in all three


def test_an_all_seeded_block_that_raises_still_gives_the_state_back():
    seed_caller()
    want = caller_draws()
    seed_caller()
    with pytest.raises(ZeroDivisionError), all_seeded(0):
        caller_draws()
        _ = 1 / 0
    assert caller_draws() == want


def test_all_seeded_seeds_like_the_global_seed_functions():
    """Inside the block each generator is where `random.seed` / `np.random.seed` /
    `torch.manual_seed` would put it: trainings seeded globally before give the same weights."""
    seed_caller(5)
    globally = caller_draws()
    seed_caller(9)
    with all_seeded(5):
        assert caller_draws() == globally
