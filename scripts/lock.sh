#!/usr/bin/env bash
# Writes requirements-dev.lock: the exact versions that `make test`, `make demo` and CI install.
#
# It resolves the project's own open ranges (pyproject.toml, the `dev` extra, which pulls every
# other extra) in a throw-away virtualenv, as a user installing today would, and freezes the
# result. Run it (`make lock`), then `make clean test` to check the suite on the new versions,
# and commit the lock with the result. The package's own dependency ranges stay open for users:
# the lock is a pip constraints file, used only by this repository's Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PY" -m venv "$work/venv"
pip="$work/venv/bin/pip"
"$pip" install -q --upgrade pip
# torch first, from the machine's CPU build, so nothing resolves a CUDA build (DESIGN.md)
"$pip" install -q "torch==2.13.0"
# the same extra packages the Makefile adds for the verl adapter tests
"$pip" install -q -e ".[dev]" "tensordict==0.10.0" omegaconf
{
  echo "# Exact versions the repository's Makefile (make test, make demo, CI) installs with."
  echo "# Written by scripts/lock.sh (make lock) on $(date -u +%Y-%m-%d) with $("$work/venv/bin/python" -V)."
  echo "# verl, openrlhf and imitation are pinned in the Makefile (installed without their deps)."
  "$pip" freeze --exclude-editable | grep -v -i -E '^(verl|openrlhf|imitation)=='
} > requirements-dev.lock
echo "wrote requirements-dev.lock ($(grep -c '==' requirements-dev.lock) pins)"
