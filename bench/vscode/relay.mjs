#!/usr/bin/env node
// A message's round trip through the VS Code relay against the browser's
// WebSocket, in the same run, against the same running Orbit:
//
//   ws     the page's channel as a browser holds it: an `action` frame sent
//          on `/ws` (with the login cookie and the page's Origin), until its
//          `ack` arrives
//   relay  the same frame through the extension host's own code
//          (`editors/vscode/src/relay.ts`, bundled by esbuild as the
//          extension is): `orbit.page.act` on the 0600 control socket, until
//          the ack is handed to the page
//
// The action is a `stopAll` with nothing running (a fresh id each time, so
// each one goes through the workspace's controller). The runs alternate
// between the two. Goal: the relay adds under 2 ms at p99. Not included:
// VS Code's own postMessage between the webview and the extension host
// (the same for any extension; it needs the workbench).
//
//   node bench/vscode/relay.mjs [--runs N]     (ORBIT_BIN: the orbit to run;
//   default target/release/orbit, else target/debug/orbit)
//
// Prints a table to stderr and one JSON line to stdout.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] ?? 0) || 2000;
const WARMUP = 200;

const orbitBin =
  process.env.ORBIT_BIN ??
  [join(repo, 'target/release/orbit'), join(repo, 'target/debug/orbit')].find((p) => existsSync(p));
if (!orbitBin) {
  console.error('relay bench: no orbit binary: cargo build --release -p orbit (or set ORBIT_BIN)');
  process.exit(1);
}

// The extension's relay, bundled as the extension is.
const vscodeDir = join(repo, 'editors/vscode');
const esbuild = createRequire(join(vscodeDir, 'package.json'))('esbuild');
const scratch = mkdtempSync(join(tmpdir(), 'orbit-relay-bench-'));
const relayModule = join(scratch, 'relay.mjs');
await esbuild.build({
  entryPoints: [join(vscodeDir, 'src/relay.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: relayModule,
  logLevel: 'warning',
});
const { Relay } = await import(pathToFileURL(relayModule).href);
const WebSocket = createRequire(join(repo, 'web/package.json'))('ws');

// A running Orbit of its own: a private config folder, a small workspace.
const config = join(scratch, 'config');
const ws = join(scratch, 'ws');
for (const dir of [config, ws]) {
  await import('node:fs').then((fs) => fs.mkdirSync(dir, { recursive: true }));
}
chmodSync(config, 0o700);
writeFileSync(join(ws, 'main.py'), 'import os\n');
const env = { ...process.env, ORBIT_CONFIG_DIR: config, HOME: scratch };
delete env.XDG_RUNTIME_DIR;
delete env.ORBIT_LOG;
const orbit = spawn(orbitBin, ['open', '--no-browser', ws], { env, cwd: ws, stdio: ['ignore', 'pipe', 'ignore'] });
const lines = createInterface({ input: orbit.stdout });
const login = await new Promise((resolve, reject) => {
  lines.once('line', resolve);
  orbit.once('exit', (code) => reject(new Error(`orbit open exited (${code})`)));
});
const cleanup = () => {
  orbit.kill('SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
};

try {
  // The browser: the login sets the cookie; the page's address names the workspace.
  const answer = await fetch(login.trim(), { redirect: 'manual' });
  const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0];
  const location = answer.headers.get('location') ?? '';
  const workspaceId = decodeURIComponent(/\/w\/([^/]+)/.exec(location)?.[1] ?? '');
  const origin = new URL(login).origin;
  if (!cookie || !workspaceId) throw new Error(`the login gave no cookie or workspace (${answer.status} ${location})`);
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/ws?w=${encodeURIComponent(workspaceId)}`, {
    headers: { Cookie: cookie, Origin: origin },
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const wsAcks = new Map();
  let snapshotDone;
  const snapshot = new Promise((resolve) => { snapshotDone = resolve; });
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.body?.type === 'snapshotEnd') snapshotDone();
    if (frame.body?.type === 'ack') wsAcks.get(frame.body.id)?.();
  });
  socket.send(JSON.stringify({ type: 'resume', instanceId: null, lastSeq: null }));
  await snapshot;

  // The extension host's relay.
  const relayAcks = new Map();
  const relay = new Relay({
    socket: join(config, 'run', 'control.sock'),
    workspace: ws,
    trusted: () => true,
    events: {
      frames: (frames) => {
        for (const frame of frames) if (frame.body?.type === 'ack') relayAcks.get(frame.body.id)?.();
      },
      state: () => undefined,
    },
  });
  relay.start();
  await relay.fromPage({ type: 'resume', instanceId: null, lastSeq: null });

  let n = 0;
  const frame = () => ({ type: 'action', id: `b${++n}`, request: { type: 'stopAll' } });
  async function overWs() {
    const f = frame();
    const acked = new Promise((resolve) => wsAcks.set(f.id, resolve));
    const t0 = process.hrtime.bigint();
    socket.send(JSON.stringify(f));
    await acked;
    wsAcks.delete(f.id);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }
  async function overRelay() {
    const f = frame();
    const acked = new Promise((resolve) => relayAcks.set(f.id, resolve));
    const t0 = process.hrtime.bigint();
    await relay.fromPage(f);
    await acked;
    relayAcks.delete(f.id);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }
  for (let i = 0; i < WARMUP; i += 1) {
    await overWs();
    await overRelay();
  }
  const times = { ws: [], relay: [] };
  for (let i = 0; i < RUNS; i += 1) {
    // Alternating which goes first, so both see the same load.
    if (i % 2 === 0) {
      times.ws.push(await overWs());
      times.relay.push(await overRelay());
    } else {
      times.relay.push(await overRelay());
      times.ws.push(await overWs());
    }
  }
  const pct = (xs, p) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  };
  const row = (xs) => ({ p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) });
  const result = {
    runs: RUNS,
    orbit: orbitBin,
    ws: row(times.ws),
    relay: row(times.relay),
  };
  result.addedP50Ms = result.relay.p50 - result.ws.p50;
  result.addedP99Ms = result.relay.p99 - result.ws.p99;
  result.ratioP99 = result.relay.p99 / result.ws.p99;
  result.goalMet = result.addedP99Ms < 2;
  const ms = (x) => `${x.toFixed(3)} ms`;
  console.error(`round trip of an action (${RUNS} each, ${orbitBin})`);
  console.error(`  browser WebSocket  p50 ${ms(result.ws.p50)}  p99 ${ms(result.ws.p99)}`);
  console.error(`  VS Code relay      p50 ${ms(result.relay.p50)}  p99 ${ms(result.relay.p99)}`);
  console.error(`  added at p99       ${ms(result.addedP99Ms)} (goal under 2 ms: ${result.goalMet ? 'met' : 'NOT met'}); ratio ${result.ratioP99.toFixed(2)}x`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  relay.close();
  socket.close();
} finally {
  cleanup();
}
