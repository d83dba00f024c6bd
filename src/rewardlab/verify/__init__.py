"""Model-free rewards: text, format, length, maths, code, structure, instructions.

Each module registers its rewards under dotted names in `rewardlab.core.registry.BUILTINS`;
they are imported only when a spec uses them.
"""
