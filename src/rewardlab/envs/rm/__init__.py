"""Reward machines: format, guard parser, text importer, wrapper, counterfactuals, shaping."""

from rewardlab.envs.rm.compiled import CompiledMachines
from rewardlab.envs.rm.guard import Guard, parse_guard
from rewardlab.envs.rm.labels import InfoLabels
from rewardlab.envs.rm.machine import Edge, RewardMachine, RMStep, RMTables
from rewardlab.envs.rm.shaping import rm_potentials, rm_values
from rewardlab.envs.rm.text import parse_text_rm, to_text_rm
from rewardlab.errors import NoTransitionError

__all__ = [
    "CompiledMachines",
    "Edge",
    "Guard",
    "InfoLabels",
    "NoTransitionError",
    "RMStep",
    "RMTables",
    "RewardMachine",
    "parse_guard",
    "parse_text_rm",
    "rm_potentials",
    "rm_values",
    "to_text_rm",
]
