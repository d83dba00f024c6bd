"""`model.hf_prm`: off-the-shelf process reward models, one score per step of `Sample.steps`.

    [[reward.components]]
    name = "prm"
    use = "model.hf_prm"
    params = { model = "Qwen/Qwen2.5-Math-PRM-7B", trust_remote_code = true, device = "cuda",
               system_prompt = "Please reason step by step, and put your final answer within \\\\boxed{}." }

The step-tag scheme: the response is the steps, each followed by a tag token (`step_tag`,
Qwen2.5-Math-PRM's `<extra_0>` by default), rendered with the model's chat template; the model
reads the whole solution once and its output *at each tag* is that step's score:

* a token classifier (`AutoModelForTokenClassification`, or the remote code of
  Qwen2.5-Math-PRM, whose output is (B, T, 2) logits too): softmax over the labels, the
  probability of `positive_label` (Qwen2.5-Math-PRM's model card: index 1); a one-label
  classifier: the sigmoid of its logit;
* a causal LM with `good_token` and `bad_token` (Math-Shepherd, Wang et al. 2024, with tag
  `ки`, tokens `+` / `-`): softmax over the two tokens' logits at the tag, P(good).

The score is the steps' aggregate (`rewardlab.shape.aggregate_steps`: `min` by default, after
Lightman et al. 2023). Every step must be read, so only the prompt is ever cut to fit
`max_length`; a solution whose steps alone do not fit is `error/invalid_input`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

try:
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.core.sample import JSON
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.models.hf_batch import Encoded, InputBuilder, score_each
from rewardlab.models.hf_load import Dtype, load_model, rebuild, remote_kind, scoring_params

__all__ = ["HFProcessReward"]

Aggregate = Literal["min", "product", "mean", "last"]


class HFProcessReward(BaseReward):
    """Step scores of an off-the-shelf PRM in `RewardResult.steps`, their aggregate as the score.

    Args:
        model, revision, device, dtype, chat_template, system_prompt, max_length,
            max_tokens_per_batch, max_batch_size, trust_remote_code: as in `model.hf`.
        step_tag: the token after each step whose output scores the step; one token of the
            tokenizer.
        after_step: the text appended to each step (default: `step_tag`; Math-Shepherd's is
            `" ки\\n"`); it must contain `step_tag` once.
        positive_label: the label index that means "this step is correct" (token classifiers).
        good_token, bad_token: read a causal LM's logits of these two tokens instead.
        aggregate: `min`, `product`, `mean` or `last` of the step scores.

    Raises:
        ModelNotFoundError: the model is not a directory and not in the local cache.
        MissingWeightsError: the checkpoint lacks weights of the class it is loaded as (a base
            encoder, a policy or a base model without its trained head); a `ConfigError`.
        ConfigError: a tag or token that is not one token, a label the model does not have.
    """

    name = "model.hf_prm"
    #: the server computes it in its own process, one loaded copy, batched across clients
    batches_in_process = True
    range = (0.0, 1.0)

    def __init__(self, *, model: str, revision: str | None = None, device: str = "cpu", dtype: Dtype = "auto",
                 step_tag: str = "<extra_0>", after_step: str | None = None, positive_label: int = 1,
                 good_token: str | None = None, bad_token: str | None = None, aggregate: Aggregate = "min",
                 chat_template: bool | None = None, system_prompt: str | None = None, max_length: int | None = None,
                 max_tokens_per_batch: int = 16384, max_batch_size: int = 64, trust_remote_code: bool = False):
        check_choices(HFProcessReward.__init__, aggregate=aggregate)
        if (good_token is None) != (bad_token is None):
            raise ConfigError("give both good_token and bad_token (a causal-LM PRM), or neither")
        self.after_step = step_tag if after_step is None else after_step
        if self.after_step.count(step_tag) != 1:
            raise ConfigError(f"after_step {self.after_step!r} must contain step_tag {step_tag!r} exactly once")
        kind = "causal_lm" if good_token is not None else remote_kind(model, "token", revision=revision,
                                                                        trust_remote_code=trust_remote_code)
        self.loaded = load_model(model, kind=kind, device=device, dtype=dtype, revision=revision,
                                 trust_remote_code=trust_remote_code)
        self.inputs = InputBuilder(self.loaded, chat_template=chat_template, system_prompt=system_prompt,
                                   max_length=max_length)
        self.tag_id = self._single_token(step_tag, "step_tag")
        self.lm_tokens = None
        if good_token is not None and bad_token is not None:
            self.lm_tokens = (self._single_token(good_token, "good_token"), self._single_token(bad_token, "bad_token"))
        n_labels = int(getattr(self.loaded.config, "num_labels", 2))
        if self.lm_tokens is None and kind != "remote" and not 0 <= positive_label < max(n_labels, 2):
            raise ConfigError(f"positive_label {positive_label} is not a label of this model ({n_labels} labels)")
        self.positive_label, self.aggregate = positive_label, aggregate
        self.max_tokens_per_batch, self.max_batch_size = max_tokens_per_batch, max_batch_size
        self.params = scoring_params(self.params, after_step=self.after_step, chat_template=self.inputs.use_template,
                                     max_length=self.inputs.max_length)

    def __reduce__(self) -> tuple[Any, tuple[type, dict[str, Any]]]:
        """Pickled as its parameters (see `hf_load.rebuild`), never as the loaded weights."""
        batches = {"max_tokens_per_batch": self.max_tokens_per_batch, "max_batch_size": self.max_batch_size}
        return rebuild, (type(self), {**self.params, **batches})

    def _single_token(self, text: str, what: str) -> int:
        tok = self.loaded.tokenizer
        ids = tok(text, add_special_tokens=False)["input_ids"]
        if len(ids) != 1 or ids[0] == tok.unk_token_id:
            raise ConfigError(f"{what} {text!r} is {len(ids)} token(s) {ids} in this tokenizer; it must be exactly "
                              "one known token (add it to the tokenizer, or pick the model's own tag)")
        return int(ids[0])

    # -- scoring ---------------------------------------------------------------------------
    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return score_each(samples, self._encode, self.loaded, self._read, self._result,
                          max_tokens=self.max_tokens_per_batch, max_batch=self.max_batch_size)

    def _encode(self, sample: Sample) -> Encoded:
        if not sample.steps:
            raise ScoringError(ErrorKind.INVALID_INPUT, "no steps: a process reward model needs Sample.steps")
        content = "".join(step + self.after_step for step in sample.steps)
        encoded = self.inputs.encode(sample.prompt, [{"role": "assistant", "content": content}], cut_response=False)
        found = encoded.ids.count(self.tag_id)
        if found != len(sample.steps):
            raise ScoringError(ErrorKind.INVALID_INPUT, f"{found} step tags in the input for {len(sample.steps)} steps: "
                               "a step or the prompt contains the step tag itself; remove it from the text")
        return encoded

    def _read(self, output: Any, inputs: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """Per row: the step probabilities (n_steps,), read at the tag positions."""
        logits = getattr(output, "logits", None)
        if logits is None:
            logits = output[0]  # remote code (Qwen2.5-Math-PRM) returns a tuple
        logits = logits.float()  # (B, T, L) or (B, T, vocab)
        tags = (inputs["input_ids"] == self.tag_id) & (inputs["attention_mask"] == 1)  # (B, T)
        rows = []
        for b in range(logits.shape[0]):
            at_tags = logits[b, tags[b].nonzero()[:, 0]]  # (n_steps, L), in step order
            if self.lm_tokens is not None:
                probs = torch.softmax(at_tags[:, list(self.lm_tokens)], -1)[:, 0]
            elif at_tags.shape[-1] == 1:
                probs = torch.sigmoid(at_tags[:, 0])
            else:
                probs = torch.softmax(at_tags, -1)[:, self.positive_label]
            rows.append(probs.cpu())
        return rows

    def _result(self, probs: torch.Tensor, cut: dict[str, JSON] | None) -> RewardResult:
        from rewardlab.shape import aggregate_steps

        steps = tuple(float(p) for p in probs)
        info: dict[str, JSON] = {"aggregate": self.aggregate}
        if cut is not None:
            info["truncated"] = cut
        total = float(aggregate_steps(probs.double().numpy()[None], how=self.aggregate)[0])
        return RewardResult.ok(total, steps=steps, info=info)

