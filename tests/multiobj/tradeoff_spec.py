"""A weight-conditioned spec shared by the multi-objective edge tests (built-in rewards only,
so a server or a worker process builds it the same way)."""

TRADEOFF_SPEC = """
[reward]
name = "tradeoff"
combine = "objectives"

[[reward.components]]
name = "f1"
use = "text.f1"

[[reward.components]]
name = "brevity"
use = "multiobj.curve"
params = { of = "length.tokens", of_params = { budget = 3, overflow = 6 }, curve = "power", exponent = 2.0 }

[[reward.objectives]]
name = "accuracy"
expr = "f1"
weight = 0.5

[[reward.objectives]]
name = "brevity"
expr = "brevity"
weight = 0.5
"""

RESPONSES = [
    "Paris",
    "The capital of France is Paris",
    "It is Paris, a city on the Seine with many museums and cafes",
    "Rome",
]
