#!/usr/bin/env python3
"""Builds the map benchmark's workspaces out of the benchmark corpus.

    workspaces.py --orbit BIN --corpus CORPUS [--sizes 1000,10000,50000,100000]

The corpus (bench/run --setup) holds real trees: every npm package of
corpus/js/node_modules (three, rxjs, webpack and its dependencies,
monaco-editor), the Python packages of corpus/py (django, sympy) and every
crate of corpus/rust (the crates of orbit's Cargo.lock). orbit counts the
graph files of each tree once (one `orbit graph CORPUS/corpus --format json
--no-cache`, kept in CORPUS/scene/counts.json).

A workspace of about N files takes whole trees, largest first, skipping a
tree that would take it past N + 2%, until it holds at least N - 2%. The
corpus has about 34k files, so the larger sizes take it several times: copy 1
of the trees sits at the workspace's top (js/, py/, rust/), copy k >= 2 under
copy-k/ (the same trees again, in the same order, until the size is reached).
Files are hard links into the corpus (cp -al: quick, no space). A workspace
is rebuilt only when its list of trees changes (manifest.json in it).

Prints JSON: {"<N>": {"dir", "trees", "files"}} (files: orbit's count).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def trees(corpus: Path) -> list[tuple[str, str]]:
    """(kind, path relative to kind's folder) of every tree of the corpus."""
    out: list[tuple[str, str]] = []
    modules = corpus / "js" / "node_modules"
    for entry in sorted(os.listdir(modules)):
        if entry.startswith("."):
            continue
        if entry.startswith("@"):
            for sub in sorted(os.listdir(modules / entry)):
                out.append(("js", f"{entry}/{sub}"))
        else:
            out.append(("js", entry))
    for entry in sorted(os.listdir(corpus / "py")):
        if not entry.endswith(".dist-info") and (corpus / "py" / entry).is_dir():
            out.append(("py", entry))
    for entry in sorted(os.listdir(corpus / "rust")):
        out.append(("rust", entry))
    return out


def source(corpus: Path, kind: str, tree: str) -> Path:
    return corpus / kind / "node_modules" / tree if kind == "js" else corpus / kind / tree


def counts(orbit: str, root: Path, corpus: Path, cache: Path) -> dict[str, int]:
    """Graph files per tree ("kind/tree"), as orbit counts them."""
    stamps = root / "stamps"
    key = hashlib.sha256()
    for name in ("js-package-lock.json", "py", "rust-copied"):
        path = stamps / name
        key.update(path.read_bytes() if path.exists() else b"-")
    key = key.hexdigest()
    if cache.exists():
        kept = json.loads(cache.read_text())
        if kept.get("key") == key:
            return kept["counts"]
    print(f"[scene] counting the corpus's graph files ({corpus})", file=sys.stderr)
    out = subprocess.run(
        [orbit, "graph", str(corpus), "--format", "json", "--no-cache"],
        check=True, capture_output=True,
    ).stdout
    nodes = json.loads(out)["nodes"]
    per: dict[str, int] = {}
    all_trees = trees(corpus)
    prefixes = {}
    for kind, tree in all_trees:
        rel = source(corpus, kind, tree).relative_to(corpus).as_posix()
        prefixes[rel] = f"{kind}/{tree}"
    for node in nodes:
        parts = node["path"].split("/")
        # js/node_modules/<pkg> or js/node_modules/@scope/<pkg>; py/<pkg>; rust/<crate>
        for depth in (3, 4, 2):
            name = prefixes.get("/".join(parts[:depth]))
            if name:
                per[name] = per.get(name, 0) + 1
                break
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "counts": per}))
    return per


def select(per: dict[str, int], target: int) -> list[tuple[int, str, int]]:
    """(copy, "kind/tree", files) of the trees a workspace of ~target files takes."""
    order = sorted(((n, name) for name, n in per.items() if n > 0), key=lambda t: (-t[0], t[1]))
    total_all = sum(n for n, _ in order)
    if total_all == 0:
        raise SystemExit("the corpus has no graph files: run bench/run --setup")
    chosen: list[tuple[int, str, int]] = []
    total = 0
    low, high = target * 0.98, target * 1.02
    for copy in range(1, target // total_all + 3):
        for n, name in order:
            if total >= low:
                return chosen
            if total + n <= high:
                chosen.append((copy, name, n))
                total += n
    return chosen


def build(corpus: Path, dest: Path, chosen: list[tuple[int, str, int]]) -> None:
    manifest = {"trees": [[copy, name] for copy, name, _ in chosen]}
    marker = dest / "manifest.json"
    if marker.exists() and json.loads(marker.read_text()).get("trees") == manifest["trees"]:
        return
    print(f"[scene] building {dest} ({len(chosen)} trees)", file=sys.stderr)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for copy, name, _ in chosen:
        kind, tree = name.split("/", 1)
        target = dest / (f"copy-{copy}" if copy > 1 else "") / kind / tree
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(source(corpus, kind, tree)), str(target)], check=True)
    marker.write_text(json.dumps(manifest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--orbit", required=True)
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    args = parser.parse_args()
    root = args.corpus
    corpus = root / "corpus"
    for needed in (corpus / "js" / "node_modules", corpus / "py", corpus / "rust"):
        if not needed.is_dir():
            raise SystemExit(f"{needed} is missing: run bench/run --setup")
    per = counts(args.orbit, root, corpus, root / "scene" / "counts.json")
    result = {}
    for size in (int(s) for s in args.sizes.split(",")):
        chosen = select(per, size)
        dest = root / "scene" / f"ws-{size}"
        build(corpus, dest, chosen)
        result[str(size)] = {"dir": str(dest), "trees": len(chosen), "files": sum(n for *_, n in chosen)}
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
