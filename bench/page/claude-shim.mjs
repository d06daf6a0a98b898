#!/usr/bin/env node
// A `claude.path` shim for bench/page/latency: runs the real CLI
// ($ORBIT_SHIM_CLAUDE) with the same arguments, stdin and stderr, and
// passes its stdout on line by line, appending to $ORBIT_SHIM_LOG one JSON
// line per stdout line it passed on: {"t": epoch ms (sub-ms), "line": the
// line's first 2000 characters}. The time is taken just before the line is
// written on, so the latency measured from it includes none of the shim's
// own reading.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const real = process.env.ORBIT_SHIM_CLAUDE;
const log = process.env.ORBIT_SHIM_LOG;
if (!real || !log) {
  process.stderr.write('claude-shim: set ORBIT_SHIM_CLAUDE (the real claude) and ORBIT_SHIM_LOG (where to log)\n');
  process.exit(2);
}
// ORBIT_SHIM_REPLAY=1 (an experiment, never the goal's figure): the CLI runs no turn. Its
// stream-json process still starts and answers Orbit's control requests (the catalog's
// `initialize`: every stdin line but a prompt goes to it), but each prompt is answered by the
// shim with one recorded turn of the pinned CLI (claude-replay-turn.jsonl: `system/init`, the
// text, the `Read` call, its result, the closing text and `result`, with turn i's markers, this
// workspace's paths and fresh ids), each line after the wall time the real CLI took before it
// (`afterMs`: bench/README.md, "the claude CLI's own CPU per turn"), written on and logged as the
// CLI's are. The same stdout at the same pace, without the CLI's ~80 ms of CPU per turn.
// ORBIT_SHIM_REPLAY_BURN=1 (with it, the control): a thread of the shim spins on one core from
// each replayed prompt to its last line, as the CLI's main thread does in a real turn.
const replaying = process.env.ORBIT_SHIM_REPLAY === '1' && process.argv.includes('stream-json');
// ORBIT_SHIM_CLI_AUTOGROUP_NICE=<n> (an experiment, never the goal's figure): the CLI in a session
// of its own (so an autogroup of its own, where the kernel has them) at that autogroup nice, so
// that its bursts weigh less against Chromium's and Orbit's (bench/page/README.md, "Who held the
// cores").
const groupNice = process.env.ORBIT_SHIM_CLI_AUTOGROUP_NICE;
const child = spawn(real, process.argv.slice(2), { stdio: [replaying ? 'pipe' : 'inherit', 'pipe', 'inherit'], detached: groupNice !== undefined });
if (groupNice !== undefined) {
  try {
    writeFileSync(`/proc/${child.pid}/autogroup`, String(Number(groupNice)));
  } catch (error) {
    process.stderr.write(`claude-shim: the CLI's autogroup nice was not set: ${error.message}\n`);
  }
}
const passOn = (line) => {
  const t = performance.timeOrigin + performance.now();
  process.stdout.write(line);
  appendFileSync(log, `${JSON.stringify({ t, line: line.slice(0, 2000) })}\n`);
};
let held = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  held += chunk;
  let nl = held.indexOf('\n');
  while (nl >= 0) {
    const line = held.slice(0, nl + 1);
    held = held.slice(nl + 1);
    passOn(line);
    nl = held.indexOf('\n');
  }
});
child.stdout.on('end', () => {
  if (held) process.stdout.write(held);
});
let replayed = Promise.resolve();
if (replaying) replayed = replayTurns(child);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else void replayed.then(() => process.exit(code ?? 1));
});

// Prompts answered from the recording; every other stdin line goes on to the CLI. Resolves when
// stdin has ended and the last replayed turn is written.
function replayTurns(cli) {
  const here = dirname(fileURLToPath(import.meta.url));
  const turn = readFileSync(join(here, 'claude-replay-turn.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const cwd = process.cwd();
  const session = randomUUID();
  const home = process.env.CLAUDE_CONFIG_DIR ? dirname(process.env.CLAUDE_CONFIG_DIR) : (process.env.HOME ?? cwd);
  const fill = (line, i) => line
    .replaceAll('{{CWD}}', cwd)
    .replaceAll('{{HOME}}', home)
    .replaceAll('{{PROJECT}}', cwd.replace(/[^A-Za-z0-9]/g, '-'))
    .replaceAll('{{SESSION}}', session)
    .replaceAll('{{I}}', String(i))
    .replaceAll('{{TS}}', new Date().toISOString())
    .replace(/\{\{UUID\}\}/g, () => randomUUID());
  const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
  // The burn: a worker spinning while `spin[0]` is 1.
  const spin = new Int32Array(new SharedArrayBuffer(4));
  let burner = null;
  if (process.env.ORBIT_SHIM_REPLAY_BURN === '1') {
    burner = new Worker('const [s] = require("node:worker_threads").workerData; for (;;) { Atomics.wait(s, 0, 0); while (Atomics.load(s, 0) === 1) {} }', { eval: true, workerData: [spin] });
    burner.unref();
  }
  let queue = Promise.resolve();
  let count = 0;
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, nl + 1);
      pending = pending.slice(nl + 1);
      let msg = null;
      try { msg = JSON.parse(text); } catch { /* not JSON: the CLI's to judge */ }
      if (msg?.type !== 'user') {
        cli.stdin.write(text);
        continue;
      }
      // The turn's number is in its prompt (`Turn <i + 1>: ...`, as the latency bench types it);
      // else the prompts are counted.
      const content = typeof msg.message?.content === 'string' ? msg.message.content : JSON.stringify(msg.message?.content ?? '');
      const found = /\bTurn (\d+):/.exec(content);
      queue = queue.then(async () => {
        const i = found ? Number(found[1]) - 1 : count;
        count = i + 1;
        if (burner) {
          Atomics.store(spin, 0, 1);
          Atomics.notify(spin, 0);
        }
        for (const { afterMs, line } of turn) {
          await sleep(afterMs);
          passOn(`${fill(line, i)}\n`);
        }
        Atomics.store(spin, 0, 0);
      });
    }
  });
  return new Promise((ok) => {
    process.stdin.on('end', () => {
      void queue.then(() => {
        cli.stdin.end();
        ok();
      });
    });
  });
}
