#!/usr/bin/env node
// A `claude.path` shim for bench/page/latency: runs the real CLI
// ($ORBIT_SHIM_CLAUDE) with the same arguments, stdin and stderr, and
// passes its stdout on line by line, appending to $ORBIT_SHIM_LOG one JSON
// line per stdout line it passed on: {"t": epoch ms (sub-ms), "line": the
// line's first 2000 characters}. The time is taken just before the line is
// written on, so the latency measured from it includes none of the shim's
// own reading.
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';

const real = process.env.ORBIT_SHIM_CLAUDE;
const log = process.env.ORBIT_SHIM_LOG;
if (!real || !log) {
  process.stderr.write('claude-shim: set ORBIT_SHIM_CLAUDE (the real claude) and ORBIT_SHIM_LOG (where to log)\n');
  process.exit(2);
}
// ORBIT_SHIM_CLI_AUTOGROUP_NICE=<n> (an experiment, never the goal's figure): the CLI in a session
// of its own (so an autogroup of its own, where the kernel has them) at that autogroup nice, so
// that its bursts weigh less against Chromium's and Orbit's (bench/page/README.md, "Who held the
// cores").
const groupNice = process.env.ORBIT_SHIM_CLI_AUTOGROUP_NICE;
const child = spawn(real, process.argv.slice(2), { stdio: ['inherit', 'pipe', 'inherit'], detached: groupNice !== undefined });
if (groupNice !== undefined) {
  try {
    writeFileSync(`/proc/${child.pid}/autogroup`, String(Number(groupNice)));
  } catch (error) {
    process.stderr.write(`claude-shim: the CLI's autogroup nice was not set: ${error.message}\n`);
  }
}
let held = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  held += chunk;
  let nl = held.indexOf('\n');
  while (nl >= 0) {
    const line = held.slice(0, nl + 1);
    held = held.slice(nl + 1);
    const t = performance.timeOrigin + performance.now();
    process.stdout.write(line);
    appendFileSync(log, `${JSON.stringify({ t, line: line.slice(0, 2000) })}\n`);
    nl = held.indexOf('\n');
  }
});
child.stdout.on('end', () => {
  if (held) process.stdout.write(held);
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
