"""OpenRLHF 0.11.2 loads rewardlab's reward_func file with REWARDLAB_LOG set: the statistics of
the samples it scores reach TensorBoard, whatever number error_reward gives OpenRLHF."""

from __future__ import annotations

import pytest
from integration_spec import GOOD, UNFORMATTED, chatml_tokenizer

from reward_logs import tensorboard_steps

pytest.importorskip("openrlhf", reason="openrlhf is not installed (make installs openrlhf==0.11.2 --no-deps)")
pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow


def test_reward_func_file_logs_with_rewardlab_log(tmp_path, monkeypatch):
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from test_openrlhf_real import ERROR_REWARD, SPEC, rollout

    import rewardlab.integrations.openrlhf as module

    (tmp_path / "reward.toml").write_text(SPEC)
    monkeypatch.setenv("REWARDLAB_SPEC", str(tmp_path / "reward.toml"))
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", str(ERROR_REWARD))
    monkeypatch.setenv("REWARDLAB_LOG", f"tensorboard:{tmp_path / 'tb'}")
    monkeypatch.setenv("REWARDLAB_LOG_EVERY", "3")
    executor = SingleTurnAgentExecutor(remote_rm_url=module.__file__)  # loads the file as OpenRLHF does
    tokenizer = chatml_tokenizer()
    outputs = [rollout(executor, tokenizer, r, label) for r, label in [(GOOD, "Paris"), (UNFORMATTED, "Paris"), (GOOD, None)]]
    assert [float(o["reward"]) for o in outputs] == pytest.approx([1.1, 0.0, ERROR_REWARD])
    executor.reward_func.__globals__["_DEFAULT"].log.flush()  # the loaded file's own reward_func
    steps = tensorboard_steps(tmp_path / "tb")
    assert steps["reward/rows"] == {0: 3.0}
    assert steps["reward/error_rate"][0] == pytest.approx(1 / 3)  # counted, not the -1.0 OpenRLHF got
    assert steps["reward/mean"][0] == pytest.approx((1.1 + 0.0) / 2)


def test_a_bad_log_every_stops_the_file_at_load(tmp_path, monkeypatch):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    import rewardlab.integrations.openrlhf as module
    from rewardlab.errors import ConfigError

    (tmp_path / "reward.toml").write_text("[reward]\nname = 'x'\n[[reward.components]]\nname = 'x'\nuse = 'text.exact'\n")
    monkeypatch.setenv("REWARDLAB_SPEC", str(tmp_path / "reward.toml"))
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", "0")
    monkeypatch.setenv("REWARDLAB_LOG", f"tensorboard:{tmp_path / 'tb'}")
    monkeypatch.setenv("REWARDLAB_LOG_EVERY", "0")
    with pytest.raises(ConfigError, match="REWARDLAB_LOG_EVERY"):
        SingleTurnAgentExecutor(remote_rm_url=module.__file__)
