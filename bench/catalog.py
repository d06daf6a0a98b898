#!/usr/bin/env python3
"""The catalog's cache (bench/README.md, "orbit catalog and ask --model").

Measures, interleaved run by run so that both sides see the same machine load,
with the real pinned `claude` (tests/node/claude-cli) and a release `orbit`:

- `orbit catalog --json --fresh`: the CLI asked (`--version`, then a control
  process: `initialize`, `mcp_status`): the uncached baseline;
- `orbit catalog --json`: answered from Orbit's cache;
- `orbit ask --model gpt-9 PROMPT` with an empty cache folder: the probe and
  the catalog `ask --model` checks the model against, then the controller's
  refusal (a model the CLI does not offer: no turn, so no Messages API is
  needed and the figure is the catalog's part of `ask --model` alone);
- the same with the cache filled.

Prints the median of each and the cached/uncached ratios.

    bench/catalog.py [--runs N]      (ORBIT_BIN=path measures a given binary)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def orbit_binary() -> Path:
    given = os.environ.get("ORBIT_BIN")
    if given:
        return Path(given)
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "orbit", "--quiet"],
        cwd=REPO,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    return target / "release" / "orbit"


def pinned_claude() -> Path:
    claude = REPO / "tests/node/claude-cli/node_modules/.bin/claude"
    if not claude.exists():
        subprocess.run([str(REPO / "scripts/setup-claude")], check=True)
    return claude


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    orbit = orbit_binary()
    claude = pinned_claude()
    with tempfile.TemporaryDirectory(prefix="orbit-catalog-bench-") as tmp:
        root = Path(tmp)
        home, config, ws, cache = (root / n for n in ("home", "config", "ws", "cache"))
        for folder in (home, config, ws):
            folder.mkdir(mode=0o700)
        (config / "settings.json").write_text(json.dumps({"claude.path": str(claude)}))
        env = {
            **os.environ,
            "HOME": str(home),
            "ORBIT_CONFIG_DIR": str(config),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "ANTHROPIC_API_KEY": "sk-ant-bench-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        env.pop("ORBIT_LOG", None)
        subprocess.run([orbit, "trust", ws], env=env, check=True, capture_output=True)

        def timed(args: list[str], cache_dir: Path, expect_code: int) -> float:
            start = time.perf_counter()
            out = subprocess.run(
                [orbit, *args],
                env={**env, "ORBIT_CACHE_DIR": str(cache_dir)},
                cwd=ws,
                capture_output=True,
                text=True,
            )
            elapsed = time.perf_counter() - start
            if out.returncode != expect_code:
                sys.exit(f"orbit {' '.join(args)}: exit {out.returncode}\n{out.stderr}")
            if expect_code == 1 and "is not one of the CLI's models" not in out.stderr:
                sys.exit(f"orbit {' '.join(args)}: not the model's refusal\n{out.stderr}")
            return elapsed

        ask = ["ask", "--model", "gpt-9", "Say hi."]
        # Warm-up: the page cache holds the CLI, and the cache is filled.
        timed(["catalog", "--json"], cache, 0)
        timed(ask, cache, 1)
        times: dict[str, list[float]] = {k: [] for k in ("fresh", "cached", "ask", "ask_cached")}
        for _ in range(runs):
            times["fresh"].append(timed(["catalog", "--json", "--fresh"], cache, 0))
            times["cached"].append(timed(["catalog", "--json"], cache, 0))
            empty = root / f"empty-{time.monotonic_ns()}"
            times["ask"].append(timed(ask, empty, 1))
            shutil.rmtree(empty, ignore_errors=True)
            times["ask_cached"].append(timed(ask, cache, 1))
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    load = os.getloadavg()[0]
    print(f"orbit catalog / ask --model, median of {runs} (load {load:.1f}, {os.cpu_count()} cores)")
    print(f"catalog, CLI asked (--fresh)          {med['fresh']:8.0f} ms   baseline")
    print(
        f"catalog, from the cache               {med['cached']:8.0f} ms   "
        f"= {med['cached'] / med['fresh']:.3f}x ({med['fresh'] / med['cached']:.0f}x faster)"
    )
    print(f"ask --model (refused), empty cache    {med['ask']:8.0f} ms   baseline")
    print(
        f"ask --model (refused), from the cache {med['ask_cached']:8.0f} ms   "
        f"= {med['ask_cached'] / med['ask']:.3f}x ({med['ask'] / med['ask_cached']:.0f}x faster)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
