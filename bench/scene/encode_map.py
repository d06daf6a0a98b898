#!/usr/bin/env python3
"""A stand-in for `GET /w/<id>/map` when the Orbit being measured has none.

    encode_map.py --orbit BIN WORKSPACE OUT.bin

Writes the map's binary snapshot (docs/page-protocol.md, "The map") of
`orbit graph WORKSPACE --format json`, laid out by a simple rule: each
folder's own files in a square grid block, its sub-folders' regions beside
it, shelf-packed (rows of items, tallest first), one unit of margin. The bench
uses it only for the baseline pages, and only when orbit answers 404 to
/map (its results then say `"mapSource": "stand-in"`); with a map-serving
orbit the baselines draw exactly the bytes Orbit served.
"""

import argparse
import json
import math
import struct
import subprocess
from pathlib import Path

LANGUAGES = ["typescript", "javascript", "python", "rust", "go", "java", "kotlin", "c", "cpp",
             "markdown", "json", "toml", "yaml", "html", "css", "shell", "text"]


def pad4(b: bytearray) -> None:
    b.extend(b"\0" * (-len(b) % 4))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--orbit", required=True)
    parser.add_argument("workspace")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    graph = json.loads(subprocess.run([args.orbit, "graph", args.workspace, "--format", "json"],
                                      check=True, capture_output=True).stdout)
    nodes = sorted(graph["nodes"], key=lambda n: n["path"].encode())
    index = {n["path"]: i for i, n in enumerate(nodes)}
    pairs: dict[tuple[int, int], int] = {}
    for e in graph["edges"]:
        a, b = index.get(e["from"]), index.get(e["to"])
        if a is not None and b is not None and a != b:
            pairs[(a, b)] = pairs.get((a, b), 0) + 1

    folders = {"": {"files": [], "kids": []}}
    for i, n in enumerate(nodes):
        parts = n["path"].split("/")
        parent = ""
        for depth in range(1, len(parts)):
            path = "/".join(parts[:depth])
            if path not in folders:
                folders[path] = {"files": [], "kids": []}
                folders[parent]["kids"].append(path)
            parent = path
        folders[parent]["files"].append(i)

    size: dict[str, tuple[float, float]] = {}
    place: dict[str, list] = {}

    def measure(path: str) -> tuple[float, float]:
        f = folders[path]
        items = []
        k = len(f["files"])
        if k:
            cols = math.ceil(math.sqrt(k))
            items.append(("files", cols, math.ceil(k / cols)))
        for kid in f["kids"]:
            w, h = measure(kid)
            items.append((kid, w, h))
        items.sort(key=lambda t: -t[2])
        limit = max([w for _, w, _ in items] + [math.sqrt(sum(w * h for _, w, h in items)) * 1.2])
        x = y = row_h = width = 0.0
        spots = []
        for name, w, h in items:
            if x > 0 and x + w > limit:
                y += row_h + 1
                x = row_h = 0.0
            spots.append((name, x + 1, y + 1, w, h))
            x += w + 1
            row_h = max(row_h, h)
            width = max(width, x)
        place[path] = spots
        size[path] = (width + 1, y + row_h + 2)
        return size[path]

    measure("")
    positions = [0.0] * (2 * len(nodes))
    rects: dict[str, tuple[float, float, float, float]] = {}

    def assign(path: str, ox: float, oy: float) -> None:
        rects[path] = (ox, oy, *size[path])
        for name, x, y, w, _ in place[path]:
            if name == "files":
                for j, i in enumerate(folders[path]["files"]):
                    positions[2 * i] = ox + x + (j % int(w)) + 0.5
                    positions[2 * i + 1] = oy + y + (j // int(w)) + 0.5
            else:
                assign(name, ox + x, oy + y)

    assign("", 0.0, 0.0)
    order = [""] + sorted(p for p in folders if p)
    findex = {p: i for i, p in enumerate(order)}

    strings = bytearray()
    node_end = []
    for n in nodes:
        strings.extend(n["path"].encode())
        node_end.append(len(strings))
    folder_end = []
    for p in order:
        strings.extend(p.encode())
        folder_end.append(len(strings))
    edges = sorted(pairs.items())
    hash_bytes = graph["hash"].encode()

    out = bytearray(b"ORBM")
    out += struct.pack("<7I", 1, len(nodes), len(edges), len(order), len(strings), len(hash_bytes), 0)
    out += hash_bytes
    pad4(out)
    out += struct.pack(f"<{len(positions)}f", *positions)
    out += bytes(LANGUAGES.index(n["language"]) if n["language"] in LANGUAGES else 16 for n in nodes)
    pad4(out)
    out += struct.pack(f"<{len(nodes)}I", *(findex[n["path"].rsplit("/", 1)[0] if "/" in n["path"] else ""] for n in nodes))
    out += struct.pack(f"<{len(nodes)}I", *node_end)
    out += struct.pack(f"<{2 * len(edges)}I", *(v for (a, b), _ in edges for v in (a, b)))
    out += struct.pack(f"<{len(edges)}I", *(c for _, c in edges))
    out += struct.pack(f"<{4 * len(order)}f", *(v for p in order for v in rects[p]))
    out += struct.pack(f"<{len(order)}I", *((findex[p.rsplit("/", 1)[0] if "/" in p else ""] if p else 0xFFFFFFFF) for p in order))
    out += struct.pack(f"<{len(order)}I", *folder_end)
    out += strings
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(bytes(out))


if __name__ == "__main__":
    main()
