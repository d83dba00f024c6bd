"""`python -m rewardlab.integrations.recipes [verl|openrlhf]`: the folder, or one file's path."""

import sys

from rewardlab.errors import ConfigError
from rewardlab.integrations.recipes import RECIPES, recipe

if __name__ == "__main__":
    try:
        print(recipe(sys.argv[1]) if len(sys.argv) > 1 else RECIPES)
    except ConfigError as exc:
        sys.exit(f"error: {exc}")
