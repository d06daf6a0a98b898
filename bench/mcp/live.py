"""The graph tools answered from a running Orbit's live graph against the
same tools scanning on their own (with a warm parse cache), in one run:
`orbit mcp` on a synthetic TypeScript workspace, first with no Orbit keeping
the workspace live (every call scans: `"source": "scan"`), then with
`orbit graph --watch` running (every call asks its workspace socket:
`"source": "live"`). Prints p50/p99 per tool and the ratio scan / live.

Usage: live.py ORBIT_BIN [--files N] [--calls N]
Run it through bench/mcp/live.sh, which builds the release binary.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Bare, percentile  # noqa: E402


def workspace(root, files):
    """`files` TypeScript files in folders of 100, each importing the next
    two of its folder and one of the folder before."""
    per = 100
    for n in range(files):
        folder, i = divmod(n, per)
        path = os.path.join(root, "src", f"d{folder}", f"m{i}.ts")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lines = [f"import {{ x{j} }} from './m{j}';" for j in (i + 1, i + 2) if j < per and n + (j - i) < files]
        if folder > 0:
            lines.append(f"import {{ y }} from '../d{folder - 1}/m{i}';")
        lines.append(f"export const x{i} = {n};")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


CALLS = [
    ("orbit_graph_stats", {}),
    ("orbit_graph_files", {"pattern": "src/d1/*.ts", "limit": 50}),
    ("orbit_graph_imports", {"file": "src/d3/m7.ts"}),
    ("orbit_graph_dependents", {"file": "src/d0/m50.ts", "depth": 3}),
]


def timed(client, calls, source):
    rows = {}
    for tool, arguments in CALLS:
        for _ in range(2):  # warm-up
            client.request("tools/call", {"name": tool, "arguments": arguments})
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            result = client.request("tools/call", {"name": tool, "arguments": arguments})
            times.append((time.perf_counter() - started) * 1e3)
            got = result.get("structuredContent", {}).get("source")
            if got != source:
                raise RuntimeError(f"{tool}: expected source {source}, got {got}: {result}")
        rows[tool] = (percentile(times, 50), percentile(times, 99))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("orbit")
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "app")
        workspace(work, args.files)
        # Past the parse cache's racy window (files changed within 2 s of a
        # scan are not cached), so that the warm-up below warms it.
        time.sleep(2.5)
        env = dict(os.environ, HOME=tmp, ORBIT_CONFIG_DIR=os.path.join(tmp, "config"),
                   ORBIT_CACHE_DIR=os.path.join(tmp, "cache"))
        env.pop("ORBIT_LOG", None)
        # A warm parse cache, as a scan after the first would have.
        subprocess.run([args.orbit, "graph", "--format", "stats", work], env=env,
                       stdout=subprocess.DEVNULL, check=True)
        client = Bare([args.orbit, "mcp", "--workspace", work], env=env)
        client.handshake()
        scan = timed(client, args.calls, "scan")
        watch = subprocess.Popen([args.orbit, "graph", "--format", "stats", "--watch", work],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            while True:
                line = watch.stderr.readline().decode()
                if not line:
                    raise RuntimeError("orbit graph --watch ended")
                if "answering Orbit's graph tools" in line:
                    break
            live = timed(client, args.calls * 10, "live")
        finally:
            watch.terminate()
            watch.wait()
            client.close()
    print(f"graph tools over stdio, {args.files} files, warm parse cache; "
          f"{args.calls} calls scanning, {args.calls * 10} answered live")
    print(f"{'tool':26} {'scan p50':>10} {'scan p99':>10} {'live p50':>10} {'live p99':>10} {'scan/live':>10}")
    for tool, _ in CALLS:
        (sp50, sp99), (lp50, lp99) = scan[tool], live[tool]
        print(f"{tool:26} {sp50:8.2f}ms {sp99:8.2f}ms {lp50:8.3f}ms {lp99:8.3f}ms {sp50 / lp50:9.0f}x")


if __name__ == "__main__":
    main()
