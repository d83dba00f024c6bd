"""The judge prompt templates, kept importable here: they live in `rewardlab.templates`, below
both `judges` and `verify` (whose graders render them too)."""

from rewardlab.templates import BUILTIN, PAIRWISE, parse_score, placeholders, render

__all__ = ["BUILTIN", "PAIRWISE", "parse_score", "placeholders", "render"]
