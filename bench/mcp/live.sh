#!/usr/bin/env bash
# The graph tools from a running Orbit's live graph vs scanning on their own.
# Usage: bench/mcp/live.sh [--files N] [--calls N]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p orbit --quiet
exec python3 bench/mcp/live.py "${CARGO_TARGET_DIR:-target}/release/orbit" "$@"
