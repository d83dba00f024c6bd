"""Rewards with the semantics of OpenAI's grader types, for configs moved off the hosted graders.

`rewardlab import-grader grader.json` (see `rewardlab.integrations.openai_graders`) builds
specs out of these. Inputs are `{{ template }}` strings over the `sample` namespace
(`sample.output_text`, `sample.output_json`) and the `item` namespace (the dataset row:
`sample.meta` merged with an object reference), rendered by `rewardlab.templates`.

- `graders.string_check`: `eq`, `ne` (case-sensitive equality), `like` (input contains the
  reference), `ilike` (the same, case-insensitive); 1.0 or 0.0.
- `graders.text_similarity`: `fuzzy_match` (rapidfuzz `fuzz.WRatio` with its default
  processor, / 100), `bleu` (sacrebleu sentence BLEU / 100), `rouge_1`..`rouge_5`, `rouge_l`
  (rouge-score F-measure). `gleu`, `meteor` and `cosine` are refused when the spec is built
  (they need NLTK data or OpenAI's embedding model, which this offline build does not have).
- `graders.python`: `grade(sample, item) -> float` from the grader's `source`, run inside
  `rewardlab.sandbox` (bubblewrap namespaces + rlimits), never in this process.
"""

from __future__ import annotations

import json
import logging
import math
import sysconfig
from collections.abc import Callable
from typing import Any, Literal

from rewardlab.core import JSON, BaseReward, RewardResult, Sample
from rewardlab.core.choices import check_choice
from rewardlab.core.numbers import json_float
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.templates import render
from rewardlab.verify._common import response_text

Operation = Literal["eq", "ne", "like", "ilike"]
_UNSUPPORTED_METRICS = {
    "gleu": "needs NLTK's GLEU implementation",
    "meteor": "needs NLTK and its WordNet data download",
    "cosine": "needs OpenAI's text-embedding-3-large model",
}
_ROUGE = {f"rouge_{n}": f"rouge{n}" for n in range(1, 6)} | {"rouge_l": "rougeL"}


def _render(template: str, sample: Sample) -> str:
    response_text(sample)  # a non-string response is invalid input, whatever the template
    return render(template, sample)


_log = logging.getLogger(__name__)


class StringCheck(BaseReward):
    """OpenAI `string_check`: compare the rendered `input` with the rendered `reference`."""

    name = "graders.string_check"
    range = (0.0, 1.0)

    def __init__(self, *, operation: Operation, input: str = "{{ sample.output_text }}", reference: str = "{{ item.reference }}"):
        check_choice("operation", operation, Operation)
        self._op, self._input, self._reference = operation, input, reference

    def compute(self, sample: Sample) -> RewardResult:
        text, ref = _render(self._input, sample), _render(self._reference, sample)
        if self._op == "eq":
            hit = text == ref
        elif self._op == "ne":
            hit = text != ref
        elif self._op == "like":
            hit = ref in text
        else:
            hit = ref.casefold() in text.casefold()
        return RewardResult.ok(float(hit), info={"input": text[:200], "reference": ref[:200]})


class TextSimilarity(BaseReward):
    """OpenAI `text_similarity`: a similarity score in [0, 1] between rendered input and reference."""

    name = "graders.text_similarity"
    range = (0.0, 1.0)

    def __init__(self, *, evaluation_metric: str, input: str = "{{ sample.output_text }}", reference: str = "{{ item.reference }}"):
        if evaluation_metric in _UNSUPPORTED_METRICS:
            raise ConfigError(
                f"evaluation_metric {evaluation_metric!r} is not supported offline ({_UNSUPPORTED_METRICS[evaluation_metric]}); "
                "use fuzzy_match, bleu, rouge_1..rouge_5 or rouge_l"
            )
        self._metric: Callable[[str, str], float]
        if evaluation_metric == "fuzzy_match":
            from rapidfuzz import fuzz, utils

            self._metric = lambda text, ref: fuzz.WRatio(text, ref, processor=utils.default_process) / 100.0
        elif evaluation_metric == "bleu":
            from sacrebleu.metrics.bleu import BLEU

            bleu = BLEU(effective_order=True)
            self._metric = lambda text, ref: bleu.sentence_score(text, [ref]).score / 100.0
        elif evaluation_metric in _ROUGE:
            from rouge_score import rouge_scorer

            kind = _ROUGE[evaluation_metric]
            scorer = rouge_scorer.RougeScorer([kind])
            self._metric = lambda text, ref: scorer.score(ref, text)[kind].fmeasure
        else:
            raise ConfigError(f"unknown evaluation_metric {evaluation_metric!r}")
        self._input, self._reference = input, reference

    def compute(self, sample: Sample) -> RewardResult:
        text, ref = _render(self._input, sample), _render(self._reference, sample)
        return RewardResult.ok(min(1.0, max(0.0, float(self._metric(text, ref)))))


def grader_namespaces(sample: Sample) -> tuple[dict[str, JSON], dict[str, JSON]]:
    """OpenAI's `sample` and `item` dicts for one rewardlab Sample."""
    text = response_text(sample)
    try:
        output_json: JSON = json.loads(text)
    except ValueError:
        output_json = None
    item: dict[str, JSON] = dict(sample.meta)
    if isinstance(sample.reference, dict):
        item.update(sample.reference)
    elif sample.reference is not None:
        item.setdefault("reference", sample.reference)
    return {"output_text": text, "output_json": output_json}, item


class PythonGrader(BaseReward):
    """OpenAI `python` grader: `grade(sample, item) -> float` from `source`, in the sandbox.

    The grader runs as a module in a fresh sandboxed child (`rewardlab.sandbox`, bubblewrap
    when available). With `site_packages` (default), this environment's site-packages is
    visible read-only inside, so graders can import what OpenAI's grader image offers
    (numpy, rapidfuzz, ...). A grader that raises, returns a non-number, or is killed at
    its limits gives an `error` result (`crash`, `invalid_output`, `timeout`), never a 0.
    """

    name = "graders.python"

    def __init__(
        self,
        *,
        source: str,
        cpu_seconds: float = 5.0,
        wall_seconds: float = 20.0,
        memory_mb: int = 1024,
        workers: int = 2,
        site_packages: bool = True,
        isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto",
    ):
        try:
            compile(source, "<grader>", "exec")
        except SyntaxError as exc:
            raise ConfigError(f"python grader source does not compile: {exc}") from exc
        if "def grade" not in source:
            raise ConfigError("python grader source must define grade(sample, item)")
        from rewardlab.sandbox import Limits, SandboxConfig
        from rewardlab.sandbox.config import sandbox_path, site_packages_reachable

        path = sysconfig.get_paths()["purelib"]
        if site_packages and not site_packages_reachable(path):
            # The sandbox runs as `nobody`, which cannot enter this directory (e.g. a venv under
            # /root): without it, graders get the standard library only. Say so, once.
            _log.warning("site-packages %s is not readable by the sandbox user; python graders get the standard library only", path)
            site_packages = False
        binds = (path,) if site_packages else ()
        # Inside bubblewrap a site-packages under /tmp is bound at its alias; without bubblewrap
        # it is at its own path: append both, the one that exists is used.
        paths = [sandbox_path(path), path] if site_packages else []
        prefix = f"import sys as _rl_sys\n_rl_sys.path.extend({paths!r})\n" if site_packages else ""
        self._source = prefix + source
        self._limits = Limits(cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_bytes=memory_mb << 20)
        self._config = SandboxConfig(isolation=isolation, limits=self._limits, extra_ro_binds=binds)
        self._workers = workers

    def compute(self, sample: Sample) -> RewardResult:
        from rewardlab.sandbox import SandboxError
        from rewardlab.sandbox.session import CandidateError, SessionEnded
        from rewardlab.verify.code.reward import shared_pool

        namespace_sample, item = grader_namespaces(sample)
        pool = shared_pool(self._workers, self._config)
        try:
            with pool.session(self._source, limits=self._limits, module_name="grader") as session:
                value: Any = session.call("grade", namespace_sample, item)
        except CandidateError as exc:
            raise ScoringError("crash", f"the python grader raised: {exc}") from exc
        except SessionEnded as ended:
            kind = "timeout" if "timeout" in ended.result.outcome.value else "crash"
            raise ScoringError(kind, f"the python grader {ended}") from None
        except SandboxError as exc:
            raise ScoringError("sandbox", str(exc)) from exc
        score = json_float(value)
        if score is None or not math.isfinite(score):
            shown = type(value).__name__ if score is None else f"{value!r:.60}"
            raise ScoringError("invalid_output", f"grade() returned {shown}, expected a finite number")
        return RewardResult.ok(score, info={"isolation": pool.isolation})
