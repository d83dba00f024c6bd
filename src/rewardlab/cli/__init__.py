"""The `rewardlab` command line: a thin typer shell over the library (one module per group)."""
