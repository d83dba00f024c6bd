"""`rewardlab serve`'s options for the special tokens `/get_reward` removes from OpenRLHF's
queries, through the public path: the command in a process of its own, queried over its socket.

The reward is exact match against the label, so a row scores 1.0 exactly when the server removed
the token that follows the answer: `<|im_end|>` is ChatML's (the test tokenizer's and in the
default list), `<eos>` is in the default list only.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from rewardlab.cli.main import main

from ._live import free_port
from ._rewards import EXACT_SPEC

pytestmark = pytest.mark.network

PROMPT = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
BODY = {"query": [PROMPT + "4<|im_end|>", PROMPT + "4<eos>", PROMPT + "4"], "prompts": [PROMPT] * 3, "labels": ["4"] * 3}


def _chatml_tokenizer(where: Path) -> Path:
    """A tiny byte-level BPE tokenizer with ChatML's special tokens, trained and saved here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["user assistant 2+2? 4"] * 10, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|endoftext|>", eos_token="<|im_end|>",
                                   additional_special_tokens=["<|im_start|>"])  # fmt: skip
    fast.save_pretrained(where)
    return where


@contextmanager
def _served(tmp_path: Path, *options: str) -> Iterator[str]:
    """`rewardlab serve exact.toml OPTIONS` in a child process; its URL once /healthz answers."""
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    port = free_port()
    argv = ["serve", str(spec), "--port", str(port), "--workers", "0", "--no-cache", "--openrlhf-error-reward", "-1", *options]
    code = f"import sys; from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"rewardlab serve exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)  # polling towards a deadline: a slow start only waits longer
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _rewards(url: str) -> list[float]:
    reply = httpx.post(f"{url}/get_reward", json=BODY, timeout=30)
    assert reply.status_code == 200, reply.text
    return list(reply.json()["rewards"])


@pytest.mark.slow
def test_serve_removes_the_common_chat_template_tokens_by_default(tmp_path):
    with _served(tmp_path) as url:
        assert _rewards(url) == [1.0, 1.0, 1.0]


@pytest.mark.slow
def test_serve_keep_special_tokens_scores_the_query_as_sent(tmp_path):
    with _served(tmp_path, "--openrlhf-keep-special-tokens") as url:
        assert _rewards(url) == [0.0, 0.0, 1.0]


@pytest.mark.slow
def test_serve_with_a_tokenizer_removes_its_own_special_tokens_only(tmp_path):
    tokenizer = _chatml_tokenizer(tmp_path / "tok")
    with _served(tmp_path, "--openrlhf-tokenizer", str(tokenizer)) as url:
        assert _rewards(url) == [1.0, 0.0, 1.0]  # `<eos>` is not ChatML's: it stays, and 4<eos> != 4


def test_serve_with_a_tokenizer_and_keep_special_tokens_is_a_usage_error(tmp_path, capsys):
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    argv = ["serve", str(spec), "--no-cache", "--openrlhf-tokenizer", str(tmp_path / "tok"), "--openrlhf-keep-special-tokens"]
    assert main(argv) == 2
    assert "contradict each other" in capsys.readouterr().err
