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
    ObjectiveSum,
    Weighted,
)
from rewardlab.compose.formula import Formula, FormulaError
from rewardlab.compose.objectives import WEIGHTS_KEY, Objective
from rewardlab.compose.observer import ComponentObserver, ComponentTimes
from rewardlab.compose.spec import (
    ComponentSpec,
    ObjectiveSpec,
    RewardSpec,
    SpecFile,
    build,
    check,
    parse_spec,
)

__all__ = [
    "WEIGHTS_KEY",
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
    "Objective",
    "ObjectiveSpec",
    "ObjectiveSum",
    "RewardSpec",
    "SpecFile",
    "Weighted",
    "build",
    "check",
    "parse_spec",
]
