// CPU time (ms) of the processes on a benchmark's path, from /proc (Linux; elsewhere none): who
// had the two cores. Used by latency.mjs and frame-cost.mjs. A script's own tree (`root`, its pid)
// is Chromium's; its parent's (`harness`: the Rust harness) holds Orbit, the claude-shim and the
// CLI behind it.
import { readFileSync, readdirSync } from 'node:fs';

/** /proc's clock ticks (USER_HZ), in ms. */
export const TICK_MS = 10;

/** The fields of /proc/<pid>/stat after the command's name, or null. */
export const procStat = (pid) => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
};

/** pid -> role ('chromium GPU process', 'chromium renderers', ..., 'claude CLI', 'orbit'). */
export function processRoles(root = process.pid, harness = process.ppid) {
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return new Map();
  }
  const info = new Map();
  for (const pid of pids) {
    const f = procStat(pid);
    if (!f) continue;
    let cmd = '';
    try { cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '); } catch { /* gone */ }
    info.set(pid, { ppid: Number(f[1]), cmd });
  }
  const under = (pid, top) => {
    for (let p = pid, n = 0; p > 1 && n < 64; p = info.get(p)?.ppid ?? 0, n += 1) if (p === top) return true;
    return false;
  };
  const roles = new Map();
  for (const [pid, { cmd }] of info) {
    let role = null;
    if (under(pid, root) && cmd.includes('chromium')) {
      role = cmd.includes('--type=gpu-process') ? 'chromium GPU process' : cmd.includes('--type=renderer') ? 'chromium renderers' : 'chromium browser, network';
    } else if (pid !== root && under(pid, harness)) {
      const shim = [...info].find(([p, i]) => i.cmd.includes('claude-shim.mjs') && under(pid, p));
      role = cmd.includes('claude-shim.mjs') ? 'claude-shim' : shim ? 'claude CLI' : /\borbit\b.*\bopen\b/.test(cmd) ? 'orbit' : null;
    }
    if (role) roles.set(pid, role);
  }
  return roles;
}

/** CPU ms by role now (utime + stime of each process, its threads included). */
export function cpuByRole(roles) {
  const out = {};
  for (const [pid, role] of roles) {
    const f = procStat(pid);
    if (f) out[role] = (out[role] ?? 0) + (Number(f[11]) + Number(f[12])) * TICK_MS;
  }
  return out;
}

export const cpuDelta = (a, b) => Object.fromEntries(Object.keys(b).map((k) => [k, b[k] - (a[k] ?? 0)]));
