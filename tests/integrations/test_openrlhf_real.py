"""OpenRLHF 0.11.2's own reward path against rewardlab, over a real loopback socket.

`SingleTurnAgentExecutor.execute` (openrlhf/utils/agent.py) tokenizes the prompt, takes the
policy's token ids, decodes prompt + response *with* special tokens and posts them with its own
aiohttp client (`_fetch_rewards_via_http`) to rewardlab's `/get_reward`; its
`SamplesGenerator._process_response_into_experience` turns each reply into an `Experience`, and a
step's experiences are concatenated and split again (`Experience.concat_experiences`,
`split_experience_batch`). The only stand-in is the policy: vLLM cannot be installed here, so a
scripted engine returns fixed token ids, exactly the object shape `execute` reads.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from integration_spec import GATED_SPEC, GOOD, UNFORMATTED, LiveServer, chatml_tokenizer

from doc_examples import fenced_blocks
from rewardlab import Sample, build
from rewardlab.errors import RewardLabError
from rewardlab.serve.app import create_app
from rewardlab.serve.settings import ServeSettings

pytest.importorskip("openrlhf", reason="openrlhf is not installed (make installs openrlhf==0.11.2 --no-deps)")
pytest.importorskip("aiohttp", reason="aiohttp is not installed (dev extra)")
pytestmark = [pytest.mark.network, pytest.mark.slow]

# `correct` fails the total when it cannot compare (no label), and is gated off without format.
SPEC = GATED_SPEC.replace('on_error = "skip"\n', "")
CHAT = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
ROWS = [(GOOD, "Paris"), (UNFORMATTED, "Paris"), (GOOD, None)]
ERROR_REWARD = -1.0


class ScriptedEngine:
    """What `execute` reads from vLLM's `generate`: `.outputs[0].token_ids/finish_reason/logprobs`."""

    def __init__(self, token_ids: list[int]):
        self.token_ids = token_ids

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        out = SimpleNamespace(token_ids=list(self.token_ids), finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def _openrlhf_method(module_file: Path, cls: str, name: str):
    """OpenRLHF's own method `cls.name`, compiled from its source file: the module imports vLLM
    at the top, which cannot be installed without CUDA; the method itself needs only torch."""
    import torch
    from openrlhf.trainer.ppo_utils.experience import Experience

    tree = ast.parse(module_file.read_text())
    owner = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    fn = next(n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace = {"torch": torch, "Experience": Experience}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(module_file), "exec"), namespace)
    return namespace[name]


def to_experience(output: dict):
    import openrlhf.trainer.ppo_utils as ppo_utils

    source = Path(inspect.getfile(ppo_utils)).parent / "samples_generator.py"
    fn = _openrlhf_method(source, "SamplesGenerator", "_process_response_into_experience")
    return fn(None, output, max_len=256)


def rollout(executor, tokenizer, response: str, label):
    ids = tokenizer(response + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    return asyncio.run(executor.execute(CHAT, label, params, 256, tokenizer, ScriptedEngine(ids)))


@pytest.fixture
def server():
    settings = ServeSettings(workers=0, openrlhf_error_reward=ERROR_REWARD, token="s3cret", openrlhf_trusted_networks=("127.0.0.0/8",))
    with LiveServer(create_app({"qa": build(SPEC)}, None, settings)) as live:
        yield live


def test_openrlhf_client_gets_rewardlab_scores_for_special_token_queries(server):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = chatml_tokenizer()
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/openrlhf/s3cret/get_reward")
    outputs = [rollout(executor, tokenizer, response, label) for response, label in ROWS]
    query = tokenizer.decode(outputs[0]["observation_tokens"], skip_special_tokens=False)
    assert query.endswith("</answer><|im_end|>")  # what OpenRLHF really sends
    reward = build(SPEC)
    expected = [reward.score(Sample(response=r, reference=label)).score for r, label in ROWS[:2]] + [ERROR_REWARD]
    assert [o["reward"] for o in outputs] == [[pytest.approx(x)] for x in expected]
    assert expected[:2] == pytest.approx([1.1, 0.0])  # a correct answer followed by <|im_end|> passes format
    assert [o["extra_logs"]["rewardlab/error"] for o in outputs] == [[0.0], [0.0], [1.0]]


def test_a_steps_experiences_split_when_rows_differ_in_components(server):
    from openrlhf.trainer.ppo_utils.experience import Experience, split_experience_batch
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = chatml_tokenizer()
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/openrlhf/s3cret/get_reward")
    experiences = [to_experience(rollout(executor, tokenizer, r, label)) for r, label in ROWS]
    batch = Experience.concat_experiences(experiences, tokenizer.pad_token_id)
    items = split_experience_batch(batch)  # raised "Size of info[rewardlab/correct] ..." before
    assert len(items) == 3
    assert [float(i.info["rewardlab/correct/scored"]) for i in items] == [1.0, 0.0, 0.0]
    assert [float(i.rewards) for i in items] == pytest.approx([1.1, 0.0, ERROR_REWARD])


def test_openrlhf_without_a_header_is_let_in_only_from_trusted_networks(server):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = chatml_tokenizer()
    trusted = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")  # 127.0.0.1 is trusted here
    assert rollout(trusted, tokenizer, GOOD, "Paris")["reward"] == [pytest.approx(1.1)]
    body = {"query": [CHAT + GOOD], "prompts": [CHAT], "labels": ["Paris"]}
    wrong = httpx.post(f"{server.url}/openrlhf/nope/get_reward", json=body)
    assert wrong.status_code == 401


def test_untrusted_client_without_token_is_told_both_ways_in():
    settings = ServeSettings(workers=0, openrlhf_error_reward=0.0, token="s3cret", openrlhf_trusted_networks=("10.0.0.0/8",))
    with LiveServer(create_app({"qa": build(SPEC)}, None, settings)) as live:
        reply = httpx.post(f"{live.url}/get_reward", json={"query": [GOOD], "labels": ["Paris"]})
    assert reply.status_code == 401
    message = reply.json()["error"]["message"]
    assert "/openrlhf/<token>/get_reward" in message and "--openrlhf-trusted-network" in message


def test_unconfigured_error_reward_is_refused_on_the_first_request():
    with LiveServer(create_app({"qa": build(SPEC)}, None, ServeSettings(workers=0))) as live:
        reply = httpx.post(f"{live.url}/get_reward", json={"query": [GOOD], "labels": ["Paris"]})
    assert reply.status_code == 500 and reply.json()["error"]["code"] == "openrlhf_not_configured"


def test_reward_func_file_loaded_by_openrlhf_checks_its_configuration(tmp_path, monkeypatch):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    import rewardlab.integrations.openrlhf as module

    (tmp_path / "reward.toml").write_text(SPEC)
    monkeypatch.setenv("REWARDLAB_SPEC", str(tmp_path / "reward.toml"))
    monkeypatch.delenv("REWARDLAB_ERROR_REWARD", raising=False)
    with pytest.raises(RewardLabError, match="REWARDLAB_ERROR_REWARD"):
        SingleTurnAgentExecutor(remote_rm_url=module.__file__)  # OpenRLHF stops at start-up
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", str(ERROR_REWARD))
    executor = SingleTurnAgentExecutor(remote_rm_url=module.__file__)
    tokenizer = chatml_tokenizer()
    outputs = [rollout(executor, tokenizer, r, label) for r, label in ROWS]
    experiences = [to_experience(o) for o in outputs]
    items = split_experience_batch_of(experiences, tokenizer.pad_token_id)
    assert [float(i.rewards) for i in items] == pytest.approx([1.1, 0.0, ERROR_REWARD])


def split_experience_batch_of(experiences, pad_token_id):
    from openrlhf.trainer.ppo_utils.experience import Experience, split_experience_batch

    return split_experience_batch(Experience.concat_experiences(experiences, pad_token_id))




def documented_commands(workdir: Path) -> tuple[list[str], list[str]]:
    """The arguments of the documented `rewardlab serve` and `train_ppo_ray` commands, as bash
    expands them in `workdir` (each command replaced by a function that records its words)."""
    import os
    import shlex
    import subprocess
    import sys

    block = next(b for b in fenced_blocks("integrations.md", "bash") if "openrlhf.cli.train_ppo_ray" in b)
    py = shlex.quote(sys.executable)
    shim = (
        f'python() {{ if [ "$1" = -m ] && [ "$2" = openrlhf.cli.train_ppo_ray ]; then shift 2; printf "%s\\n" "$@" > train.args; else {py} "$@"; fi; }}\n'
        'rewardlab() { printf "%s\\n" "$@" > serve.args; }\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(["bash", "-c", shim + block + "\nwait\n"], cwd=workdir, env=env, check=True, timeout=60)
    return (workdir / "serve.args").read_text().splitlines(), (workdir / "train.args").read_text().splitlines()


def test_documented_serve_command_answers_openrlhfs_client(tmp_path):
    import os
    import subprocess
    import sys
    import time

    from openrlhf.utils.agent import SingleTurnAgentExecutor

    (tmp_path / "reward.toml").write_text(SPEC)
    serve_args, train_args = documented_commands(tmp_path)
    port = str(_free_port())
    serve_args = [port if a == "5000" else a for a in serve_args]
    url = train_args[train_args.index("--reward.remote_url") + 1].replace(":5000/", f":{port}/")
    # the documented flags are the ones OpenRLHF 0.11.2's trainer parses
    import openrlhf.cli as cli

    trainer_source = (Path(inspect.getfile(cli)).parent / "train_ppo_ray.py").read_text()
    assert all(f'"{flag}"' in trainer_source for flag in ("--reward.remote_url", "--data.label_key"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "REWARDLAB_CACHE": str(tmp_path / "cache.sqlite")}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([str(Path(sys.executable).parent / "rewardlab"), *serve_args], cwd=tmp_path, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            alive = server.poll() is None and time.monotonic() < deadline
            assert alive, f"rewardlab serve did not start: {(tmp_path / 'serve.log').read_text()[-2000:]}"
            time.sleep(0.2)
        executor = SingleTurnAgentExecutor(url.split(","))  # as train_ppo_ray splits --reward.remote_url
        tokenizer = chatml_tokenizer()
        outputs = [rollout(executor, tokenizer, r, label) for r, label in ROWS]
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    assert [o["reward"] for o in outputs] == [[pytest.approx(1.1)], [pytest.approx(0.0)], [pytest.approx(0.0)]]
    assert [o["extra_logs"]["rewardlab/error"] for o in outputs] == [[0.0], [0.0], [1.0]]  # the failed row, flagged


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_pinned_openrlhf_is_the_one_tested():
    from importlib.metadata import version

    assert version("openrlhf") == "0.11.2"  # the Makefile pins it; these paths are 0.11.2's


def nfc_chatml_tokenizer():
    """`chatml_tokenizer` normalising its input to NFC, as Qwen2's tokenizer does."""
    from tokenizers import normalizers

    tokenizer = chatml_tokenizer()
    tokenizer.backend_tokenizer.normalizer = normalizers.NFC()
    return tokenizer


def test_openrlhf_client_with_an_nfc_tokenizer_gets_the_score_of_the_response_alone(server):
    """The prompt is sent decomposed (NFD), the tokenizer composes it (NFC), so the query OpenRLHF
    decodes does not hold the prompt as sent: the prompt is found by its normal form, and the
    response after it is scored alone (before: the whole query was scored, with no flag)."""
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = nfc_chatml_tokenizer()
    chat = CHAT.replace("France?", "la Re\u0301publique franc\u0327aise?")
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/openrlhf/s3cret/get_reward")
    ids = tokenizer(GOOD + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    output = asyncio.run(executor.execute(chat, "Paris", params, 256, tokenizer, ScriptedEngine(ids)))
    query = tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)
    assert chat not in query and unicodedata.normalize("NFC", chat) in query  # what OpenRLHF really sends
    assert output["reward"] == [pytest.approx(1.1)] and output["extra_logs"]["rewardlab/error"] == [0.0]


def test_openrlhf_client_with_a_truncated_prompt_gets_a_flagged_error_not_a_guess(server):
    """OpenRLHF keeps the last tokens of a prompt longer than its budget; the prompt it posts is
    the whole one, which is then not in the query: the row is an error (`--openrlhf-error-reward`,
    flagged), never the whole query scored as the response."""
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    tokenizer = chatml_tokenizer()
    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/openrlhf/s3cret/get_reward")
    ids = tokenizer(GOOD + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    output = asyncio.run(executor.execute(CHAT, "Paris", params, 64 + 6, tokenizer, ScriptedEngine(ids)))
    query = tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)
    assert CHAT not in query and query.endswith(GOOD + "<|im_end|>")  # the prompt was cut
    assert output["reward"] == [ERROR_REWARD] and output["extra_logs"]["rewardlab/error"] == [1.0]
    body = {"query": [query], "prompts": [CHAT], "labels": ["Paris"]}
    reply = httpx.post(f"{server.url}/openrlhf/s3cret/get_reward", json=body).json()
    assert reply["statuses"] == ["error"]
