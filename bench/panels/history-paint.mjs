#!/usr/bin/env node
// The History panel's time to first paint (issue 20) on N synthetic
// transcripts of S MB in all (default 2,000 and 1,000 MB), in real Chromium
// against a real `orbit open`, each figure against `wc -l` over the same
// files measured in the same run:
//
//   cold   `orbit open` started with no summary cache (a fresh state
//          directory) until the first history entry is painted (the page
//          loaded, the History panel opened as soon as it could be);
//   warm   the same with the summary cache the cold run left on disk;
//   again  in the warm page, History closed and opened again (a fresh scan
//          is asked) until an entry is painted: "once cached" (goal < 1 s).
//
// The corpus is real transcript lines (crates/orbit-agent/tests/fixtures/
// history) with fresh session ids, padded to size, written under /tmp and
// deleted at the end (--keep keeps it).
//
//   cargo build --release -p orbit && npm --prefix web run build
//   node bench/panels/history-paint.mjs [--files 2000] [--size-mb 1000] [--runs 3] [--keep]
//
// ORBIT_BIN names the binary (default target/release/orbit). Prints a table
// to stderr and one JSON line to stdout.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { closeSync, mkdtempSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const require = createRequire(join(repo, 'web', 'package.json'));
const { chromium } = require('playwright-core');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const FILES = opt('--files', 2000);
const SIZE_MB = opt('--size-mb', 1000);
const RUNS = opt('--runs', 3);
const KEEP = args.includes('--keep');
const BIN = process.env.ORBIT_BIN ?? join(repo, 'target', 'release', 'orbit');
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const root = mkdtempSync(join(tmpdir(), 'orbit-bench-panels-'));
const ws = join(root, 'ws');
mkdirSync(join(ws, 'src'), { recursive: true });
writeFileSync(join(ws, 'src', 'main.rs'), 'fn main() {}\n');
const sanitized = realpathSync(ws).replace(/[^A-Za-z0-9]/g, '-');
const claude = join(root, 'claude');
const project = join(claude, 'projects', sanitized);
mkdirSync(project, { recursive: true });

// The corpus.
const template = ['multiturn.jsonl', 'subagent_main.jsonl'].flatMap((name) =>
  readFileSync(join(repo, 'crates/orbit-agent/tests/fixtures/history', name), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)));
const perFile = Math.floor((SIZE_MB * 1024 * 1024) / FILES);
const files = [];
log(`writing ${FILES} transcripts of ${(perFile / 1024).toFixed(0)} KB under ${root}`);
for (let i = 0; i < FILES; i += 1) {
  const sid = randomUUID();
  const path = join(project, `${sid}.jsonl`);
  const fd = openSync(path, 'w');
  let written = 0;
  const chunk = template.map((e) => `${JSON.stringify('sessionId' in e ? { ...e, sessionId: sid } : e)}\n`).join('');
  const bytes = Buffer.from(chunk);
  while (written < perFile) {
    writeSync(fd, bytes);
    written += bytes.length;
  }
  closeSync(fd);
  files.push(path);
}

// The baseline: `wc -l` over the same files (the page cache warm, as for the runs).
const wc = () => {
  const start = performance.now();
  const out = spawnSync('sh', ['-c', `cd '${project}' && cat -- *.jsonl | wc -l`], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`wc -l failed: ${out.stderr}`);
  return performance.now() - start;
};
wc();

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});

function env(state) {
  return {
    ...process.env,
    ORBIT_CONFIG_DIR: state,
    HOME: join(root, 'home'),
    CLAUDE_CONFIG_DIR: claude,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ORBIT_LOG: undefined,
    XDG_RUNTIME_DIR: undefined,
    DBUS_SESSION_BUS_ADDRESS: undefined,
  };
}

/** Starts `orbit open`, loads the page, opens History: ms until an entry is painted; then the same again in that page. */
async function run(state) {
  mkdirSync(join(root, 'home'), { recursive: true });
  spawnSync(BIN, ['trust', ws], { env: env(state), stdio: 'ignore' });
  const start = performance.now();
  const child = spawn(BIN, ['open', '--no-browser', ws], { env: env(state), cwd: ws, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const [login] = await once(createInterface({ input: child.stdout }), 'line');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(login);
    const painted = async () => {
      await page.getByRole('button', { name: 'History', exact: true }).click();
      await page.getByRole('dialog', { name: 'History' }).getByRole('listitem').first().waitFor({ timeout: 600000 });
      await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => { requestAnimationFrame(r); }); }));
    };
    await painted();
    const first = performance.now() - start;
    await page.getByRole('dialog', { name: 'History' }).getByRole('button', { name: /^Close/ }).click();
    // Let the scan the first open asked for end, so `again` measures a cached list.
    await page.waitForFunction(() => window.orbitInspect.panels().history?.scanning === false, null, { timeout: 600000 }).catch(() => {});
    const againStart = performance.now();
    await painted();
    const again = performance.now() - againStart;
    const count = await page.evaluate(() => window.orbitInspect.panels().history?.conversations.length ?? 0);
    await context.close();
    return { first, again, count };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit').catch(() => {});
  }
}

const cold = [];
const warm = [];
const again = [];
const baseline = [];
let listed = 0;
for (let i = 0; i < RUNS; i += 1) {
  const state = join(root, `state-${i}`);
  baseline.push(wc());
  const c = await run(state);
  cold.push(c.first);
  const w = await run(state);
  warm.push(w.first);
  again.push(w.again);
  listed = w.count;
}
await browser.close();
if (!KEEP) rmSync(root, { recursive: true, force: true });

const base = median(baseline);
const rows = [
  ['wc -l (baseline)', base],
  ['cold: open to first entry painted', median(cold)],
  ['warm: open to first entry painted', median(warm)],
  ['once cached: History opened again', median(again)],
];
log(`\n${FILES} transcripts, ${SIZE_MB} MB, ${listed} listed, median of ${RUNS}`);
for (const [name, ms] of rows) log(`${name.padEnd(38)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / base).toFixed(2)}x wc -l`);
log(`goal: once cached under 1 s: ${median(again) < 1000 ? 'met' : 'MISSED'}`);
process.stdout.write(`${JSON.stringify({ files: FILES, sizeMb: SIZE_MB, listed, baselineMs: base, coldMs: median(cold), warmMs: median(warm), againMs: median(again), coldRatio: median(cold) / base, warmRatio: median(warm) / base, againRatio: median(again) / base })}\n`);
