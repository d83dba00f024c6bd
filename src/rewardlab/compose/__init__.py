"""Declarative specs and combinators: build one Reward from named components.

    reward = rewardlab.compose.build("spec.toml")     # or TOML text, or a dict
    print(reward)                                     # the tree the spec built
"""

from rewardlab.compose.combinators import (
    Clip,
    Component,
    Composite,
    FormulaCombine,
    Gate,
    MaxOf,
    MinOf,
    Weighted,
)
from rewardlab.compose.formula import Formula, FormulaError
from rewardlab.compose.observer import ComponentObserver, ComponentTimes
from rewardlab.compose.spec import (
    ComponentSpec,
    RewardSpec,
    SpecFile,
    build,
    check,
    parse_spec,
)

__all__ = [
    "Clip",
    "Component",
    "ComponentObserver",
    "ComponentSpec",
    "ComponentTimes",
    "Composite",
    "Formula",
    "FormulaCombine",
    "FormulaError",
    "Gate",
    "MaxOf",
    "MinOf",
    "RewardSpec",
    "SpecFile",
    "Weighted",
    "build",
    "check",
    "parse_spec",
]
