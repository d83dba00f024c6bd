"""The rewards `rewardlab.multiobj` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. Both must stay literal dicts.
"""

BUILTINS: dict[str, str] = {
    "multiobj.curve": ".shapes:Curve",  # parameterised shape curves per objective (docs/multiobjective.md)
}

NEEDS: dict[str, tuple[str, ...]] = {
}
