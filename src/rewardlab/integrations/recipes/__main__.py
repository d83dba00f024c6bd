"""`python -m rewardlab.integrations.recipes [verl|openrlhf]`: the folder, or one file's path."""

import sys

from rewardlab.integrations.recipes import RECIPES, recipe

print(recipe(sys.argv[1]) if len(sys.argv) > 1 else RECIPES)
