"""Model-free rewards: text, format, length, maths, code, structure, instructions.

Each module registers its rewards under dotted names in `rewardlab/verify/_registry.py`;
they are imported only when a spec uses them.
"""
