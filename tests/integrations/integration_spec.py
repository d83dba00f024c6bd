"""The spec every adapter test uses: format + exact match + a length term."""
SPEC = """
[reward]
name = "qa"

[[reward.components]]
name = "format"
use = "format.tags"
weight = 0.2

[[reward.components]]
name = "exact"
use = "text.exact"
weight = 1.0
params = { extract = "<answer>(.*?)</answer>" }

[[reward.components]]
name = "length"
use = "length.tokens"
weight = 0.1
params = { budget = 50 }
"""

GOOD = "<think>easy</think><answer>Paris</answer>"
WRONG = "<think>hmm</think><answer>Rome</answer>"


def tiny_tokenizer():
    """A byte-level BPE tokenizer trained here (no hub download), for tiny-model tests."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = ["<think> reasoning </think> <answer> Paris </answer>", "What is the capital of France?"] * 20
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<pad>", "<eos>", "<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


# A gate: `correct` is computed only when `format` passes, so some rows have no `correct`
# score (skipped), which is what trainers' per-row logs must survive.
GATED_SPEC = """
[reward]
name = "gated"

[[reward.components]]
name = "format"
use = "format.tags"
weight = 0.1

[[reward.components]]
name = "correct"
use = "text.exact"
weight = 1.0
requires = ["format"]
on_error = "skip"
params = { extract = "<answer>(.*?)</answer>" }

[[reward.components]]
name = "length"
use = "shaping.soft_overlong"
weight = 1.0
params = { max_length = 512, cache = 128, unit = "words" }
"""
UNFORMATTED = "<answer>Paris</answer>"  # no <think>: format fails, correct is gated off


def chatml_tokenizer():
    """A tiny byte-level BPE tokenizer with ChatML's special tokens (Qwen-style), trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    corpus = ["<think> reasoning </think> <answer> Paris Rome </answer>", "user assistant What is the capital of France?"] * 20
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|endoftext|>", eos_token="<|im_end|>", additional_special_tokens=["<|im_start|>"])


class LiveServer:
    """uvicorn serving `app` on a free 127.0.0.1 port in a background thread (a real socket)."""

    def __init__(self, app):
        import socket

        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))

    def __enter__(self):
        import threading
        import time

        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(20)
