#!/usr/bin/env bash
# The keypad hub's benchmark (bench/README.md, "Keypad hub"): req/s and
# p50/p99 at and past the global limit vs a GET /info baseline in the same
# run, memory with 8 x 32 sessions, and callgrind instructions per session
# update (the difference of two runs, 2000 and 0 updates, over 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p orbtile --example hub_bench --quiet
bin="${CARGO_TARGET_DIR:-target}/release/examples/hub_bench"
"$bin"
if command -v valgrind >/dev/null; then
  out=$(mktemp -d)
  for n in 0 2000; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$n" "$bin" --updates "$n" >/dev/null 2>"$out/log.$n"
  done
  total() { grep -m1 '^summary:\|^totals:' "$1" | awk '{print $2}'; }
  a=$(total "$out/cg.0"); b=$(total "$out/cg.2000")
  echo "callgrind: $(( (b - a) / 2000 )) instructions per session update (Hub::handle: auth, route, limits, JSON, validation, merge; 1.5 KB message)"
  rm -rf "$out"
else
  echo "callgrind: valgrind not installed; skipped"
fi
