"""The rewards `rewardlab.models` registers: dotted name -> ".module:attribute" (a module of
this package), and the optional modules each imports only when it scores.

Read as text by `rewardlab.core.registry` (never imported by it), so listing names imports
nothing; a reward's module is imported when a spec uses it. A new reward of this package
is one line in `BUILTINS` (and one in `NEEDS` if it imports an extra only when it scores).
Both must stay literal dicts of strings.
"""

BUILTINS: dict[str, str] = {
    "model.rm": ".reward:ModelReward",  # docs/models.md
    "model.prm": ".prm:ProcessReward",  # docs/models.md
    "model.hf": ".hf_reward:HFReward",  # docs/models.md
    "model.hf_prm": ".hf_prm:HFProcessReward",  # docs/models.md
}

NEEDS: dict[str, tuple[str, ...]] = {
    "model.rm": ("torch",),
    "model.prm": ("torch",),
    "model.hf": ("torch", "transformers"),
    "model.hf_prm": ("torch", "transformers"),
}
