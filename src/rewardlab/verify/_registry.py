"""The rewards `rewardlab.verify` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. A new reward of this package
is one line in `BUILTINS` (and one in `NEEDS` if it imports an extra only when it scores).
Both must stay literal dicts of strings.
"""

BUILTINS: dict[str, str] = {
    "text.exact": ".text:ExactMatch",
    "text.regex": ".text:RegexMatch",
    "format.tags": ".format:TagFormat",
    "length.tokens": ".length:LengthTerm",
    # the everyday reward zoo (docs/rewards.md)
    "text.normalized": ".text:NormalizedMatch",
    "text.f1": ".text:TokenF1",
    "text.choice": ".text:ChoiceMatch",
    "text.contains": ".text:Contains",
    "text.keywords": ".text:KeywordCoverage",
    "similarity.bleu": ".similarity:BLEU",
    "similarity.chrf": ".similarity:ChrF",
    "similarity.rouge": ".similarity:ROUGE",
    "similarity.fuzzy": ".similarity:Fuzzy",
    "structure.json": ".structure:JSONValid",
    "structure.json_schema": ".structure:JSONSchemaValid",
    "structure.tool_call": ".structure:ToolCallMatch",
    "structure.xml": ".structure:XMLWellFormed",
    "geometry.box_iou": ".geometry:BoxIoU",
    "geometry.interval_iou": ".geometry:IntervalIoU",
    "sets.f1": ".geometry:SetF1",
    "sets.ordered": ".geometry:OrderedMatch",
    "shaping.soft_overlong": ".shaping_terms:SoftOverlong",
    "shaping.cosine": ".shaping_terms:CosineScaled",
    "shaping.repetition": ".shaping_terms:RepetitionPenalty",
    "shaping.length_budget": ".shaping_terms:LengthBudget",
    "shaping.adaptive_length": ".shaping_terms:AdaptiveLengthPenalty",
    "ifeval.constraints": ".ifeval:IFEvalConstraints",
    "graders.string_check": ".graders:StringCheck",
    "graders.text_similarity": ".graders:TextSimilarity",
    "graders.python": ".graders:PythonGrader",
    "math.answer": ".math.reward:MathAnswer",  # docs/math.md
    "code.tests": ".code.reward:CodeTests",  # docs/code.md
}

NEEDS: dict[str, tuple[str, ...]] = {
    "similarity.bleu": ("sacrebleu",),
    "similarity.chrf": ("sacrebleu",),
    "similarity.rouge": ("rouge_score",),
    "similarity.fuzzy": ("rapidfuzz",),
    "structure.json_schema": ("jsonschema",),
    "graders.text_similarity": ("rapidfuzz", "sacrebleu", "rouge_score"),
    "math.answer": ("sympy", "latex2sympy2_extended"),
}
