#!/usr/bin/env bash
# OpenRLHF (0.11.2) PPO with rewards from `rewardlab serve`.
#
#   bash openrlhf_rewardlab.sh reward.toml --data.label_key answer ...   # train_ppo_ray's own flags
#
# Starts the reward server on loopback with a fresh token (OpenRLHF sends no Authorization
# header, so the token goes in the path), waits until /readyz answers, runs OpenRLHF's
# trainer with --reward.remote_url pointing at it, and stops the server when training ends.
# Settings (environment):
#   REWARDLAB_PORT          port of the reward server (default 5000)
#   REWARDLAB_HOST          address it binds (default 127.0.0.1; a cluster needs the node's address)
#   REWARDLAB_ERROR_REWARD  reward of a row that cannot be scored (default 0.0; flagged in extra_logs)
#   OPENRLHF_TRAIN          the training command (default: python -m openrlhf.cli.train_ppo_ray)
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 SPEC.toml [train_ppo_ray flags...]  (SPEC.toml must exist)" >&2
  exit 2
fi
spec="$1"; shift
port="${REWARDLAB_PORT:-5000}"
host="${REWARDLAB_HOST:-127.0.0.1}"
token="$(python -c 'import secrets; print(secrets.token_urlsafe(16))')"
rewardlab serve "$spec" --host "$host" --port "$port" --token "$token" \
  --openrlhf-error-reward "${REWARDLAB_ERROR_REWARD:-0.0}" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
ready=0
for _ in $(seq 1 300); do  # up to a minute: the server imports the spec's rewards first
  if python -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://$host:$port/readyz', timeout=1).status != 200)" 2>/dev/null; then
    ready=1; break
  fi
  kill -0 "$server" 2>/dev/null || { echo "rewardlab serve exited before it was ready" >&2; exit 1; }
  sleep 0.2
done
[ "$ready" = 1 ] || { echo "rewardlab serve was not ready after a minute" >&2; exit 1; }
read -r -a train <<< "${OPENRLHF_TRAIN:-python -m openrlhf.cli.train_ppo_ray}"
"${train[@]}" --reward.remote_url "http://$host:$port/openrlhf/$token/get_reward" "$@"
