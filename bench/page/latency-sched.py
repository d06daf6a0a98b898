#!/usr/bin/env python3
"""Who held the two cores while a change of `bench/page/latency` was late.

    bench/page/latency-sched.py record DIR -- COMMAND...
        Runs COMMAND (e.g. `bench/page/latency` with ORBIT_LATENCY_RAW set) under a
        system-wide `perf record` of the scheduler's switch and wake-up tracepoints
        (CLOCK_MONOTONIC, so that its times join the bench's epoch times), and notes every
        5 s which process is which (/proc: pid, parent, command line, autogroup, the nice of
        each thread of the bench's processes) in DIR/procs.jsonl. Needs root (or
        perf_event_paranoid <= -1) and the `sched:` tracepoints.
    bench/page/latency-sched.py slice REGEX NS -- COMMAND...
        An experiment (never the goal's figure): runs COMMAND and, every 200 ms, gives every
        thread of the processes whose command line matches REGEX an EEVDF slice of NS ns
        (`sched_setattr` with `sched_runtime` for SCHED_OTHER, Linux 6.12+; unprivileged), so
        that their wake-ups preempt sooner. Prints how many threads it set.
    bench/page/latency-sched.py selftest
        Checks the scheduler accounting on a made-up record.
    bench/page/latency-sched.py report DIR RAW.json [--top 10] [--json OUT]
        Joins DIR's record with the bench's raw times (ORBIT_LATENCY_RAW): for the TOP slowest
        changes (shim line -> DOM), their split at Orbit's read, event, push, sent and the page's
        `message` event; for each, who ran on the cores during its slowest hop and which threads
        were runnable but waiting for a core then. Then the same summed over those windows (a
        table by process and by thread kind), against every change's windows.

A thread is "waiting" from its wake-up (or its preemption: switched out runnable) to the
moment it next runs; "ran" is the time on a core from the switch tracepoint. Shares are of the
window's core time (2 cores x the window). perf's own writing is on the cores too (its row).
"""
import argparse
import bisect
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict

# ----------------------------------------------------------------------------------- record


def snapshot_procs():
    """pid -> {ppid, comm, args, autogroup}, and the nice of every thread of the bench's processes."""
    procs = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        pid = int(d)
        try:
            with open(f'/proc/{pid}/stat', 'rb') as f:
                stat = f.read().decode('utf-8', 'replace')
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                args = f.read().replace(b'\0', b' ').decode('utf-8', 'replace').strip()
        except OSError:
            continue
        comm = stat[stat.index('(') + 1:stat.rindex(')')]
        rest = stat[stat.rindex(')') + 2:].split()
        entry = {'ppid': int(rest[1]), 'comm': comm, 'args': args[:300]}
        if re.search(r'chromium|orbit|node|claude|/deps/it-', args):
            try:
                with open(f'/proc/{pid}/autogroup') as f:
                    entry['autogroup'] = f.read().strip()
            except OSError:
                pass
            nice = {}
            try:
                for tid in os.listdir(f'/proc/{pid}/task'):
                    with open(f'/proc/{pid}/task/{tid}/stat') as f:
                        s = f.read()
                    tcomm = s[s.index('(') + 1:s.rindex(')')]
                    fields = s[s.rindex(')') + 2:].split()
                    nice[tid] = [tcomm, int(fields[16])]
            except OSError:
                pass
            entry['threads'] = nice
        procs[pid] = entry
    return procs


def record(out_dir, command):
    os.makedirs(out_dir, exist_ok=True)
    offset_start = time.time() - time.monotonic()
    perf = subprocess.Popen(
        ['perf', 'record', '-q', '-a', '-k', 'CLOCK_MONOTONIC',
         '-e', 'sched:sched_switch', '-e', 'sched:sched_wakeup', '-e', 'sched:sched_wakeup_new',
         '-o', os.path.join(out_dir, 'perf.data')],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()

    def sample():
        with open(os.path.join(out_dir, 'procs.jsonl'), 'w') as f:
            while not stop.is_set():
                f.write(json.dumps({'t': time.time() * 1000, 'procs': snapshot_procs()}) + '\n')
                f.flush()
                stop.wait(5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(0.5)
    try:
        code = subprocess.call(command)
    finally:
        stop.set()
        sampler.join()
        perf.send_signal(signal.SIGINT)
        perf.wait()
    offset_end = time.time() - time.monotonic()
    with open(os.path.join(out_dir, 'clock.json'), 'w') as f:
        json.dump({'epochMinusMonotonicS': (offset_start + offset_end) / 2, 'drift': offset_end - offset_start}, f)
    return code


def set_slice(tid, ns):
    """sched_setattr(tid, {SCHED_OTHER, sched_runtime: ns}): 0 or the errno."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    # struct sched_attr (version 1, 56 bytes): size, policy, flags, nice, priority, runtime, deadline, period, util min, max.
    attr = ctypes.create_string_buffer(struct.pack('IIQiIQQQII', 56, 0, 0, 0, 0, ns, 0, 0, 0, 0))
    if libc.syscall(314, tid, attr, 0) != 0:  # SYS_sched_setattr (x86_64)
        return ctypes.get_errno()
    return 0


def run_with_slice(regex, ns, command):
    pattern = re.compile(regex)
    done = set()
    failed = defaultdict(int)
    stop = threading.Event()

    def apply():
        while not stop.is_set():
            for d in os.listdir('/proc'):
                if not d.isdigit():
                    continue
                try:
                    with open(f'/proc/{d}/cmdline', 'rb') as f:
                        args = f.read().replace(b'\0', b' ').decode('utf-8', 'replace')
                    if not pattern.search(args):
                        continue
                    tids = os.listdir(f'/proc/{d}/task')
                except OSError:
                    continue
                for tid in tids:
                    if int(tid) in done:
                        continue
                    err = set_slice(int(tid), ns)
                    if err:
                        failed[err] += 1
                    done.add(int(tid))
            stop.wait(0.2)

    worker = threading.Thread(target=apply, daemon=True)
    worker.start()
    try:
        code = subprocess.call(command)
    finally:
        stop.set()
        worker.join()
    sys.stderr.write(f'latency-sched: slice {ns} ns given to {len(done) - sum(failed.values())} threads matching {regex!r}; refused: {dict(failed)}\n')
    return code


# ----------------------------------------------------------------------------------- report

LINE = re.compile(r'^\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)$')
SWITCH = re.compile(r'prev_comm=(.*) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=(\d+)')
WAKE = re.compile(r'comm=(.*) pid=(\d+) prio=(\d+)')


def role_of(pid, procs):
    """The bench's name for a process (by its command line and its parents)."""
    def chain(p):
        seen = 0
        while p in procs and seen < 64:
            yield p, procs[p]
            p = procs[p]['ppid']
            seen += 1
    args = procs.get(pid, {}).get('args', '')
    ours = any('latency.mjs' in info['args'] for _p, info in chain(pid))
    if ('chromium' in args or 'chrome' in args.split(' ')[0]) and not ours:
        return 'other processes'
    if 'chromium' in args or 'chrome' in args.split(' ')[0]:
        if '--type=gpu-process' in args:
            return 'chromium GPU process'
        if '--type=renderer' in args:
            return 'chromium renderer'
        if 'network.mojom.NetworkService' in args:
            return 'chromium network'
        if '--type=' in args:
            return 'chromium other (utility, zygote)'
        return 'chromium browser'
    if 'claude-shim.mjs' in args:
        return 'claude-shim (node)'
    if 'latency.mjs' in args:
        return 'Playwright driver (node, latency.mjs)'
    if 'latency-sched.py' in args:
        return 'this sampler'
    if args.startswith('perf ') or procs.get(pid, {}).get('comm') == 'perf':
        return 'perf (recording)'
    for p, info in list(chain(pid))[1:]:
        if 'claude-shim.mjs' in info['args']:
            return 'claude CLI'
    if re.search(r'(^|/)orbit\s+open\b', args) or re.search(r'/orbit\b.*\bopen\b', args):
        return 'orbit'
    if '/deps/it-' in args:
        return 'harness (cargo test: fake API)'
    return 'other processes'


def load_procs(path):
    """pid -> the last snapshot's entry for it (processes come and go; the last seen is kept)."""
    procs = {}
    with open(path) as f:
        for line in f:
            snap = json.loads(line)
            for pid, entry in snap['procs'].items():
                procs[int(pid)] = entry
    return procs


def parse_perf(data, offset_ms):
    """Runs (tid -> [(start, end, cpu)]), waits (tid -> [(start, end)]), tid -> pid, tid -> comm."""
    out = subprocess.run(['perf', 'script', '-i', data, '-F', 'comm,pid,tid,cpu,time,event,trace'],
                         capture_output=True, text=True, errors='replace', check=True).stdout
    return parse_lines(out.splitlines(), offset_ms)


def parse_lines(lines, offset_ms):
    """`perf script` lines (comm pid/tid [cpu] secs: event: fields) -> parse_perf's tuple."""
    tgid = {}
    comm = {}
    running = {}  # cpu -> (tid, since)
    runnable = {}  # tid -> since
    runs = defaultdict(list)
    waits = defaultdict(list)
    first = last = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        cur_comm, pid, tid, cpu, t, event, trace = m.groups()
        pid, tid, cpu = int(pid), int(tid), int(cpu)
        t = float(t) * 1000 + offset_ms
        first = t if first is None else first
        last = t
        if tid:
            tgid[tid] = pid
            comm[tid] = cur_comm
        if event == 'sched:sched_switch':
            s = SWITCH.match(trace)
            if not s:
                continue
            prev, state, nxt = int(s.group(2)), s.group(4), int(s.group(6))
            comm.setdefault(nxt, s.group(5))
            r = running.get(cpu)
            if r and r[0] == prev and prev:
                runs[prev].append((r[1], t, cpu))
            if prev and state.startswith('R'):
                runnable[prev] = t
            else:
                runnable.pop(prev, None)
            if nxt:
                since = runnable.pop(nxt, None)
                if since is not None and t > since:
                    waits[nxt].append((since, t))
            running[cpu] = (nxt, t)
        elif event in ('sched:sched_wakeup', 'sched:sched_wakeup_new'):
            w = WAKE.match(trace)
            if w:
                woken = int(w.group(2))
                comm.setdefault(woken, w.group(1))
                # A wake-up of a task on a core (ttwu of a running task) starts no wait.
                if not any(r[0] == woken for r in running.values()):
                    runnable.setdefault(woken, t)
    return runs, waits, tgid, comm, (first, last)


def overlap(intervals, a, b):
    total = 0.0
    for iv in intervals:
        lo, hi = max(iv[0], a), min(iv[1], b)
        if hi > lo:
            total += hi - lo
    return total


class Index:
    """Interval lists sorted by start, for quick window sums."""

    def __init__(self, by_tid):
        self.by_tid = {tid: sorted(ivs) for tid, ivs in by_tid.items()}
        self.starts = {tid: [iv[0] for iv in ivs] for tid, ivs in self.by_tid.items()}
        self.longest = {tid: max((iv[1] - iv[0] for iv in ivs), default=0) for tid, ivs in self.by_tid.items()}

    def sum(self, tid, a, b):
        ivs = self.by_tid.get(tid)
        if not ivs:
            return 0.0
        i = bisect.bisect_left(self.starts[tid], a - self.longest[tid])
        j = bisect.bisect_right(self.starts[tid], b)
        return overlap(ivs[i:j], a, b)


HOPS = [('cliToRead', 'shim', 'read', 'CLI line -> Orbit read'),
        ('readToEvent', 'read', 'event', 'Orbit: read -> workspace'),
        ('eventToPush', 'event', 'push', 'Orbit: workspace -> page log'),
        ('pushToSent', 'push', 'sent', 'Orbit: page log -> socket'),
        ('sentToPage', 'sent', 'arrived', 'socket -> page message'),
        ('pageToDom', 'arrived', 'dom', 'page: message -> DOM')]
MARKER = re.compile(r'mk\d+[atb]')
# The processes a change passes through (their threads' waits are listed by hop).
PATH = ('orbit', 'claude-shim (node)', 'chromium network', 'chromium renderer (live page)', 'chromium browser')


def changes(raw, result=None):
    if 'changes' in raw:
        return raw['changes']
    if result is not None:
        # Rebuilt from the result's samples (live and the split): exact, unlike the raw texts (cut at 200 characters).
        out = {}
        for marker, sample in result['samples'].items():
            dom = raw['dom'].get(marker)
            if dom is None or sample.get('live') is None:
                continue
            at = {'shim': dom - sample['live']}
            prev = 'shim'
            for key, x, y, _name in HOPS:
                gap = sample['split'].get(key)
                at[y] = at[prev] + gap if gap is not None and at.get(prev) is not None else None
                prev = y
            at['dom'] = dom
            out[marker] = at
        return out

    def first(records, key):
        out = {}
        for r in records:
            s = r.get(key) or ''
            for m in MARKER.findall(s):
                out.setdefault(m, r)
        return out
    line = first(raw['shim'], 'line')
    read = first([r for r in raw['trace'] if r['stage'] == 'read'], 'text')
    event = first([r for r in raw['trace'] if r['stage'] == 'event'], 'text')
    push = first([r for r in raw['trace'] if r['stage'] == 'push'], 'text')
    sent = {}
    for r in raw['trace']:
        if r['stage'] == 'sent' and r.get('seq') is not None:
            sent.setdefault(str(r['seq']), r['t'])
    arrived = {}
    for f in raw['frames']:
        if f.get('seq') is not None:
            arrived.setdefault(str(f['seq']), f['t'])
    out = {}
    for marker, dom in raw['dom'].items():
        if marker not in line:
            continue
        seq = str(push[marker]['seq']) if marker in push else None
        at = {'shim': line[marker]['t'], 'read': read.get(marker, {}).get('t'), 'event': event.get(marker, {}).get('t'),
              'push': push.get(marker, {}).get('t'), 'sent': sent.get(seq), 'arrived': arrived.get(seq), 'dom': dom}
        out[marker] = at
    return out


def report(args):
    with open(os.path.join(args.dir, 'clock.json')) as f:
        offset_ms = json.load(f)['epochMinusMonotonicS'] * 1000
    procs = load_procs(os.path.join(args.dir, 'procs.jsonl'))
    runs, waits, tgid, comm, span = parse_perf(os.path.join(args.dir, 'perf.data'), offset_ms)
    with open(args.raw) as f:
        raw = json.load(f)
    result = None
    if args.result:
        with open(args.result) as f:
            result = json.load(f)
    at = changes(raw, result)
    run_ix, wait_ix = Index(runs), Index(waits)
    role_cache = {}

    def role(tid):
        pid = tgid.get(tid, tid)
        if pid not in role_cache:
            role_cache[pid] = role_of(pid, procs) if pid else 'idle'
        return role_cache[pid]

    # The live page's renderer: the renderer that ran most in the live changes' message -> DOM.
    renderer_ms = defaultdict(float)
    for a in at.values():
        if a['arrived'] and a['dom']:
            for tid in runs:
                if role(tid) == 'chromium renderer':
                    renderer_ms[tgid.get(tid, tid)] += run_ix.sum(tid, a['arrived'], a['dom'])
    live_renderer = max(renderer_ms, key=renderer_ms.get) if renderer_ms else None

    def kind(tid):
        r = role(tid)
        if r == 'chromium renderer':
            r = "chromium renderer (live page)" if tgid.get(tid, tid) == live_renderer else 'chromium renderer (floor page)'
        return r

    def thread_name(tid):
        name = comm.get(tid, '?')
        return re.sub(r'\d+$', '', name) or name

    def window(a, b):
        ran = defaultdict(float)
        ran_thread = defaultdict(float)
        waited = []
        for tid in runs:
            ms = run_ix.sum(tid, a, b)
            if ms > 0:
                ran[kind(tid)] += ms
                ran_thread[(kind(tid), thread_name(tid))] += ms
        for tid in waits:
            ms = wait_ix.sum(tid, a, b)
            if ms > 0.5:
                waited.append((ms, kind(tid), thread_name(tid), tid))
        waited.sort(reverse=True)
        return ran, ran_thread, waited

    live = {m: a['dom'] - a['shim'] for m, a in at.items() if a['shim'] and a['dom']}
    slow = sorted(live, key=live.get, reverse=True)[:args.top]
    lines = []
    total_ran = defaultdict(float)
    total_thread = defaultdict(float)
    total_wait = defaultdict(float)
    total_ms = 0.0
    by_hop = {}
    lines.append(f'perf span {span[0]:.0f}..{span[1]:.0f} (epoch ms); changes {len(live)}; live renderer pid {live_renderer}')
    for m in slow:
        a = at[m]
        hops = [(key, name, a[x], a[y]) for key, x, y, name in HOPS if a[x] is not None and a[y] is not None]
        hop = max(hops, key=lambda h: h[3] - h[2])
        split = ' '.join(f'{k}={b - s:.1f}' for k, _, s, b in hops)
        ran, _, waited = window(a['shim'], a['dom'])
        hr, hthread, hwait = window(hop[2], hop[3])
        w = hop[3] - hop[2]
        total_ms += w
        for k, v in hr.items():
            total_ran[k] += v
        for k, v in hthread.items():
            total_thread[k] += v
        for ms, k, name, _tid in hwait:
            total_wait[(k, name)] += ms
        by_hop.setdefault(hop[1], [0.0, defaultdict(float), 0, defaultdict(float)])
        by_hop[hop[1]][0] += w
        by_hop[hop[1]][2] += 1
        for k, v in hr.items():
            by_hop[hop[1]][1][k] += v
        for ms, k, name, _tid in hwait:
            if k in PATH:
                by_hop[hop[1]][3][f'{k}/{name}'] += ms
        lines.append(f'\n{m}: live {live[m]:.1f} ms; {split}')
        lines.append(f'  slowest hop {hop[1]} ({w:.1f} ms): who ran (ms of 2 x {w:.1f}): ' + ', '.join(
            f'{k} {v:.1f}' for k, v in sorted(hr.items(), key=lambda kv: -kv[1]) if v >= 0.5))
        lines.append('    waiting for a core: ' + ', '.join(f'{k}/{n} {ms:.1f}' for ms, k, n, _ in hwait[:8]))
    lines.append(f'\nSummed over the {len(slow)} slowest changes\' slowest hops ({total_ms:.0f} ms of wall time, {2 * total_ms:.0f} ms of core time):')
    lines.append(f"  {'who ran':54} {'ms':>8} {'share':>7}")
    busy = 0.0
    for k, v in sorted(total_ran.items(), key=lambda kv: -kv[1]):
        busy += v
        lines.append(f'  {k:54} {v:8.1f} {100 * v / (2 * total_ms):6.1f}%')
    lines.append(f"  {'(idle)':54} {2 * total_ms - busy:8.1f} {100 * (2 * total_ms - busy) / (2 * total_ms):6.1f}%")
    lines.append('  by the slowest hop (share of its windows\' core time):')
    for name, (ms, ran_by, n, path_wait) in sorted(by_hop.items(), key=lambda kv: -kv[1][0]):
        top = ', '.join(f'{k} {100 * v / (2 * ms):.0f}%' for k, v in sorted(ran_by.items(), key=lambda kv: -kv[1]) if v / (2 * ms) >= 0.02)
        lines.append(f'    {name} ({n} changes, {ms:.0f} ms): {top}, idle {100 * (1 - sum(ran_by.values()) / (2 * ms)):.0f}%')
        waited = ', '.join(f'{k} {100 * v / ms:.0f}%' for k, v in sorted(path_wait.items(), key=lambda kv: -kv[1])[:5])
        lines.append(f'      the path\'s threads runnable, not running (share of the windows\' wall time): {waited}')
    lines.append('  by thread (top 15):')
    for (k, n), v in sorted(total_thread.items(), key=lambda kv: -kv[1])[:15]:
        lines.append(f'    {k + " / " + n:52} {v:8.1f} {100 * v / (2 * total_ms):6.1f}%')
    lines.append('  runnable but waiting (top 12, ms summed over the windows):')
    for (k, n), v in sorted(total_wait.items(), key=lambda kv: -kv[1])[:12]:
        lines.append(f'    {k + " / " + n:52} {v:8.1f}')
    # Every change, for contrast: its whole window (shim line -> DOM).
    all_ran = defaultdict(float)
    all_ms = 0.0
    for m, a in at.items():
        if m in live:
            r, _, _ = window(a['shim'], a['dom'])
            all_ms += a['dom'] - a['shim']
            for k, v in r.items():
                all_ran[k] += v
    lines.append(f'\nEvery change\'s whole window, for contrast ({all_ms:.0f} ms of wall time):')
    for k, v in sorted(all_ran.items(), key=lambda kv: -kv[1]):
        lines.append(f'  {k:54} {v:8.1f} {100 * v / (2 * all_ms):6.1f}%')
    # The nice and autogroup of the bench's processes (the last snapshot).
    lines.append('\nNice (threads not at 0) and autogroup of the bench\'s processes:')
    for pid, e in sorted(procs.items()):
        r = role_of(pid, procs)
        if r in ('other processes',) or 'threads' not in e:
            continue
        odd = sorted({f'{c}={n}' for c, n in e['threads'].values() if n != 0})
        lines.append(f"  {pid} {r}: {e.get('autogroup', '?')}; {' '.join(odd) or 'all nice 0'}")
    print('\n'.join(lines))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'slowest': {m: {'live': live[m], 'at': at[m]} for m in slow},
                       'ranInSlowHops': total_ran, 'slowHopsMs': total_ms,
                       'waitingInSlowHops': {f'{k} / {n}': v for (k, n), v in total_wait.items()}}, f, indent=1)


def selftest():
    """The accounting on a made-up record: a preemption and a wake-up start a wait, a wake-up of a
    task on a core does not, a task that sleeps waits for nothing until it is woken."""
    lines = [
        # cpu0: A (tid 10) runs from 0; B (tid 20) is woken at 1 ms while A runs.
        'a 1/10 [000] 0.000: sched:sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120',
        'a 1/10 [000] 0.001: sched:sched_wakeup: comm=b pid=20 prio=120 target_cpu=000',
        # A is woken while on the core (no wait), then preempted at 3 ms by B (B waited 2 ms).
        'a 1/10 [000] 0.002: sched:sched_wakeup: comm=a pid=10 prio=120 target_cpu=000',
        'a 1/10 [000] 0.003: sched:sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=b next_pid=20 next_prio=120',
        # B sleeps at 4 ms; A runs again (A waited 1 ms).
        'b 2/20 [000] 0.004: sched:sched_switch: prev_comm=b prev_pid=20 prev_prio=120 prev_state=S ==> next_comm=a next_pid=10 next_prio=120',
        # A sleeps at 6 ms; the core idles; B is woken at 8 and runs at 8.5 (0.5 ms).
        'a 1/10 [000] 0.006: sched:sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120',
        'swapper 0/0 [000] 0.008: sched:sched_wakeup: comm=b pid=20 prio=120 target_cpu=000',
        'swapper 0/0 [000] 0.0085: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=20 next_prio=120',
        'b 2/20 [000] 0.009: sched:sched_switch: prev_comm=b prev_pid=20 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120',
    ]
    runs, waits, tgid, comm, _span = parse_lines(lines, 0.0)
    approx = lambda ivs: [tuple(round(x, 3) for x in iv[:2]) for iv in ivs]
    assert approx(runs[10]) == [(0.0, 3.0), (4.0, 6.0)], runs[10]
    assert approx(runs[20]) == [(3.0, 4.0), (8.5, 9.0)], runs[20]
    assert approx(waits[20]) == [(1.0, 3.0), (8.0, 8.5)], waits[20]
    assert approx(waits[10]) == [(3.0, 4.0)], waits[10]
    assert tgid[10] == 1 and tgid[20] == 2 and comm[20] == 'b'
    ix = Index(runs)
    assert abs(ix.sum(10, 2.0, 5.0) - 2.0) < 1e-9
    print('latency-sched: selftest ok')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('record')
    r.add_argument('dir')
    r.add_argument('command', nargs=argparse.REMAINDER)
    sub.add_parser('selftest')
    sl = sub.add_parser('slice')
    sl.add_argument('regex')
    sl.add_argument('ns', type=int)
    sl.add_argument('command', nargs=argparse.REMAINDER)
    q = sub.add_parser('report')
    q.add_argument('dir')
    q.add_argument('raw')
    q.add_argument('--top', type=int, default=10)
    q.add_argument('--json')
    q.add_argument('--result', help="the bench's result (target/artifacts/page/latency.json), for exact times when RAW has no `changes`")
    args = p.parse_args()
    if args.cmd == 'record':
        command = args.command[1:] if args.command[:1] == ['--'] else args.command
        sys.exit(record(args.dir, command))
    if args.cmd == 'selftest':
        selftest()
        return
    if args.cmd == 'slice':
        command = args.command[1:] if args.command[:1] == ['--'] else args.command
        sys.exit(run_with_slice(args.regex, args.ns, command))
    report(args)


if __name__ == '__main__':
    main()
