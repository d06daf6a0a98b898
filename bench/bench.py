#!/usr/bin/env python3
"""Measures `orbit graph` on the benchmark corpus and compares it with the
baselines run here in the same process tree: ripgrep reading the same files,
dependency-cruiser and madge (JS/TS) and grimp (Python).

Called by `bench/run`, which installs the tools and fetches the corpus first.
Standard library only (grimp runs in its own venv, through grimp_edges.py).
Writes the table to stdout and everything to OUT/results.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The goals.
GOAL_COLD_VS_RG = 4.0  # cold build at most 4x ripgrep
GOAL_WARM_VS_RG = 1.0  # warm start at most 1x ripgrep
GOAL_DEPCRUISE_SPEEDUP = 20.0  # at least 20x faster than dependency-cruiser
GOAL_GRIMP_SPEEDUP = 1.0  # faster than grimp
GOAL_EDGE_SHARE = 0.98  # finds at least 98% of the edges each tool resolves
GOAL_UPDATE_MS = 10.0  # a one-file update under 10 ms

JS_EXTENSIONS = "js,mjs,cjs,jsx,ts,tsx,mts,cts"

# Corpus layout (made by bench/run): ROOT/corpus/{js,py,rust}, ROOT/side/<package>
# (JS) and ROOT/side/py-<name>-<version> (Python), one package per root.
FULL_JS_PACKAGES = ["three", "rxjs", "webpack", "monaco-editor"]
QUICK_JS_PACKAGES = ["rxjs"]
FULL_PY_PACKAGES = ["django", "sympy"]
QUICK_PY_PACKAGES = ["django"]


# ---------------------------------------------------------------- processes


class Run:
    """One finished child process: wall seconds, exit code, peak RSS (KiB)."""

    def __init__(self, seconds: float, code: int, max_rss_kib: int, timed_out: bool):
        self.seconds = seconds
        self.code = code
        self.max_rss_kib = max_rss_kib
        self.timed_out = timed_out


def run_timed(cmd, cwd=None, stdout=None, stderr=None, env=None, timeout=None) -> Run:
    """Runs cmd, timing it from spawn to reaping, with its own peak RSS."""
    out = stdout if stdout is not None else subprocess.DEVNULL
    err = stderr if stderr is not None else subprocess.DEVNULL
    start = time.perf_counter()
    process = subprocess.Popen(
        cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
        start_new_session=True,
    )
    timed_out = False
    timer = None
    if timeout:
        def kill():
            nonlocal timed_out
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if timer:
        timer.cancel()
    return Run(seconds, process.returncode, usage.ru_maxrss, timed_out)


def best(runs: list[Run]) -> float:
    return min(run.seconds for run in runs)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- orbit


class Orbit:
    def __init__(self, binary: str, scratch: Path):
        self.binary = binary
        self.scratch = scratch
        env = dict(os.environ)
        env.pop("ORBIT_CACHE_DIR", None)
        env.setdefault("RUST_LOG", "error")
        self.env = env

    def fresh_cache(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="orbit-cache-", dir=self.scratch))

    def graph_json(self, root: Path) -> dict:
        """The whole graph of root (no cache), parsed."""
        target = self.scratch / "graph.json"
        with open(target, "wb") as out:
            run = run_timed([self.binary, "graph", str(root), "--format", "json", "--no-cache"],
                            stdout=out, env=self.env)
        if run.code != 0:
            raise RuntimeError(f"orbit graph {root} --format json exited {run.code}")
        with open(target, encoding="utf-8") as handle:
            graph = json.load(handle)
        target.unlink()
        return graph

    def stats(self, root: Path, cache_dir: Path | None) -> tuple[Run, dict]:
        args = [self.binary, "graph", str(root), "--format", "stats"]
        args += ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
        target = self.scratch / "stats.json"
        with open(target, "wb") as out:
            run = run_timed(args, stdout=out, env=self.env)
        if run.code != 0:
            raise RuntimeError(f"{' '.join(args)} exited {run.code}")
        with open(target, encoding="utf-8") as handle:
            stats = json.load(handle)
        target.unlink()
        return run, stats

    def cold_warm(self, root: Path, runs: int, baseline=None) -> dict:
        """Best of `runs` cold builds (each with a new empty cache dir), warm
        starts (a cache dir filled before) and cache-less builds, interleaved
        with runs of `baseline()` (which returns seconds) so that all see the
        same machine load."""
        cold, warm, nocache, base = [], [], [], []
        warm_stats = cold_stats = None
        warm_cache = self.fresh_cache()
        self.stats(root, warm_cache)  # fill it
        for _ in range(runs):
            if baseline:
                base.append(baseline())
            cache = self.fresh_cache()
            run, cold_stats = self.stats(root, cache)
            cold.append(run)
            shutil.rmtree(cache, ignore_errors=True)
            run, warm_stats = self.stats(root, warm_cache)
            warm.append(run)
            run, _stats = self.stats(root, None)
            nocache.append(run)
        shutil.rmtree(warm_cache, ignore_errors=True)
        return {
            "cold_s": best(cold),
            "cold_runs_s": [r.seconds for r in cold],
            "cold_max_rss_kib": max(r.max_rss_kib for r in cold),
            "warm_s": best(warm),
            "warm_runs_s": [r.seconds for r in warm],
            "warm_max_rss_kib": max(r.max_rss_kib for r in warm),
            "no_cache_s": best(nocache),
            "no_cache_runs_s": [r.seconds for r in nocache],
            "cold_stats": cold_stats,
            "warm_stats": warm_stats,
            "baseline_runs_s": base,
        }


def edge_set(graph: dict) -> set[tuple[str, str]]:
    return {(edge["from"], edge["to"]) for edge in graph["edges"]}


# ---------------------------------------------------------------- ripgrep


def chunks(paths: list[str], budget: int = 512 * 1024):
    """Argument lists of at most `budget` bytes (well under ARG_MAX)."""
    chunk, size = [], 0
    for path in paths:
        cost = len(path.encode()) + 1 + 8
        if chunk and size + cost > budget:
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += cost
    if chunk:
        yield chunk


class Ripgrep:
    """`rg --count-matches import` over exactly these files (relative to root,
    given as arguments in chunks run one after the other); the page cache is
    warmed by the caller."""

    COMMAND = ["rg", "--no-config", "--count-matches", "import", "--"]

    def __init__(self, root: Path, paths: list[str]):
        self.root = root
        self.groups = list(chunks(paths))

    def once(self) -> float:
        start = time.perf_counter()
        for group in self.groups:
            subprocess.run(self.COMMAND + group, cwd=self.root, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - start

    def summary(self, times: list[float]) -> dict:
        # Once more for what it found (not timed).
        matches = files_matching = 0
        for group in self.groups:
            done = subprocess.run(self.COMMAND + group, cwd=self.root, capture_output=True, check=False)
            for line in done.stdout.decode("utf-8", "replace").splitlines():
                head, _, count = line.rpartition(":")
                if head and count.isdigit():
                    matches += int(count)
                    files_matching += 1
        return {
            "seconds": min(times),
            "runs_s": times,
            "invocations": len(self.groups),
            "matches": matches,
            "files_matching": files_matching,
            "version": subprocess.run(["rg", "--version"], capture_output=True, text=True)
            .stdout.splitlines()[0],
        }


def warm_page_cache(root: Path, paths: list[str]) -> None:
    for group in chunks(paths):
        subprocess.run(["cat", "--", *group], cwd=root, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)


# ---------------------------------------------------------------- corpora


def measure_corpus(name: str, root: Path, orbit: Orbit, runs: int) -> dict:
    log(f"corpus {name}: {root}")
    graph = orbit.graph_json(root)
    paths = [node["path"] for node in graph["nodes"]]
    result = {
        "name": name,
        "root": str(root),
        "files": len(graph["nodes"]),
        "bytes": sum(node.get("size", 0) for node in graph["nodes"]),
        "edges": len(graph["edges"]),
    }
    del graph
    warm_page_cache(root, paths)
    rg = Ripgrep(root, paths)
    rg.once()
    result["orbit"] = orbit.cold_warm(root, runs, baseline=rg.once)
    result["ripgrep"] = rg.summary(result["orbit"].pop("baseline_runs_s"))
    stats = result["orbit"]["cold_stats"]
    result["stats"] = stats
    rg = result["ripgrep"]["seconds"]
    result["cold_vs_rg"] = result["orbit"]["cold_s"] / rg
    result["warm_vs_rg"] = result["orbit"]["warm_s"] / rg
    log(f"corpus {name}: {result['files']} files, {result['edges']} edges, rg {rg:.3f}s, "
        f"cold {result['orbit']['cold_s']:.3f}s, warm {result['orbit']['warm_s']:.3f}s")
    return result


# ---------------------------------------------------------------- comparisons


def compare(theirs: set[tuple[str, str]], ours: set[tuple[str, str]], our_nodes: set[str]) -> dict:
    found = theirs & ours
    missing = sorted(theirs - ours)
    not_nodes = [edge for edge in missing if edge[0] not in our_nodes or edge[1] not in our_nodes]
    return {
        "their_edges": len(theirs),
        "orbit_edges": len(ours),
        "found": len(found),
        "share": (len(found) / len(theirs)) if theirs else None,
        "missing": len(missing),
        "missing_endpoint_not_a_node": len(not_nodes),
        "missing_sample": [list(edge) for edge in missing if edge not in set(not_nodes)][:25],
        "missing_not_node_sample": [list(edge) for edge in not_nodes][:10],
        "orbit_only": len(ours - theirs),
    }


def inside(root: Path, relative: str) -> bool:
    if not relative or relative.startswith("../") or os.path.isabs(relative):
        return False
    return (root / relative).is_file()


def depcruise(tools: Path, root: Path, scratch: Path, timeout: int) -> dict:
    binary = tools / "node_modules" / ".bin" / "depcruise"
    target = scratch / "depcruise.json"
    command = [str(binary), "--no-config", "--progress", "none", "--output-type", "json", "."]
    with open(target, "wb") as out, open(scratch / "depcruise.err", "wb") as err:
        run = run_timed(command, cwd=root, stdout=out, stderr=err, timeout=timeout)
    result = {"command": " ".join(command[1:]), "seconds": run.seconds,
              "max_rss_kib": run.max_rss_kib, "exit": run.code, "timed_out": run.timed_out}
    if run.timed_out or not target.stat().st_size:
        result["edges"] = None
        return result
    with open(target, encoding="utf-8") as handle:
        data = json.load(handle)
    target.unlink()
    edges = set()
    unresolved = 0
    for module in data.get("modules", []):
        source = module["source"]
        if not inside(root, source):
            continue
        for dependency in module.get("dependencies", []):
            if dependency.get("couldNotResolve") or dependency.get("coreModule"):
                unresolved += 1
                continue
            resolved = dependency.get("resolved", "")
            if inside(root, resolved):
                edges.add((source, resolved))
    result["modules"] = len(data.get("modules", []))
    result["edge_set"] = edges
    result["edges"] = len(edges)
    result["unresolved_or_core"] = unresolved
    return result


def madge(tools: Path, root: Path, scratch: Path, timeout: int) -> dict:
    binary = tools / "node_modules" / ".bin" / "madge"
    target = scratch / "madge.json"
    command = [str(binary), "--json", "--no-spinner", "--no-color", "--extensions",
               JS_EXTENSIONS, "."]
    with open(target, "wb") as out, open(scratch / "madge.err", "wb") as err:
        run = run_timed(command, cwd=root, stdout=out, stderr=err, timeout=timeout)
    result = {"command": " ".join(command[1:]), "seconds": run.seconds,
              "max_rss_kib": run.max_rss_kib, "exit": run.code, "timed_out": run.timed_out}
    if run.timed_out or not target.stat().st_size:
        result["edges"] = None
        return result
    with open(target, encoding="utf-8") as handle:
        data = json.load(handle)
    target.unlink()
    edges = set()
    for source, dependencies in data.items():
        if not inside(root, source):
            continue
        for dependency in dependencies:
            if inside(root, dependency):
                edges.add((source, dependency))
    result["modules"] = len(data)
    result["edge_set"] = edges
    result["edges"] = len(edges)
    return result


def grimp(venv_python: str, root: Path, package: str, runs: int, timeout: int) -> dict:
    script = str(HERE / "grimp_edges.py")
    times, inner = [], []
    data = None
    for _ in range(runs):
        with tempfile.TemporaryFile() as out:
            run = run_timed([venv_python, script, str(root), package], stdout=out, timeout=timeout)
            if run.code != 0:
                return {"seconds": run.seconds, "exit": run.code, "edges": None}
            out.seek(0)
            data = json.load(out)
        times.append(run.seconds)
        inner.append(data["seconds"])
    edges = {(source, target) for source, target, _lines in data["edges"]}
    return {
        "seconds": min(times),  # process wall time: interpreter, import grimp, build, dump
        "build_graph_s": min(inner),  # grimp.build_graph() alone
        "runs_s": times,
        "modules": data["modules"],
        "unmapped": data["unmapped"],
        "edge_set": edges,
        "edges": len(edges),
        "version": subprocess.run(
            [venv_python, "-c", "import importlib.metadata as m; print(m.version('grimp'))"],
            capture_output=True, text=True).stdout.strip(),
    }


def orbit_on(orbit: Orbit, root: Path, runs: int) -> dict:
    graph = orbit.graph_json(root)  # also warms the page cache
    cold = []
    for _ in range(runs):
        cache = orbit.fresh_cache()
        run, stats = orbit.stats(root, cache)
        cold.append(run)
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "cold_s": best(cold),
        "cold_runs_s": [r.seconds for r in cold],
        "cold_max_rss_kib": max(r.max_rss_kib for r in cold),
        "files": len(graph["nodes"]),
        "edges": len(graph["edges"]),
        "edge_set": edge_set(graph),
        "node_set": {node["path"] for node in graph["nodes"]},
        "stats": stats,
    }


def strip_sets(value):
    if isinstance(value, dict):
        return {k: strip_sets(v) for k, v in value.items() if not isinstance(v, (set, frozenset))}
    if isinstance(value, list):
        return [strip_sets(v) for v in value]
    return value


def side_js(args, orbit: Orbit, packages: list[str]) -> list[dict]:
    results = []
    for package in packages:
        root = args.corpus / "side" / package
        if not root.is_dir():
            log(f"side by side: {root} missing, skipped")
            continue
        log(f"side by side {package}: orbit")
        ours = orbit_on(orbit, root, args.runs)
        entry = {"package": package, "root": str(root), "orbit": ours}
        for tool, function in (("depcruise", depcruise), ("madge", madge)):
            log(f"side by side {package}: {tool}")
            theirs = function(args.tools, root, args.scratch, args.baseline_timeout)
            if theirs.get("edges") is not None:
                theirs["comparison"] = compare(theirs["edge_set"], ours["edge_set"], ours["node_set"])
            theirs["speedup"] = theirs["seconds"] / ours["cold_s"]
            entry[tool] = theirs
            log(f"  {tool}: {theirs['seconds']:.2f}s, {theirs.get('edges')} edges, "
                f"share {theirs.get('comparison', {}).get('share')}")
        results.append(strip_sets(entry))
    return results


def side_py(args, orbit: Orbit, packages: list[str]) -> list[dict]:
    results = []
    side = args.corpus / "side"
    for package in packages:
        roots = sorted(p for p in side.glob(f"py-{package}-*") if (p / package).is_dir())
        if not roots:
            log(f"grimp: {package} missing under {side}, skipped")
            continue
        root = roots[-1]
        # Orbit and grimp interleaved run by run on the same folder, so both
        # see the same load; each side's figure is its best of the runs, and
        # the ratio is taken between those two figures of this one run.
        log(f"side by side {package}: orbit and grimp, interleaved, {args.runs} runs")
        ours_runs, theirs_runs = [], []
        for _ in range(args.runs):
            ours_runs.append(orbit_on(orbit, root, 1))
            theirs_runs.append(grimp(args.venv_python, root, package, 1, args.baseline_timeout))
        ours = min(ours_runs, key=lambda r: r["cold_s"])
        ours["cold_runs_s"] = [r["cold_s"] for r in ours_runs]
        failed = [r for r in theirs_runs if r.get("edges") is None]
        if failed:
            theirs = failed[0]
        else:
            theirs = min(theirs_runs, key=lambda r: r["build_graph_s"])
            theirs["seconds"] = min(r["seconds"] for r in theirs_runs)
            theirs["runs_s"] = [r["seconds"] for r in theirs_runs]
            theirs["build_graph_runs_s"] = [r["build_graph_s"] for r in theirs_runs]
        theirs["interleaved"] = True
        if theirs.get("edges") is not None:
            py_edges = {e for e in ours["edge_set"] if e[0].endswith(".py") and e[1].endswith(".py")}
            theirs["comparison"] = compare(theirs["edge_set"], py_edges, ours["node_set"])
            theirs["speedup"] = theirs["seconds"] / ours["cold_s"]
            theirs["speedup_vs_build_graph"] = theirs["build_graph_s"] / ours["cold_s"]
        log(f"  grimp: {theirs['seconds']:.2f}s ({theirs.get('build_graph_s', 0):.2f}s in build_graph), "
            f"{theirs.get('edges')} edges, share {theirs.get('comparison', {}).get('share')}")
        results.append(strip_sets({"package": package, "root": str(root), "orbit": ours, "grimp": theirs}))
    return results


# ---------------------------------------------------------------- live update


APPLIED = re.compile(r"applied in ([0-9.]+) ms")
BUILT = re.compile(r"built in ([0-9.]+) ms")


def pick_target(graph: dict, suffixes: tuple[str, ...]):
    """A typical source file (0.5 to 32 KiB) and a file of the same folder it
    imports (or, without such an edge, any file of that folder)."""
    sizes = {node["path"]: node.get("size", 0) for node in graph["nodes"]}

    def typical(path: str) -> bool:
        return path.endswith(suffixes) and not path.endswith(".d.ts") and 512 <= sizes.get(path, 0) <= 32768

    pairs = sorted({(edge["from"], edge["to"]) for edge in graph["edges"]
                    if typical(edge["from"]) and edge["to"].endswith(suffixes)
                    and edge["from"].rpartition("/")[0] == edge["to"].rpartition("/")[0]
                    and edge["from"] != edge["to"]})
    if not pairs:
        by_folder: dict[str, list[str]] = {}
        for path in sorted(sizes):
            if typical(path):
                by_folder.setdefault(path.rpartition("/")[0], []).append(path)
        pairs = [(files[1], files[0]) for files in by_folder.values() if len(files) > 1]
    return pairs[len(pairs) // 2] if pairs else None


def update_test(args, orbit: Orbit, source: Path, edits: int) -> dict:
    """Starts `orbit graph COPY --watch --timings`, makes one-file changes and
    times each from just before the write to its delta line on stdout; the
    apply time is the `--timings` note orbit prints right after that delta."""
    copy = args.corpus / "watch" / source.name
    if copy.exists():
        shutil.rmtree(copy)
    copy.parent.mkdir(parents=True, exist_ok=True)
    log(f"update: copying {source} to {copy}")
    shutil.copytree(source, copy, symlinks=True)
    graph = orbit.graph_json(copy)
    js_files = sum(1 for n in graph["nodes"] if n["path"].endswith((".js", ".ts", ".mjs")))
    py_files = sum(1 for n in graph["nodes"] if n["path"].endswith(".py"))
    is_python = py_files > js_files
    suffixes = (".py",) if is_python else (".js", ".ts", ".mjs")
    picked = pick_target(graph, suffixes)
    files = len(graph["nodes"])
    del graph
    if picked is None:
        shutil.rmtree(copy, ignore_errors=True)
        return {"error": "no file to edit"}
    edited, sibling = picked
    folder = edited.rpartition("/")[0]
    sibling_stem = sibling.rpartition("/")[2].rsplit(".", 1)[0]
    extension = "." + edited.rsplit(".", 1)[1]
    if is_python:
        comment = "# orbit bench edit {i}\n"
        import_line = f"from . import {sibling_stem}  # orbit bench {{i}}\n"
    else:
        comment = "// orbit bench edit {i}\n"
        import_line = f"import './{sibling_stem}'; // orbit bench {{i}}\n"
    new_file = f"{folder}/orbit_bench_new{extension}"

    cache = orbit.fresh_cache()
    command = [orbit.binary, "graph", str(copy), "--format", "stats", "--watch", "--timings",
               "--cache-dir", str(cache)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=orbit.env, start_new_session=True)
    deltas: queue.Queue = queue.Queue()
    applied: list[tuple[float, float, int]] = []  # (seen at, ms, paths in the batch)
    lock = threading.Lock()
    ready = threading.Event()
    notes: list[str] = []

    def read_stdout():
        for raw in process.stdout:
            now = time.perf_counter()
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith("{") and "previous_hash" in line:
                try:
                    deltas.put((now, json.loads(line)))
                except json.JSONDecodeError:
                    pass

    def read_stderr():
        for raw in process.stderr:
            now = time.perf_counter()
            line = raw.decode("utf-8", "replace").strip()
            if "watching" in line:
                ready.set()
            match = APPLIED.search(line)
            if match:
                paths = re.search(r"update of (\d+) path", line)
                with lock:
                    applied.append((now, float(match.group(1)), int(paths.group(1)) if paths else 0))
            else:
                notes.append(line)

    def batches_between(start: float, end: float) -> int:
        with lock:
            return sum(1 for seen, _, _ in applied if start <= seen < end)

    def apply_after(moment: float, wait: float = 1.0):
        deadline = time.perf_counter() + wait
        while time.perf_counter() < deadline:
            with lock:
                for seen, ms, paths in applied:
                    if seen >= moment:
                        return ms, paths
            time.sleep(0.002)
        return None, None

    threads = [threading.Thread(target=read_stdout, daemon=True),
               threading.Thread(target=read_stderr, daemon=True)]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    result: dict = {"root": str(copy), "files": files, "edited": edited, "new_file": new_file,
                    "command": " ".join(command[1:])}
    try:
        if not ready.wait(600):
            result["error"] = "orbit --watch did not say it was watching within 600 s"
            return result
        result["ready_after_s"] = time.perf_counter() - started
        idle_start = time.perf_counter()
        time.sleep(1.0)
        result["idle_batches_before_edits_per_s"] = batches_between(idle_start, time.perf_counter())
        samples = []
        for i in range(edits):
            kind = ["append comment", "append import", "create file", "delete file"][i % 4]
            start = time.perf_counter()
            if kind == "append comment":
                with open(copy / edited, "a", encoding="utf-8") as handle:
                    handle.write(comment.format(i=i))
            elif kind == "append import":
                with open(copy / edited, "a", encoding="utf-8") as handle:
                    handle.write(import_line.format(i=i))
            elif kind == "create file":
                with open(copy / new_file, "w", encoding="utf-8") as handle:
                    handle.write(import_line.format(i=i))
            else:
                os.unlink(copy / new_file)
            target = new_file if kind.endswith("file") else edited
            deadline = start + 10
            sample: dict = {"kind": kind}
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    sample["error"] = "no delta naming the file within 10 s"
                    break
                try:
                    seen, delta = deltas.get(timeout=remaining)
                except queue.Empty:
                    continue
                if seen < start or target not in json.dumps(delta):
                    continue  # an earlier edit's late delta
                apply_ms, paths = apply_after(seen)
                sample.update({
                    "end_to_end_ms": (seen - start) * 1e3,
                    "apply_ms": apply_ms,
                    "batch_paths": paths,
                    "delta": {k: len(v) if isinstance(v, list) else v for k, v in delta.items()},
                })
                break
            samples.append(sample)
            time.sleep(0.5)
        idle_start = time.perf_counter()
        time.sleep(2.0)
        result["idle_batches_after_edits_per_s"] = batches_between(idle_start, time.perf_counter()) / 2
        result["samples"] = samples
        end_to_end = [s["end_to_end_ms"] for s in samples if "end_to_end_ms" in s]
        apply = [s["apply_ms"] for s in samples if s.get("apply_ms") is not None]
        result["end_to_end_median_ms"] = statistics.median(end_to_end) if end_to_end else None
        result["apply_median_ms"] = statistics.median(apply) if apply else None
        result["apply_max_ms"] = max(apply) if apply else None
        first = samples[0] if samples else {}
        result["first_edit_apply_ms"] = first.get("apply_ms")
        result["first_edit_end_to_end_ms"] = first.get("end_to_end_ms")
        result["note"] = ("end to end includes the watcher's debounce window (50 ms in orbit's "
                          "CLI) and inotify latency; apply is orbit's own --timings figure for "
                          "the batch that printed the delta")
        return result
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        result["stderr_notes"] = notes[-5:]
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(copy, ignore_errors=True)


# ---------------------------------------------------------------- report


def verdict(ok) -> str:
    if ok is None:
        return "n/a"
    return "PASS" if ok else "MISS"


def human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return str(count)


def pct(share) -> str:
    return "n/a" if share is None else f"{share * 100:.2f}%"


def build_rows(results: dict) -> list[tuple[str, str, str, str]]:
    rows = []
    for corpus in results["corpora"]:
        name = corpus["name"]
        rows.append((f"{name}: files / bytes / edges",
                     f"{corpus['files']} / {human_bytes(corpus['bytes'])} / {corpus['edges']}", "", ""))
        rows.append((f"{name}: ripgrep (rg --count-matches import)",
                     f"{corpus['ripgrep']['seconds'] * 1e3:.0f} ms", "baseline", ""))
        rows.append((f"{name}: orbit cold build",
                     f"{corpus['orbit']['cold_s'] * 1e3:.0f} ms = {corpus['cold_vs_rg']:.2f}x rg",
                     f"<= {GOAL_COLD_VS_RG:g}x rg", verdict(corpus["cold_vs_rg"] <= GOAL_COLD_VS_RG)))
        rows.append((f"{name}: orbit warm start",
                     f"{corpus['orbit']['warm_s'] * 1e3:.0f} ms = {corpus['warm_vs_rg']:.2f}x rg",
                     f"<= {GOAL_WARM_VS_RG:g}x rg", verdict(corpus["warm_vs_rg"] <= GOAL_WARM_VS_RG)))
    for entry in results["side_by_side_js"]:
        package = entry["package"]
        ours = entry["orbit"]
        rows.append((f"{package}: orbit cold ({ours['files']} files, {ours['edges']} edges)",
                     f"{ours['cold_s'] * 1e3:.0f} ms", "", ""))
        for tool, goal in (("depcruise", GOAL_DEPCRUISE_SPEEDUP), ("madge", None)):
            theirs = entry.get(tool)
            if not theirs:
                continue
            timing = (f"{theirs['seconds']:.2f} s" + (" (timed out)" if theirs.get("timed_out") else "")
                      + f" = orbit {theirs['speedup']:.1f}x faster")
            rows.append((f"{package}: {tool} time", timing,
                         f">= {goal:g}x" if goal else "(no goal)",
                         verdict(theirs["speedup"] >= goal) if goal else ""))
            comparison = theirs.get("comparison")
            if comparison:
                rows.append((f"{package}: {tool} edges found by orbit",
                             f"{comparison['found']} / {comparison['their_edges']} = {pct(comparison['share'])}",
                             f">= {GOAL_EDGE_SHARE * 100:g}%",
                             verdict(comparison["share"] is None or comparison["share"] >= GOAL_EDGE_SHARE)))
    for entry in results["side_by_side_py"]:
        package = entry["package"]
        ours, theirs = entry["orbit"], entry["grimp"]
        rows.append((f"{package}: orbit cold ({ours['files']} files, {ours['edges']} edges)",
                     f"{ours['cold_s'] * 1e3:.0f} ms", "", ""))
        if theirs.get("edges") is None:
            rows.append((f"{package}: grimp", "failed", "", "n/a"))
            continue
        rows.append((f"{package}: grimp time (process / build_graph)",
                     f"{theirs['seconds'] * 1e3:.0f} / {theirs['build_graph_s'] * 1e3:.0f} ms "
                     f"= orbit {theirs['speedup']:.2f}x / {theirs['speedup_vs_build_graph']:.2f}x faster",
                     "> 1x (vs build_graph)", verdict(theirs["speedup_vs_build_graph"] > GOAL_GRIMP_SPEEDUP)))
        comparison = theirs["comparison"]
        rows.append((f"{package}: grimp edges found by orbit",
                     f"{comparison['found']} / {comparison['their_edges']} = {pct(comparison['share'])}",
                     f">= {GOAL_EDGE_SHARE * 100:g}%",
                     verdict(comparison["share"] is None or comparison["share"] >= GOAL_EDGE_SHARE)))
    update = results.get("update")
    if update:
        if update.get("error"):
            rows.append(("one-file update", update["error"], f"< {GOAL_UPDATE_MS:g} ms", "n/a"))
        else:
            apply = update.get("apply_median_ms")
            rows.append((f"one-file update, applied ({update['files']} files, median of "
                         f"{len(update['samples'])})",
                         "n/a" if apply is None else f"{apply:.2f} ms (max {update['apply_max_ms']:.2f})",
                         f"< {GOAL_UPDATE_MS:g} ms", verdict(None if apply is None else apply < GOAL_UPDATE_MS)))
            e2e = update.get("end_to_end_median_ms")
            rows.append(("one-file update, write to delta line (incl. 50 ms debounce)",
                         "n/a" if e2e is None else f"{e2e:.1f} ms", "(info)", ""))
            first = update.get("first_edit_apply_ms")
            if first is not None:
                rows.append(("one-file update, first edit (watcher idle): applied / end to end",
                             f"{first:.2f} / {update['first_edit_end_to_end_ms']:.1f} ms", "(info)", ""))
            idle = update.get("idle_batches_after_edits_per_s")
            if idle:
                rows.append(("watcher: updates/s with no edits (after the edits)",
                             f"{idle:g}", "0 (info)", ""))
    return rows


def print_table(rows) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    header = ("figure", "value", "goal", "")
    widths = [max(w, len(h)) for w, h in zip(widths, header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def machine() -> dict:
    model = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = 0
    try:
        for line in open("/proc/meminfo", encoding="utf-8"):
            if line.startswith("MemTotal"):
                memory = int(line.split()[1]) // 1024
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": model, "memory_mib": memory,
            "load_average_at_start": list(os.getloadavg()),
            "kernel": platform.release(), "python": platform.python_version()}


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orbit", required=True, help="the orbit binary")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--tools", type=Path, required=True, help="folder with node_modules/.bin")
    parser.add_argument("--venv-python", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=5, help="best of N for orbit and ripgrep")
    parser.add_argument("--baseline-timeout", type=int, default=1800)
    parser.add_argument("--edits", type=int, default=12)
    parser.add_argument("--only", default="corpora,js,py,update",
                        help="comma-separated parts to run: corpora,js,py,update")
    args = parser.parse_args()
    args.corpus, args.tools, args.out = args.corpus.resolve(), args.tools.resolve(), args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    args.scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=args.out))
    parts = set(args.only.split(","))
    orbit = Orbit(args.orbit, args.scratch)
    version = subprocess.run([args.orbit, "--version"], capture_output=True, text=True).stdout.strip()
    results: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "orbit": {"binary": args.orbit, "version": version},
        "mode": "quick" if args.quick else "full",
        "runs": args.runs,
        "goals": {
            "cold_vs_rg_max": GOAL_COLD_VS_RG, "warm_vs_rg_max": GOAL_WARM_VS_RG,
            "depcruise_speedup_min": GOAL_DEPCRUISE_SPEEDUP, "grimp_speedup_min": GOAL_GRIMP_SPEEDUP,
            "edge_share_min": GOAL_EDGE_SHARE, "update_ms_max": GOAL_UPDATE_MS,
        },
        "corpora": [], "side_by_side_js": [], "side_by_side_py": [], "update": None,
    }
    try:
        corpus = args.corpus / "corpus"
        if "corpora" in parts:
            if args.quick:
                todo = [("js (rxjs)", args.corpus / "side" / "rxjs"),
                        ("py (django)", next(iter(sorted((args.corpus / "side").glob("py-django-*"))), None)),
                        ("rust", corpus / "rust")]
            else:
                todo = [("js", corpus / "js"), ("py", corpus / "py"), ("rust", corpus / "rust"),
                        ("all", corpus)]
            for name, root in todo:
                if root is None or not root.is_dir():
                    log(f"corpus {name}: {root} missing, skipped")
                    continue
                results["corpora"].append(measure_corpus(name, root, orbit, args.runs))
        if "js" in parts:
            results["side_by_side_js"] = side_js(
                args, orbit, QUICK_JS_PACKAGES if args.quick else FULL_JS_PACKAGES)
        if "py" in parts:
            results["side_by_side_py"] = side_py(
                args, orbit, QUICK_PY_PACKAGES if args.quick else FULL_PY_PACKAGES)
        if "update" in parts:
            source = args.corpus / "side" / "rxjs" if args.quick else corpus / "js"
            results["update"] = update_test(args, orbit, source, args.edits)
    finally:
        shutil.rmtree(args.scratch, ignore_errors=True)
        results["machine"]["load_average_at_end"] = list(os.getloadavg())
        rows = build_rows(results)
        results["table"] = [list(row) for row in rows]
        results["summary"] = {
            "pass": sum(1 for row in rows if row[3] == "PASS"),
            "miss": sum(1 for row in rows if row[3] == "MISS"),
        }
        for name in ("results.json", f"results-{results['mode']}.json"):
            with open(args.out / name, "w", encoding="utf-8") as handle:
                json.dump(results, handle, indent=2)
                handle.write("\n")
        print()
        print(f"Orbit benchmark, {results['mode']}, {results['date']}, "
              f"{results['machine']['cpus']} cores ({results['machine']['cpu']}), best of {args.runs}")
        load = max(results["machine"]["load_average_at_start"][0],
                   results["machine"]["load_average_at_end"][0])
        if load > 0.5:
            print(f"warning: the machine was busy (1-minute load average up to {load:.1f} on "
                  f"{results['machine']['cpus']} cores): absolute times are noisy, ratios less so")
        print()
        print_table(rows)
        print()
        print(f"{results['summary']['pass']} PASS, {results['summary']['miss']} MISS; "
              f"details in {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
