#!/usr/bin/env node
// File completion's latency per keystroke (issue 20) on a FILES-file graph
// (default 100,000), in real Chromium against a real `orbit open`, against
// the same measures on a 100-file graph in the same run (the floor: the
// socket, the HTTP round trip and the page's rendering without the work of
// matching many paths). Goal: p99 under 16 ms.
//
//   server   `GET /w/<id>/search?q=<prefix>&limit=8` from the page, one
//            request per keystroke of each query (the server's matcher and
//            the HTTP round trip);
//   page     a keystroke typed into the `Add file` combobox until the
//            listbox `Files` shows that prefix's first match (the page's
//            own round trip: input event, request, answer, DOM).
//
// The workspaces are written under /tmp (FILES small Rust files in nested
// folders) and deleted at the end (--keep keeps them).
//
//   cargo build --release -p orbit && npm --prefix web run build
//   node bench/panels/completion.mjs [--files 100000] [--queries 20] [--keep]
//
// ORBIT_BIN names the binary (default target/release/orbit). Prints a table
// to stderr and one JSON line to stdout.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const require = createRequire(join(repo, 'web', 'package.json'));
const { chromium } = require('playwright-core');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const FILES = opt('--files', 100000);
const QUERIES = opt('--queries', 20);
const KEEP = args.includes('--keep');
const BIN = process.env.ORBIT_BIN ?? join(repo, 'target', 'release', 'orbit');
const log = (m) => process.stderr.write(`${m}\n`);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const root = mkdtempSync(join(tmpdir(), 'orbit-bench-completion-'));

/** A workspace of n files: crates/c<i>/src/m<j>/file_<k>.rs, 100 per folder. */
function workspace(name, n) {
  const ws = join(root, name);
  const paths = [];
  for (let i = 0; i < n; i += 1) {
    const dir = join('crates', `c${Math.floor(i / 10000)}`, 'src', `m${Math.floor(i / 100) % 100}`);
    const path = join(dir, `file_${i}.rs`);
    if (i % 100 === 0) mkdirSync(join(ws, dir), { recursive: true });
    writeFileSync(join(ws, path), `pub fn f${i}() {}\n`);
    paths.push(path);
  }
  return { ws, paths };
}

log(`writing ${FILES} files and a 100-file floor under ${root}`);
const big = workspace('big', FILES);
const small = workspace('small', 100);

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});

/** The queries: file names typed as a user would (a fuzzy abbreviation of a real path). */
function queries(paths) {
  const picked = [];
  for (let i = 0; i < QUERIES; i += 1) {
    const path = paths[Math.floor(((i + 0.5) / QUERIES) * paths.length)];
    const name = path.split('/').pop().replace('.rs', '');
    picked.push(`${name.replace('_', '')}rs`);
  }
  return picked;
}

async function measure({ ws, paths }) {
  const state = join(root, `state-${paths.length}`);
  const env = { ...process.env, ORBIT_CONFIG_DIR: state, HOME: join(root, 'home'), ORBIT_LOG: undefined, XDG_RUNTIME_DIR: undefined, DBUS_SESSION_BUS_ADDRESS: undefined };
  mkdirSync(join(root, 'home'), { recursive: true });
  spawnSync(BIN, ['trust', ws], { env, stdio: 'ignore' });
  const child = spawn(BIN, ['open', '--no-browser', ws], { env, cwd: ws, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const [login] = await once(createInterface({ input: child.stdout }), 'line');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(login);
    // The graph is whole once the workspace says how many files it holds.
    await page.waitForFunction((n) => (window.orbitInspect?.state()?.workspace?.graph?.files ?? 0) >= n, paths.length, { timeout: 600000, polling: 250 });
    const id = new URL(page.url()).pathname.split('/')[2];
    const typed = queries(paths);
    const server = await page.evaluate(async ({ id, typed }) => {
      const times = [];
      for (const q of typed) {
        for (let i = 1; i <= q.length; i += 1) {
          const start = performance.now();
          const response = await fetch(`/w/${encodeURIComponent(id)}/search?q=${encodeURIComponent(q.slice(0, i))}&limit=8`, { credentials: 'same-origin' });
          await response.json();
          times.push(performance.now() - start);
        }
      }
      return times;
    }, { id, typed });
    const add = page.getByRole('combobox', { name: 'Add file' });
    const pageTimes = [];
    for (const q of typed) {
      await add.fill('');
      for (let i = 1; i <= q.length; i += 1) {
        const prefix = q.slice(0, i);
        const want = await page.evaluate(async ({ id, prefix }) => {
          const r = await fetch(`/w/${encodeURIComponent(id)}/search?q=${encodeURIComponent(prefix)}&limit=8`);
          return (await r.json()).matches?.[0]?.path ?? null;
        }, { id, prefix });
        const start = Date.now();
        await add.press(q[i - 1]);
        if (want !== null) await page.getByRole('listbox', { name: 'Files' }).getByRole('option', { name: want }).first().waitFor({ timeout: 10000 });
        pageTimes.push(Date.now() - start);
      }
    }
    await context.close();
    return { server, page: pageTimes };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit').catch(() => {});
  }
}

const floor = await measure(small);
const result = await measure(big);
await browser.close();
if (!KEEP) rmSync(root, { recursive: true, force: true });

const row = (name, xs, base) => log(`${name.padEnd(28)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms  (${(pct(xs, 99) / pct(base, 99)).toFixed(2)}x the 100-file p99)`);
log(`\n${FILES} files, ${result.server.length} keystrokes`);
row('server: 100 files (floor)', floor.server, floor.server);
row(`server: ${FILES} files`, result.server, floor.server);
row('page: 100 files (floor)', floor.page, floor.page);
row(`page: ${FILES} files`, result.page, floor.page);
log(`goal: server p99 under 16 ms: ${pct(result.server, 99) < 16 ? 'met' : 'MISSED'}`);
process.stdout.write(`${JSON.stringify({
  files: FILES,
  keystrokes: result.server.length,
  serverP50: pct(result.server, 50), serverP99: pct(result.server, 99), serverFloorP99: pct(floor.server, 99),
  pageP50: pct(result.page, 50), pageP99: pct(result.page, 99), pageFloorP99: pct(floor.page, 99),
  serverRatio: pct(result.server, 99) / pct(floor.server, 99), pageRatio: pct(result.page, 99) / pct(floor.page, 99),
})}\n`);
