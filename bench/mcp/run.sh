#!/usr/bin/env bash
# orbit-mcp's benchmark: tools/call round trip over stdio (p50, p99) for
# Orbit beside the Python and TypeScript MCP SDKs serving the same tool, the
# start-up to first answer, and the federated hop over a throwaway sshd.
# Usage: bench/mcp/run.sh [--calls N] [--no-sshd]
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(./scripts/setup-mcp --node | sed 's/^/export SETUP_/')"
cargo build --release -p orbit -p orbit-mcp --example bare_client --quiet
target="${CARGO_TARGET_DIR:-target}"
sshd=--sshd
args=()
for arg in "$@"; do
  if [ "$arg" = --no-sshd ]; then sshd=; else args+=("$arg"); fi
done
exec "$SETUP_python" bench/mcp/bench.py "$target/release/orbit" "$SETUP_python" "$SETUP_node" \
  --bare "$target/release/examples/bare_client" $sshd "${args[@]}"
