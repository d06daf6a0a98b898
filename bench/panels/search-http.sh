#!/usr/bin/env bash
# The HTTP server's own cost for `GET /w/<id>/search` (issue 20): a real
# `orbit open` on a 100-file workspace, curl logged in with its cookie and
# the page's Origin, N requests over one kept-alive connection; prints the
# time to first byte (Host/Origin/cookie checks, routing, the matcher, JSON)
# at p50/p99. Compare with the page's own round trip (completion.mjs).
#
#   bench/panels/search-http.sh [BIN] [N]   (default target/release/orbit, 300)
set -euo pipefail
BIN=${1:-$(dirname "$0")/../../target/release/orbit}; N=${2:-300}
root=$(mktemp -d /tmp/orbit-bench-search-http-XXXX)
mkdir -p "$root/ws/src" "$root/home"
for i in $(seq 0 99); do echo "pub fn f$i() {}" > "$root/ws/src/file_$i.rs"; done
export ORBIT_CONFIG_DIR=$root/state HOME=$root/home
"$BIN" trust "$root/ws" >/dev/null 2>&1
"$BIN" open --no-browser "$root/ws" > "$root/out" 2>/dev/null &
pid=$!
for _ in $(seq 50); do [ -s "$root/out" ] && break; sleep 0.1; done
login=$(head -1 "$root/out")
base=${login%%/login*}
host=${base#http://}
loc=$(curl -s -c "$root/jar" -o /dev/null -w '%{redirect_url}' "$login")
id=$(echo "$loc" | sed -E 's#.*/w/([0-9a-f]+)/.*#\1#')
sleep 1
urls=()
for i in $(seq $N); do urls+=(-o /dev/null "$base/w/$id/search?q=file$((i % 100))&limit=8"); done
curl -s -b "$root/jar" -H "Origin: $base" -w "%{http_code} %{time_starttransfer}\n" "${urls[@]}" > "$root/times"
kill $pid; wait $pid 2>/dev/null || true
awk "{print \$2}" "$root/times" | sort -n | awk -v n=$N '{a[NR]=$1} END {printf "curl /search time to first byte over %d requests (one connection): p50 %.2f ms, p99 %.2f ms\n", NR, a[int(NR*0.5)]*1000, a[int(NR*0.99)]*1000}'
rm -rf "$root"
