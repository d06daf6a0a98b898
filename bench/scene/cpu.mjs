// CPU time of a process tree from /proc: the sum of utime + stime of a
// root process and every descendant (for Chromium: the browser, its zygotes,
// the GPU process, the renderers, the utility processes).
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  // getconf missing: Linux's USER_HZ is 100 everywhere we run.
}

/** `[pid, ppid, utime + stime]` of every process, from /proc/<pid>/stat. */
function processes() {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    out.push([Number(entry), Number(fields[1]), Number(fields[11]) + Number(fields[12])]);
  }
  return out;
}

/** A Chromium process's kind from its command line (`--type=gpu-process`, `renderer`, ...; `browser` without one; `gone` once it ended). */
export function processType(pid) {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
    const type = args.find((a) => a.startsWith('--type='));
    return type ? type.slice('--type='.length) : 'browser';
  } catch {
    return 'gone';
  }
}

/** Pids of `root` and all its descendants, with their CPU ticks. */
export function treeTicks(root) {
  const all = processes();
  const children = new Map();
  const ticks = new Map();
  for (const [pid, ppid, t] of all) {
    ticks.set(pid, t);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const seen = new Map();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop();
    if (seen.has(pid) || !ticks.has(pid)) continue;
    seen.set(pid, ticks.get(pid));
    for (const child of children.get(pid) ?? []) stack.push(child);
  }
  return seen;
}

/**
 * Starts a measurement of the tree under `root`; `stop()` returns
 * `{ percent, cpuSeconds, seconds, processes }`: percent of ONE core
 * (100 = one core busy the whole time; the machine has two). The tree is
 * sampled every `everyMs` too, so a process that ends inside the window
 * counts with what it had used at its last sample; one born inside it
 * counts whole.
 */
export function startCpu(root, { now = () => performance.now(), everyMs = 250 } = {}) {
  const first = treeTicks(root);
  const latest = new Map(first);
  const sample = () => {
    for (const [pid, t] of treeTicks(root)) latest.set(pid, t);
  };
  const timer = setInterval(sample, everyMs);
  const t0 = now();
  return {
    stop() {
      clearInterval(timer);
      sample();
      const seconds = (now() - t0) / 1000;
      let ticks = 0;
      const byType = {};
      for (const [pid, t] of latest) {
        const used = t - (first.get(pid) ?? 0);
        ticks += used;
        const type = processType(pid);
        byType[type] = (byType[type] ?? 0) + (100 * used) / ticksPerSecond / seconds;
      }
      const cpuSeconds = ticks / ticksPerSecond;
      return { percent: (100 * cpuSeconds) / seconds, cpuSeconds, seconds, processes: latest.size, byType };
    },
  };
}
