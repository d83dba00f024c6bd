"""Model-free rewards: text, format, length, maths, code, structure, instructions.

Each module registers its rewards under dotted names in `rewardlab/verify/_registry.py`;
they are imported only when a spec uses them. This package exports no names of its own: a
reader imports from the sub-package or module that owns the reward (`verify.math`, `verify.code`,
`verify.text`, ...), as the docs do.
"""
