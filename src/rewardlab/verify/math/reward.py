"""`math.answer`: 1.0 when the response's final answer equals the reference, else 0.0.

A response without a findable answer scores 0.0 (a formatting failure is a wrong answer), and so
does a hedged one (several different boxed answers, `hedging.py`); a
verdict that cannot be reached (reference unparseable, sympy timeout, refused input) is an
`error` result with its `ErrorKind`, never a 0.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Literal

from rewardlab.core import JSON, BaseReward, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.verify._common import references
from rewardlab.verify.math.equivalence import check, hedge_alternatives
from rewardlab.verify.math.extract import (
    SOURCES,
    ExtractOptions,
    extract_answer,
    gold_boxes,
    gold_statement,
)
from rewardlab.verify.math.hedging import Hedge, final_answer
from rewardlab.verify.math.options import CheckOptions
from rewardlab.verify.math.verdict import Outcome, Verdict

__all__ = ["MathAnswer"]


class MathAnswer(BaseReward):
    """Final-answer correctness for maths: extract the answer, then compare it with the reference.

    The reference is a gold answer string (or a list of acceptable ones). With
    `reference_mode="auto"` a reference containing `\\boxed{}` (a full worked solution) is
    reduced to its boxed answer first. `info` holds the extracted and normalised answers, the
    verdict, the step that decided it and why; a hedged response has `method="hedge"` and the
    answers it offered in `info["candidates"]`.

    `approximate` decides whether a decimal that rounds an exact gold (`0.333` for `\\frac13`)
    counts: `"auto"` (the default) when the prompt asks for a decimal or a rounding ("to the
    nearest tenth", "as a decimal", "significant figures"), `"never"`, or `"always"`.
    """

    name = "math.answer"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        strict: bool = False,
        priority: list[str] | None = None,
        boxed: Literal["last", "first"] = "last",
        hedging: Literal["reject", "last"] = "reject",
        hedge_window: int = 300,
        reference_key: str | None = None,
        reference_mode: Literal["auto", "answer", "solution"] = "auto",
        timeout: float = 5.0,
        approximate: Literal["auto", "never", "always"] = "auto",
        min_sig_figs: int = 3,
        strip_units: bool = True,
        convert_units: bool = False,
        degrees: Literal["strip", "radians"] = "strip",
        percent: Literal["either", "strip", "fraction"] = "either",
        equations: bool = True,
        unparsed_reference: Literal["undecided", "text"] = "undecided",
    ):
        self.extract_options = ExtractOptions(
            priority=tuple(priority or SOURCES), strict=strict, boxed=boxed, hedging=hedging, hedge_window=hedge_window
        )
        self.check_options = CheckOptions(
            timeout=timeout,
            min_sig_figs=min_sig_figs,
            strip_units=strip_units,
            convert_units=convert_units,
            degrees=degrees,
            percent=percent,
            equations=equations,
            unparsed_reference=unparsed_reference,
        )
        check_choices(MathAnswer.__init__, approximate=approximate)
        self.check_options = replace(self.check_options, approximate=approximate == "always")
        self._approximate_options = replace(self.check_options, approximate=True)
        self._approximate = approximate
        self._reference_key = reference_key
        self._reference_mode = reference_mode
        self.params = {**self.params, "priority": list(self.extract_options.priority)}  # the order used

    def _reference_answer(self, ref: str) -> str:
        if self._reference_mode == "answer":
            return ref
        boxes = gold_boxes(ref)
        if boxes:  # a gold never hedges: several boxes side by side are the parts of one answer
            return ", ".join(boxes)
        statement = gold_statement(ref)  # a worked solution ending "The final answer is $X$."
        if statement is not None:
            return statement
        if self._reference_mode == "solution":
            extracted = extract_answer(ref).answer
            return extracted if extracted is not None else ref
        return ref

    def _options_for(self, sample: Sample) -> CheckOptions:
        """The check options for one sample: with `approximate="auto"`, decimal roundings of an
        exact gold count only when the question asks for a decimal or a rounding."""
        if self._approximate == "auto" and _asks_for_decimal(sample.prompt_text):
            return self._approximate_options
        return self.check_options

    def compute(self, sample: Sample) -> RewardResult:
        refs = [self._reference_answer(r) for r in references(sample, key=self._reference_key)]
        options = self._options_for(sample)
        extraction = extract_answer(sample.response_text, self.extract_options)
        info: dict[str, JSON] = {"extracted": extraction.answer, "source": extraction.source}
        if extraction.answer is None:
            info["reason"] = "no answer found in the response" + (" (strict: boxed or <answer> only)" if self.extract_options.strict else "")
            return RewardResult.ok(0.0, info=info)
        verdicts: list[Verdict] = []
        hedge: Hedge | None = None
        for ref in refs:
            answer = final_answer(extraction, ref, options)
            if isinstance(answer, Hedge):
                hedge = answer
            elif answer is not None:
                verdicts.append(check(ref, answer, options))
        if not verdicts and hedge is not None:  # hedged for every reference: a wrong answer
            info.update(verdict=Outcome.NOT_EQUIVALENT.value, method="hedge", reason=hedge.reason, candidates=list(hedge.candidates))
            return RewardResult.ok(0.0, info=info)
        best = _best(verdicts)
        info.update(
            reference=best.reference,
            candidate=best.candidate,
            verdict=best.outcome.value,
            method=best.method,
            reason=best.reason,
        )
        if best.method == "hedge":  # one box offering several answers (`1 \text{ or } 2`)
            info["candidates"] = hedge_alternatives(extraction.answer)
        if best.outcome is Outcome.UNDECIDED:
            return RewardResult.failure(best.error_kind or "unsupported", best.reason, info=info)
        return RewardResult.ok(1.0 if best.equivalent else 0.0, info=info)


# A question that asks for a decimal or a rounding: "as a decimal", "to the nearest tenth",
# "round your answer", "3 significant figures", "approximately how many".
_ASKS_DECIMAL_RE = re.compile(
    r"decimal|nearest\s+(?:tenth|hundredth|thousandth|whole|integer|cent|percent|degree|dollar|unit)"
    r"|\bround(?:ed|ing)?\b|significant\s+(?:figure|digit)|\bapproximat|\bestimat",
    re.IGNORECASE,
)


def _asks_for_decimal(prompt: str) -> bool:
    """Whether a question asks for a decimal or a rounded value (then a decimal that rounds an
    exact gold answer is what was asked for)."""
    return _ASKS_DECIMAL_RE.search(prompt[-4000:]) is not None


def _best(verdicts: list[Verdict]) -> Verdict:
    """Equivalent to any reference wins; otherwise undecided beats a 0 (it must not hide)."""
    for outcome in (Outcome.EQUIVALENT, Outcome.UNDECIDED):
        for v in verdicts:
            if v.outcome is outcome:
                return v
    return verdicts[0]
