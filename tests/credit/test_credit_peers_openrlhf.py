"""rewardlab's estimators against OpenRLHF 0.11.2's own advantage code.

`RemoteExperienceMaker.compute_advantages_and_returns` (openrlhf/trainer/ppo_utils/
experience_maker.py) turns each `Experience`'s rewards into advantages for every
`algo.advantage.estimator`: it regroups rewards by sample index, subtracts the rloo /
reinforce_baseline / dr_grpo / group_norm baseline, puts the reward on the last action token
(`openrlhf.models.utils.compute_reward`), accumulates returns, and whitens over all action
tokens for gae / reinforce / reinforce_baseline. Its module and `openrlhf.models` import vLLM,
deepspeed and flash-attn at the top (CUDA builds that cannot be installed here), so the four
functions are compiled from OpenRLHF's own source files, unchanged, and run on real
`Experience` objects with a real `FixedKLController`. The only thing built here is the
`args` namespace, with the field names of OpenRLHF's CLI (`--algo.advantage.estimator`, ...).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import typing
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rewardlab.credit import dr_grpo, gae, grpo, reinforce_pp, rloo

torch = pytest.importorskip("torch")
pytest.importorskip("openrlhf", reason="openrlhf is installed by make (openrlhf==0.11.2 --no-deps)")
from openrlhf.trainer.ppo_utils.experience import Experience  # noqa: E402
from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController  # noqa: E402
from openrlhf.trainer.ppo_utils.length_penalty import apply_length_penalties  # noqa: E402
from openrlhf.utils.logging_utils import init_logger  # noqa: E402

N = 3  # n_samples_per_prompt: OpenRLHF groups by reshape(-1, n), so every group has n samples
TOKENS = 6


def _openrlhf_source() -> Path:
    import openrlhf

    return Path(inspect.getfile(openrlhf)).parent


def _compile(path: Path, names: list[str], cls: str | None, namespace: dict) -> dict:
    """OpenRLHF's own functions (or methods of `cls`), compiled from its source file."""
    tree = ast.parse(path.read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body if cls else tree.body
    fns = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert sorted(f.name for f in fns) == sorted(names), f"OpenRLHF moved {names} out of {path}"
    exec(compile(ast.Module(body=fns, type_ignores=[]), str(path), "exec"), namespace)
    return {name: namespace[name] for name in names}


def experience_maker(estimator: str, *, gamma: float = 1.0, lambd: float = 0.95):
    root = _openrlhf_source()
    typing_names = {k: getattr(typing, k) for k in ("List", "Tuple", "Union", "Optional")}
    reward_ns = {"torch": torch, **typing_names}
    (compute_reward,) = _compile(root / "models" / "utils.py", ["compute_reward"], None, reward_ns).values()
    namespace = {
        "torch": torch, "itertools": itertools, "Experience": Experience, "compute_reward": compute_reward,
        "apply_length_penalties": apply_length_penalties, "logger": init_logger(__name__), **typing_names,
    }  # fmt: skip
    methods = ["compute_advantages_and_returns", "get_advantages_and_returns", "get_cumulative_returns"]
    maker_cls = type(
        "RemoteExperienceMaker",
        (),
        _compile(root / "trainer" / "ppo_utils" / "experience_maker.py", methods, "RemoteExperienceMaker", namespace),
    )
    maker = maker_cls()
    advantage = SimpleNamespace(estimator=estimator, gamma=gamma, lambd=lambd, no_std_norm=False)
    args = SimpleNamespace(
        algo=SimpleNamespace(advantage=advantage),
        rollout=SimpleNamespace(n_samples_per_prompt=N),
        reward=SimpleNamespace(clip_range=(-10.0, 10.0), overlong_buffer_len=None, stop_properly_penalty_coef=None),
    )
    maker.strategy = SimpleNamespace(args=args)
    maker.advantage_estimator = estimator
    maker.kl_ctl = FixedKLController(0.0)
    return maker


def batch(seed: int = 0, dtype=torch.float64):
    """5 prompts x N samples (one all-0.9 group), ragged right-padded lengths, split into two
    experiences whose samples are not in prompt order (OpenRLHF regroups them by index)."""
    rng = np.random.default_rng(seed)
    rewards = np.round(rng.random((5, N)), 3)
    rewards[3] = 0.9  # the float32 mean of 3 copies of 0.9 is not 0.9
    lengths = rng.integers(1, TOKENS + 1, 5 * N)
    values = rng.normal(size=(5 * N, TOKENS))
    order = rng.permutation(5 * N)
    experiences = []
    for part in np.array_split(order, 2):
        mask = torch.as_tensor(np.arange(TOKENS)[None, :] < lengths[part, None])
        experiences.append(
            Experience(
                rewards=torch.as_tensor(rewards.reshape(-1)[part], dtype=dtype),
                action_mask=mask,
                kl=torch.zeros(len(part), TOKENS, dtype=dtype),
                values=torch.as_tensor(values[part], dtype=dtype) * mask,
                index=[int(i) for i in part],
                info={},
            )
        )
    token_mask = np.arange(TOKENS)[None, :] < lengths[:, None]
    return rewards, token_mask, values, experiences


def advantages_in_sample_order(experiences, field: str = "advantages") -> np.ndarray:
    out = np.zeros((sum(len(e.index) for e in experiences), TOKENS))
    for e in experiences:
        out[e.index] = getattr(e, field).detach().double().numpy()
    return out


def per_response(token_adv: np.ndarray, token_mask: np.ndarray) -> np.ndarray:
    """One value per response, after checking it is the same on each of its tokens."""
    first = token_adv[:, 0]
    np.testing.assert_allclose(np.where(token_mask, token_adv, first[:, None]), np.repeat(first[:, None], TOKENS, 1), rtol=1e-6, atol=1e-7)
    return first.reshape(-1, N)


@pytest.mark.parametrize(
    ("estimator", "ours"),
    [("rloo", rloo), ("dr_grpo", dr_grpo), ("group_norm", lambda r: grpo(r, eps=1e-9))],
)
def test_group_baselines_match_openrlhf(estimator, ours):
    rewards, token_mask, _, experiences = batch()
    experience_maker(estimator).compute_advantages_and_returns(experiences)
    theirs = per_response(advantages_in_sample_order(experiences), token_mask)
    has_signal = np.arange(5) != 3
    np.testing.assert_allclose(ours(rewards)[has_signal], theirs[has_signal], rtol=1e-9, atol=1e-12)
    assert np.all(ours(rewards)[3] == 0.0)
    assert np.all(advantages_in_sample_order(experiences)[~token_mask] == 0.0)


def test_group_norm_in_float32_divides_rounding_noise_by_1e_9():
    rewards, token_mask, _, experiences = batch(dtype=torch.float32)
    experience_maker("group_norm").compute_advantages_and_returns(experiences)
    theirs = per_response(advantages_in_sample_order(experiences), token_mask)
    # OpenRLHF's group_norm: (r − mean) / (std + 1e-9) in float32. The all-0.9 group's std is
    # 0 but its mean is off by one rounding (1e-8): every response gets rounding / 1e-9 = 10.
    assert np.abs(theirs[3]).min() > 1.0
    ours = grpo(torch.as_tensor(rewards, dtype=torch.float32), eps=1e-9)
    assert ours.dtype == torch.float32 and torch.count_nonzero(ours[3]) == 0
    np.testing.assert_allclose(ours.numpy()[:3], theirs[:3], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("estimator", "baseline"), [("reinforce_baseline", "group"), ("reinforce", "none")])
def test_reinforce_pp_matches_openrlhf_token_whitening(estimator, baseline):
    rewards, token_mask, _, experiences = batch(seed=1)
    experience_maker(estimator).compute_advantages_and_returns(experiences)
    theirs = per_response(advantages_in_sample_order(experiences), token_mask)
    # OpenRLHF: token mean, population token variance, rsqrt(max(var, 1e-8)), in float32.
    ours = reinforce_pp(rewards, baseline=baseline, token_mask=token_mask, ddof=0, eps=0.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert not np.allclose(reinforce_pp(rewards, baseline=baseline, ddof=0, eps=0.0), theirs, rtol=1e-3)


def test_gae_matches_openrlhf_before_its_whitening():
    rewards, token_mask, values, experiences = batch(seed=2)
    experience_maker("gae", gamma=0.97, lambd=0.9).compute_advantages_and_returns(experiences)
    token_rewards = np.zeros_like(values)
    lengths = token_mask.sum(axis=1)
    token_rewards[np.arange(len(lengths)), lengths - 1] = rewards.reshape(-1)  # compute_reward: on the last action token
    ours_adv, ours_returns = gae(token_rewards, values, token_mask, gamma=0.97, lam=0.9)
    returns = advantages_in_sample_order(experiences, "returns")
    np.testing.assert_allclose(ours_returns[token_mask], returns[token_mask], rtol=1e-12, atol=1e-12)
    # then OpenRLHF whitens the advantages over all action tokens (population variance, float32)
    a = ours_adv[token_mask]
    whitened = (a - a.mean()) / np.sqrt(max(a.var(), 1e-8))
    np.testing.assert_allclose(advantages_in_sample_order(experiences)[token_mask], whitened, rtol=1e-5, atol=1e-6)


def test_discounted_returns_match_openrlhf_reinforce_returns():
    """γ < 1 (OpenRLHF's plain `reinforce`): its returns are `gae` with V = 0 and λ = 1."""
    rewards, token_mask, values, experiences = batch(seed=3)
    experience_maker("reinforce", gamma=0.9).compute_advantages_and_returns(experiences)
    token_rewards = np.zeros_like(values)
    lengths = token_mask.sum(axis=1)
    token_rewards[np.arange(len(lengths)), lengths - 1] = rewards.reshape(-1)
    ours, _ = gae(token_rewards, np.zeros_like(values), token_mask, gamma=0.9, lam=1.0)
    returns = advantages_in_sample_order(experiences, "returns")
    np.testing.assert_allclose(ours[token_mask], returns[token_mask], rtol=1e-12, atol=1e-12)
    assert not np.allclose(returns[token_mask], np.repeat(rewards.reshape(-1), lengths))  # γ did discount
