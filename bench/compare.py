#!/usr/bin/env python3
"""Two (or more) orbit binaries side by side on the quick corpus, interleaved
run by run with ripgrep, so that all see the same machine load: a busy
machine moves absolute times (and `bench/run`'s ratios) by tens of percent,
but not which binary is faster.

    bench/compare.py before=/path/to/orbit after=target/release/orbit [--runs 7]

For each of rxjs, django and the Rust crates (fetched by `bench/run
--setup`): ripgrep over orbit's nodes (as in `bench/run`), then each
binary's cold build (a new cache folder) and warm start (a cache folder
filled once before), best of N, as ms and as a ratio to ripgrep.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def corpora(base: Path) -> dict[str, Path]:
    return {
        "rxjs": base / "side" / "rxjs",
        "django": base / "side" / "py-django-6.1.3",
        "rust": base / "corpus" / "rust",
    }


def timed(command: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def argument_groups(paths: list[str], budget: int = 512 * 1024) -> list[list[str]]:
    groups, group, size = [], [], 0
    for path in paths:
        cost = len(path) + 1
        if group and size + cost > budget:
            groups.append(group)
            group, size = [], 0
        group.append(path)
        size += cost
    if group:
        groups.append(group)
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="NAME=PATH of an orbit binary")
    parser.add_argument("--runs", type=int, default=7)
    default_corpus = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "orbit-bench"
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("ORBIT_BENCH_CORPUS", default_corpus)))
    args = parser.parse_args()
    binaries = dict(item.split("=", 1) for item in args.binaries)
    first = next(iter(binaries.values()))
    for name, root in corpora(args.corpus).items():
        graph = subprocess.run([first, "graph", str(root), "--format", "json", "--no-cache"],
                               capture_output=True, check=True).stdout
        groups = argument_groups([node["path"] for node in json.loads(graph)["nodes"]])

        def ripgrep() -> float:
            started = time.perf_counter()
            for group in groups:
                subprocess.run(["rg", "--no-config", "--count-matches", "import", "--", *group],
                               cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - started

        ripgrep()  # the page cache
        times: dict[str, list[float]] = {"rg": []}
        warm: dict[str, str] = {}
        for label, binary in binaries.items():
            warm[label] = tempfile.mkdtemp(prefix="orbit-compare-")
            timed([binary, "graph", str(root), "--format", "stats", "--cache-dir", warm[label]])
            times[f"{label} cold"], times[f"{label} warm"] = [], []
        for _ in range(args.runs):
            times["rg"].append(ripgrep())
            for label, binary in binaries.items():
                cold = tempfile.mkdtemp(prefix="orbit-compare-")
                times[f"{label} cold"].append(timed([binary, "graph", str(root), "--format", "stats", "--cache-dir", cold]))
                shutil.rmtree(cold)
                times[f"{label} warm"].append(timed([binary, "graph", str(root), "--format", "stats", "--cache-dir", warm[label]]))
        for folder in warm.values():
            shutil.rmtree(folder)
        best = {key: min(values) * 1000 for key, values in times.items()}
        cells = [f"{key} {best[key]:.0f} ms = {best[key] / best['rg']:.2f}x" for key in times if key != "rg"]
        print(f"{name}: rg {best['rg']:.0f} ms | " + " | ".join(cells), flush=True)
    print("load average (1, 5, 15 min):", " ".join(f"{load:.1f}" for load in os.getloadavg()))


if __name__ == "__main__":
    main()
