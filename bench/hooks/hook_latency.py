"""A Claude Code hook's added latency per tool call.

Claude Code runs each hook as `sh -c COMMAND` with the hook's JSON on stdin
and waits for it. This runs, interleaved (so the machine's noise falls on
all alike), N times each:

  true     sh -c true                          (the baseline: any hook)
  none     sh -c 'orbit hook PreToolUse'       no Orbit running
  running  sh -c 'orbit hook PreToolUse'       `orbit hub serve` running

with a 1.2 KB PreToolUse payload, and prints p50 and p99 of each (and the
mean CPU time of its processes) and the
time added over `true` (the difference at the same percentile) with the
goals: under 5 ms added at p99 with Orbit running, under 50 ms in all
(p99) without.

It also times the running hub's own part: N hook calls made from this
process (connect, one write, the status line), no process started.

`rust-min` (when `rustc` is on PATH) is the least any Rust program costs
here: `sh -c 'MIN hook PreToolUse'` with MIN a program that only reads
its stdin, built with `rustc -O` and linked as `orbit` is (a PIE, the
default); `orbit`'s cost over it is what is left to cut in `orbit` itself.

With `--baseline-orbit OTHER` (an earlier build), the same two variants
of OTHER (its own hub) run interleaved in the same run as `none-base` and
`running-base`, and the added time of each of `orbit`'s against them is
printed as a ratio.
"""

import argparse
import json
import os
import resource
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def payload(cwd):
    return json.dumps({
        "session_id": "0b6c4a8e-5d0f-4a57-9a8e-6f1f2f9c0d11",
        "transcript_path": os.path.join(cwd, ".claude-transcript.jsonl"),
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {
            "command": "cargo test -p orbtile --test it -- foreign " + "x" * 900,
            "description": "Run the tests",
        },
        "tool_use_id": "toolu_01ABCDEFGHIJKLMNOPQRSTUV",
    }).encode()


def percentile(values, p):
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(command, body, env, cpu=None):
    before = child_cpu()
    started = time.perf_counter_ns()
    done = subprocess.run(["sh", "-c", command], input=body, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter_ns() - started) / 1e6
    if cpu is not None:
        cpu.append((child_cpu() - before) * 1000)
    if done.returncode != 0:
        sys.exit(f"{command!r} exited {done.returncode}")
    return elapsed


FLOOR_RS = """
use std::io::Read as _;
fn main() {
    let mut body = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut body);
}
"""


def rust_floor(tmp):
    """A Rust program that only reads its stdin, linked as `orbit` is;
    None without `rustc`."""
    source = os.path.join(tmp, "floor.rs")
    binary = os.path.join(tmp, "rust-min")
    with open(source, "w") as f:
        f.write(FLOOR_RS)
    link = []
    try:
        subprocess.run(["rustc", "-O", *link, source, "-o", binary], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return None
    return binary


def hub_round_trips(run_dir, body, n):
    """The hub's own part: N hook calls from this process (connect, one
    write, read the status line), no process started; their times (ms)."""
    with open(os.path.join(run_dir, "hook.json")) as f:
        info = json.load(f)
    request = (f"POST /h/v1/PreToolUse HTTP/1.1\r\nHost: localhost\r\n"
               f"Content-Type: application/json\r\nAuthorization: Bearer {info['token']}\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    times = []
    for _ in range(n):
        started = time.perf_counter_ns()
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(info["socketPath"])
            s.sendall(request)
            answer = b""
            while b"\r\n" not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        times.append((time.perf_counter_ns() - started) / 1e6)
        if not answer.startswith(b"HTTP/1.1 200 "):
            sys.exit(f"the hub answered {answer[:40]!r}")
    return times


def wait_for(path, seconds):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f"{path} did not appear")
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--orbit", required=True)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--baseline-orbit", help="an earlier build, measured in the same run")
    args = ap.parse_args()
    orbit = os.path.abspath(args.orbit)
    orbits = {"": orbit}
    if args.baseline_orbit:
        orbits["-base"] = os.path.abspath(args.baseline_orbit)
    with tempfile.TemporaryDirectory(prefix="orbit-hook-bench-") as tmp:
        idle_cfg = os.path.join(tmp, "idle")
        os.makedirs(idle_cfg, mode=0o700)
        base = {k: v for k, v in os.environ.items()
                if k not in ("ORBIT_OWN_CLAUDE", "XDG_RUNTIME_DIR", "ORBIT_LOG")}
        base["HOME"] = tmp
        env_idle = dict(base, ORBIT_CONFIG_DIR=idle_cfg)
        body = payload(tmp)
        variants = {"true": ("true", env_idle)}
        floor = rust_floor(tmp)
        if floor:
            variants["rust-min"] = (f"{shlex.quote(floor)} hook PreToolUse", env_idle)
        servers = []
        try:
            for suffix, binary in orbits.items():
                running_cfg = os.path.join(tmp, "running" + suffix)
                os.makedirs(running_cfg, mode=0o700)
                env_running = dict(base, ORBIT_CONFIG_DIR=running_cfg)
                servers.append((binary, env_running, subprocess.Popen(
                    [binary, "hub", "serve"], env=env_running,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
                wait_for(os.path.join(running_cfg, "run", "hook.json"), 20)
                hook = f"{shlex.quote(binary)} hook PreToolUse"
                variants["none" + suffix] = (hook, env_idle)
                variants["running" + suffix] = (hook, env_running)
            times = {name: [] for name in variants}
            cpu = {name: [] for name in variants}
            for name, (command, env) in variants.items():  # warm the caches
                for _ in range(10):
                    once(command, body, env)
            for _ in range(args.runs):
                for name, (command, env) in variants.items():
                    times[name].append(once(command, body, env, cpu[name]))
            hub_times = hub_round_trips(
                os.path.join(servers[0][1]["ORBIT_CONFIG_DIR"], "run"), body, args.runs)
            # Each running hub saw the calls (a key for the session).
            for binary, env_running, _ in servers:
                status = subprocess.run([binary, "hub", "status", "--json"], env=env_running,
                                        capture_output=True, check=True)
                sessions = json.loads(status.stdout)["sessions"]
                if not any(s["adapterId"] == "claude-code" for s in sessions):
                    sys.exit(f"the hub of {binary} shows no session: the hook did not reach it")
        finally:
            for _, _, server in servers:
                server.terminate()
                server.wait(timeout=20)
    p = {name: (percentile(v, 50), percentile(v, 99)) for name, v in times.items()}
    print(f"hook latency per call, {args.runs} runs each, interleaved (ms); "
          f"baseline `sh -c true` in the same run")
    print(f"{'variant':<14}{'p50':>9}{'p99':>9}{'mean':>9}{'added p50':>12}{'added p99':>12}"
          f"{'x true p99':>12}{'cpu mean':>10}")
    for name, v in times.items():
        p50, p99 = p[name]
        print(f"{name:<14}{p50:9.2f}{p99:9.2f}{statistics.mean(v):9.2f}"
              f"{p50 - p['true'][0]:12.2f}{p99 - p['true'][1]:12.2f}{p99 / p['true'][1]:12.2f}"
              f"{statistics.mean(cpu[name]):10.2f}")
    print(f"(cpu: user+sys of the hook's processes, sh included; load average now "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    print(f"the hub's part, {args.runs} calls from this process (no process started): "
          f"p50 {percentile(hub_times, 50):.3f} ms, p99 {percentile(hub_times, 99):.3f} ms")
    if "rust-min" in cpu:
        floor_cpu = statistics.mean(cpu["rust-min"])
        print(f"cpu mean over rust-min (orbit's own part): none "
              f"{statistics.mean(cpu['none']) - floor_cpu:.2f} ms, running "
              f"{statistics.mean(cpu['running']) - floor_cpu:.2f} ms; rust-min over true "
              f"{floor_cpu - statistics.mean(cpu['true']):.2f} ms")
    if args.baseline_orbit:
        print(f"against the baseline {orbits['-base']} in the same run (added time, this / baseline):")
        cpu_true = statistics.mean(cpu["true"])
        for name in ("none", "running"):
            ratios = []
            for i, label in ((0, "p50"), (1, "p99")):
                mine = p[name][i] - p["true"][i]
                theirs = p[name + "-base"][i] - p["true"][i]
                ratios.append(f"added {label} {mine:.2f} / {theirs:.2f} = "
                              f"{mine / theirs if theirs > 0 else float('nan'):.2f}")
            mine = statistics.mean(cpu[name]) - cpu_true
            theirs = statistics.mean(cpu[name + "-base"]) - cpu_true
            ratios.append(f"cpu over true {mine:.2f} / {theirs:.2f} = "
                          f"{mine / theirs if theirs > 0 else float('nan'):.2f}")
            print(f"  {name:<8} " + "; ".join(ratios))
    added_running = p["running"][1] - p["true"][1]
    total_none = p["none"][1]
    ok_running = added_running < 5.0
    ok_none = total_none < 50.0
    print(f"goal: running, added at p99 {added_running:.2f} ms < 5 ms: {'met' if ok_running else 'MISSED'}")
    print(f"goal: no Orbit, p99 in all {total_none:.2f} ms < 50 ms: {'met' if ok_none else 'MISSED'}")
    return 0 if ok_running and ok_none else 1


if __name__ == "__main__":
    sys.exit(main())
