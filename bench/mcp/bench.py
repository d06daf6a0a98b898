"""tools/call round trip over stdio with a bare JSON-RPC client (no SDK on
the client side, so each server's own cost shows), for Orbit and for the same
trivial tool served by the Python and TypeScript MCP SDKs, in one run; the
start-up to first answer; and the federated hop's added latency over SSH.

Usage: bench.py ORBIT_BIN PYTHON NODE [--calls N] [--sshd]
Run it through bench/mcp/run.sh, which builds and installs what it needs.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Bare:
    """Newline-delimited JSON-RPC over a child's stdio."""

    def __init__(self, command, env=None):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env,
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(str(message["error"]))
                return message["result"]

    def handshake(self):
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def percentile(values, p):
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


BARE_CLIENT = None


def measure(command, tool, arguments, calls, warmup, env=None):
    if BARE_CLIENT and not arguments:
        # The Rust bare client: no interpreter between the pipes and the clock.
        out = subprocess.run([BARE_CLIENT, str(calls), str(warmup), tool, "--", *command],
                             env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    bare = Bare(command, env)
    bare.handshake()
    first = bare.request("tools/call", {"name": tool, "arguments": arguments})
    startup = time.perf_counter() - bare.started
    assert first.get("structuredContent") is not None, first
    for _ in range(warmup):
        bare.request("tools/call", {"name": tool, "arguments": arguments})
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        bare.request("tools/call", {"name": tool, "arguments": arguments})
        times.append(time.perf_counter() - t)
    bare.close()
    return {
        "startup_ms": startup * 1e3,
        "p50_ms": percentile(times, 50) * 1e3,
        "p99_ms": percentile(times, 99) * 1e3,
        "mean_ms": statistics.fmean(times) * 1e3,
        "calls": calls,
    }


def startup_only(command, tool, runs, env=None):
    """Median start-up to first tools/call answer over several cold starts."""
    samples = []
    for _ in range(runs):
        bare = Bare(command, env)
        bare.handshake()
        bare.request("tools/call", {"name": tool, "arguments": {}})
        samples.append((time.perf_counter() - bare.started) * 1e3)
        bare.close()
    return statistics.median(samples)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sshd(tmp):
    """A throwaway sshd on 127.0.0.1 (as the tests start it)."""
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{tmp}/{name}"], check=True)
    with open(f"{tmp}/client_key.pub") as src, open(f"{tmp}/authorized_keys", "w") as dst:
        dst.write(src.read())
    port = free_port()
    with open(f"{tmp}/sshd_config", "w") as f:
        f.write(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {tmp}/host_key\n"
                f"AuthorizedKeysFile {tmp}/authorized_keys\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                f"StrictModes no\nUsePAM no\nPidFile {tmp}/sshd.pid\nLogLevel ERROR\n")
    os.makedirs("/run/sshd", exist_ok=True)
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{tmp}/sshd_config"],
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.02)
    options = ["-p", str(port), "-i", f"{tmp}/client_key", "-oStrictHostKeyChecking=no",
               "-oUserKnownHostsFile=/dev/null", "-oIdentitiesOnly=yes", "-oLogLevel=ERROR"]
    return proc, options


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("orbit")
    parser.add_argument("python")
    parser.add_argument("node")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--sshd", action="store_true")
    parser.add_argument("--bare", help="the Rust bare client (crates/orbit-mcp/examples/bare_client.rs)")
    args = parser.parse_args()
    global BARE_CLIENT
    BARE_CLIENT = args.bare

    tmp = tempfile.mkdtemp(prefix="orbit-bench-mcp-")
    env = dict(os.environ, ORBIT_CONFIG_DIR=f"{tmp}/config", ORBIT_CACHE_DIR=f"{tmp}/cache")
    work = f"{tmp}/work"
    os.makedirs(f"{work}/src")
    with open(f"{work}/src/a.ts", "w") as f:
        f.write("export const a = 1;\n")
    orbit = [args.orbit, "mcp", "--workspace", work, "--host-name", "bench"]

    # The same payload for every server: what Orbit's own tool answers.
    probe = Bare(orbit, env)
    probe.handshake()
    payload = probe.request("tools/call", {"name": "orbit_tools_list", "arguments": {}})["structuredContent"]
    probe.close()
    payload_file = f"{tmp}/payload.json"
    with open(payload_file, "w") as f:
        json.dump(payload, f)

    servers = {
        "orbit (rmcp)": orbit,
        "python mcp SDK": [args.python, os.path.join(HERE, "py_server.py"), payload_file],
        "typescript SDK": [args.node, os.path.join(ROOT, "tests/node/mcp/bench_server.mjs"), payload_file],
    }
    results = {}
    for name, command in servers.items():
        result = measure(command, "orbit_tools_list", {}, args.calls, warmup=200, env=env)
        result["startup_ms"] = startup_only(command, "orbit_tools_list", 5, env)
        results[name] = result

    client = "Rust bare client" if BARE_CLIENT else "Python bare client"
    print(f"tools/call orbit_tools_list over stdio, {args.calls} sequential calls after 200 warm-up ({client})")
    print(f"{'server':<16} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'start-up ms':>12}")
    for name, r in results.items():
        print(f"{name:<16} {r['p50_ms']:>8.3f} {r['p99_ms']:>8.3f} {r['mean_ms']:>8.3f} {r['startup_ms']:>12.1f}")
    base = results["orbit (rmcp)"]
    for name in ("python mcp SDK", "typescript SDK"):
        r = results[name]
        print(f"ratio {name} / orbit: p50 {r['p50_ms'] / base['p50_ms']:.1f}x, "
              f"p99 {r['p99_ms'] / base['p99_ms']:.1f}x, start-up {r['startup_ms'] / base['startup_ms']:.1f}x")

    if args.sshd:
        proc, options = sshd(tmp)
        try:
            remote = f"{tmp}/remote-orbit"
            with open(remote, "w") as f:
                f.write(f"#!/bin/sh\ncd '{work}'\nexport ORBIT_CONFIG_DIR='{tmp}/remote-config' "
                        f"ORBIT_CACHE_DIR='{tmp}/cache'\nexec '{args.orbit}' \"$@\" --host-name far\n")
            os.chmod(remote, 0o755)
            destinations = f"{tmp}/destinations.json"
            with open(destinations, "w") as f:
                json.dump({"destinations": [{"name": "far", "host": "127.0.0.1",
                                             "ssh_options": options, "orbit": remote}]}, f)
            calls = max(20, args.calls // 50)
            local = measure(orbit, "orbit_graph_stats", {}, calls, warmup=3, env=env)
            fed = [args.orbit, "mcp", "--federated", "--destinations", destinations,
                   "--workspace", work, "--host-name", "bench"]
            routed_local = measure(fed, "orbit_graph_stats", {"workspace": "bench:work"}, calls, 3, env)
            routed_remote = measure(fed, "orbit_graph_stats", {"workspace": "far:work"}, calls, 3, env)
            proxy = [args.orbit, "mcp", "--ssh", "127.0.0.1", "--remote-orbit", remote] + [
                f"--ssh-option={o}" for o in options]
            proxied = measure(proxy, "orbit_graph_stats", {}, calls, 3, env)
            print(f"\norbit_graph_stats (a 1-file workspace), {calls} calls")
            for name, r in [("direct stdio", local), ("federated, local selector", routed_local),
                            ("ssh proxy (one session)", proxied),
                            ("federated, remote selector", routed_remote)]:
                print(f"{name:<28} p50 {r['p50_ms']:>8.2f} ms  p99 {r['p99_ms']:>8.2f} ms"
                      f"  first answer {r['startup_ms']:>8.1f} ms")
            print(f"federated hop over ssh adds {routed_remote['p50_ms'] - local['p50_ms']:.1f} ms at p50 "
                  f"(the ssh session is kept open; answers are never cached);"
                  f" the ssh proxy adds {proxied['p50_ms'] - local['p50_ms']:.2f} ms")
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
