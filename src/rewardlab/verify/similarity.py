"""Similarity rewards against reference text: BLEU, chrF, ROUGE, fuzzy string ratios.

Each is a thin, tested wrapper over the library practitioners already report with, so a
score here equals the number the library prints: sacrebleu (Post 2018) for BLEU and chrF,
Google's `rouge-score` for ROUGE, rapidfuzz for Levenshtein-based ratios. All scores are
rescaled to [0, 1]; with several references the best one counts (BLEU/chrF use all of them
as multi-reference, as sacrebleu does).
"""

from __future__ import annotations

from typing import Any, Literal

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError
from rewardlab.verify._common import references, response_text

FuzzyMethod = Literal["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "WRatio"]
RougeType = Literal["rouge1", "rouge2", "rougeL", "rougeLsum"]


class BLEU(BaseReward):
    """Sentence BLEU (sacrebleu, exponential smoothing by default) / 100, in [0, 1]."""

    name = "similarity.bleu"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        smooth_method: Literal["exp", "floor", "add-k", "none"] = "exp",
        lowercase: bool = False,
        reference_key: str | None = None,
    ):
        from sacrebleu.metrics.bleu import BLEU as SacreBLEU

        # effective_order: sentence-level BLEU without zero n-gram orders collapsing it to 0.
        try:
            self._metric = SacreBLEU(
                tokenize=tokenize, smooth_method=smooth_method, lowercase=lowercase, effective_order=True
            )
        except KeyError as exc:  # sacrebleu looks tokenizers up in a dict
            known = ", ".join(sorted(SacreBLEU.TOKENIZERS))
            raise ConfigError(f"unknown sacrebleu tokenize {tokenize!r}; known: {known}") from exc
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        result = self._metric.sentence_score(response_text(sample), refs)
        return RewardResult.ok(min(1.0, result.score / 100.0), info={"bleu": result.score})


class ChrF(BaseReward):
    """Sentence chrF (or chrF++ with `word_order=2`) from sacrebleu / 100, in [0, 1]."""

    name = "similarity.chrf"
    range = (0.0, 1.0)

    def __init__(self, *, word_order: int = 0, lowercase: bool = False, reference_key: str | None = None):
        from sacrebleu.metrics.chrf import CHRF

        if word_order < 0:
            raise ConfigError(f"word_order must be >= 0, got {word_order}")
        self._metric = CHRF(word_order=word_order, lowercase=lowercase)
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        result = self._metric.sentence_score(response_text(sample), refs)
        return RewardResult.ok(min(1.0, result.score / 100.0), info={"chrf": result.score})


class ROUGE(BaseReward):
    """ROUGE F-measure (`rouge-score`), best over references, in [0, 1]."""

    name = "similarity.rouge"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        rouge_type: RougeType = "rougeL",
        measure: Literal["fmeasure", "precision", "recall"] = "fmeasure",
        use_stemmer: bool = False,
        reference_key: str | None = None,
    ):
        from rouge_score import rouge_scorer

        self._scorer: Any = rouge_scorer.RougeScorer([rouge_type], use_stemmer=use_stemmer)
        self._type, self._measure, self._reference_key = rouge_type, measure, reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        text = response_text(sample)
        # rouge-score's signature is score(target, prediction): the reference comes first.
        scores = [getattr(self._scorer.score(ref, text)[self._type], self._measure) for ref in refs]
        return RewardResult.ok(max(scores), info={self._type: max(scores)})


class Fuzzy(BaseReward):
    """rapidfuzz string ratio / 100 (Levenshtein-based), best over references, in [0, 1].

    `method` picks the rapidfuzz scorer (`ratio`, `partial_ratio`, `token_sort_ratio`,
    `token_set_ratio`, `WRatio`); `lowercase` and whitespace trimming are rapidfuzz's default
    processor (`utils.default_process`) when `process` is true.
    """

    name = "similarity.fuzzy"
    range = (0.0, 1.0)

    def __init__(self, *, method: FuzzyMethod = "ratio", process: bool = True, reference_key: str | None = None):
        from rapidfuzz import fuzz, utils

        if not hasattr(fuzz, method):
            raise ConfigError(f"unknown rapidfuzz method {method!r}")
        self._scorer = getattr(fuzz, method)
        self._processor = utils.default_process if process else None
        self._reference_key = reference_key

    def compute(self, sample: Sample) -> RewardResult:
        refs = references(sample, key=self._reference_key)
        text = response_text(sample)
        best = max(self._scorer(text, ref, processor=self._processor) for ref in refs)
        return RewardResult.ok(best / 100.0, info={"ratio": best})
