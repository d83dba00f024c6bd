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
from rewardlab.compose.formula import Formula
from rewardlab.compose.objectives import Objective
from rewardlab.compose.observer import ComponentTimes
from rewardlab.compose.spec import build, check
from rewardlab.core.reward import ComponentObserver

__all__ = [
    "Clip",
    "Component",
    "ComponentObserver",
    "ComponentTimes",
    "Composite",
    "Formula",
    "FormulaCombine",
    "Gate",
    "MaxOf",
    "MinOf",
    "Objective",
    "Weighted",
    "build",
    "check",
]
