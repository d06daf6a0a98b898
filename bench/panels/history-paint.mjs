#!/usr/bin/env node
// The History panel's time to first paint (issue 20) on N synthetic
// transcripts of S MB in all (default 2,000 and 1,000 MB), in real Chromium
// against a real `orbit open`, each figure against `wc -l` over the same
// files measured in the same run:
//
//   cold    `orbit open` started with no summary cache (a fresh state
//           directory) until the first history entry is painted (the page
//           loaded, the History panel opened as soon as it could be);
//   warm    the same with the summary cache the cold run left on disk:
//           "once cached" (goal < 1 s);
//   reopen  a fresh page against the warm `orbit open`, History clicked
//           until an entry is painted (the wall clock, Playwright's click
//           and waits included; and in the page, from the click's event
//           time until the entry is painted);
//   history `orbit history --json` with its summary cache warm: the same
//           scan of cached transcripts without the page (process start-up
//           included).
//
// While the cold scan runs, the page must stay responsive (progress shown):
// the longest main-thread task of the page during the scan, and the time to
// open another panel (`Settings`, clicked until its dialog shows) while it
// runs, are measured too.
//
// The corpus is real transcript lines (crates/orbit-agent/tests/fixtures/
// history) with fresh session ids, padded to size, written under /tmp and
// deleted at the end (--keep keeps it).
//
//   cargo build --release -p orbit && npm --prefix web run build
//   node bench/panels/history-paint.mjs [--files 2000] [--size-mb 1000] [--runs 3] [--keep] [--corpus DIR]
//
// --corpus DIR writes the corpus into DIR once and reuses it (kept).
//
// ORBIT_BIN names the binary (default target/release/orbit). Prints a table
// to stderr and one JSON line to stdout.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, readdirSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeSync, writeFileSync } from 'node:fs';
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
const CORPUS = args.includes('--corpus') ? args[args.indexOf('--corpus') + 1] : null;
const KEEP = args.includes('--keep') || CORPUS !== null;
const BIN = process.env.ORBIT_BIN ?? join(repo, 'target', 'release', 'orbit');
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const root = CORPUS ?? mkdtempSync(join(tmpdir(), 'orbit-bench-panels-'));
mkdirSync(root, { recursive: true });
const fresh = !existsSync(join(root, 'ws'));
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
if (!fresh) {
  for (const name of readdirSync(project)) files.push(join(project, name));
  log(`reusing ${files.length} transcripts under ${root}`);
}
if (fresh) log(`writing ${FILES} transcripts of ${(perFile / 1024).toFixed(0)} KB under ${root}`);
for (let i = 0; fresh && i < FILES; i += 1) {
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
    ORBIT_CACHE_DIR: join(state, 'cache'),
    HOME: join(root, 'home'),
    CLAUDE_CONFIG_DIR: claude,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ORBIT_LOG: undefined,
    XDG_RUNTIME_DIR: undefined,
    DBUS_SESSION_BUS_ADDRESS: undefined,
  };
}

/** `orbit history --json` with its summary cache (warmed by a first call): the scan alone, once cached. */
function listing(state) {
  spawnSync(BIN, ['history', '--json', '--dir', ws], { env: env(state), stdio: 'ignore' });
  const start = performance.now();
  const out = spawnSync(BIN, ['history', '--json', '--dir', ws], { env: env(state), encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - start;
  if (out.status !== 0) throw new Error(`orbit history failed: ${out.stderr}`);
  return ms;
}

/** Until the History dialog lists an entry, two frames after. */
async function painted(page) {
  await page.getByRole('dialog', { name: 'History' }).getByRole('listitem').first().waitFor({ timeout: 600000 });
  await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => { requestAnimationFrame(r); }); }));
}

async function newPage(login) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(() => {
    window.benchLongest = 0;
    window.benchTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.benchTasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
    // When the list first holds an entry, in the page's clock (from the
    // navigation's start).
    window.benchListAt = null;
    const seen = new MutationObserver(() => {
      if (window.benchListAt === null && document.querySelector('ul.history-list > li')) {
        window.benchListAt = performance.now();
        seen.disconnect();
      }
    });
    document.addEventListener('DOMContentLoaded', () => { seen.observe(document.body, { childList: true, subtree: true }); });
  });
  const page = await context.newPage();
  countHistoryFrames(page);
  await page.goto(login);
  return { context, page };
}

/**
 * The history's frames a page receives over its socket (`history`: the
 * list; `historyProgress`: the scan's progress on its own), added up per
 * run: what the scans cost the page to receive and parse.
 */
const frames = { history: 0, historyBytes: 0, progress: 0, progressBytes: 0 };
function countHistoryFrames(page) {
  page.on('websocket', (ws) => {
    ws.on('framereceived', ({ payload }) => {
      const text = typeof payload === 'string' ? payload : payload.toString('utf8');
      const type = /"body":\{"type":"(history|historyProgress)"/.exec(text)?.[1];
      if (type === 'history') { frames.history += 1; frames.historyBytes += text.length; }
      if (type === 'historyProgress') { frames.progress += 1; frames.progressBytes += text.length; }
    });
  });
}
const takeFrames = () => { const f = { ...frames }; Object.keys(frames).forEach((k) => { frames[k] = 0; }); return f; };

/** While the scan runs: the page's longest task, another panel's opening time, the progress seen. */
async function responsiveWhileScanning(page) {
  const scanning = () => page.evaluate(() => window.orbitInspect.panels().history?.scanning === true);
  const sample = { settingsMs: null, progress: null, during: false };
  const t0 = await page.evaluate(() => performance.now());
  if (await scanning()) {
    sample.during = true;
    sample.progress = await page.evaluate(() => {
      const bar = document.querySelector('progress.history-progress');
      return bar && !bar.hidden ? `${bar.value} of ${bar.max}` : null;
    });
    const start = performance.now();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('dialog', { name: 'Settings' }).waitFor();
    sample.settingsMs = performance.now() - start;
    sample.stillScanning = await scanning();
    await page.getByRole('dialog', { name: 'Settings' }).getByRole('button', { name: /^Close/ }).click();
    await page.getByRole('button', { name: 'History', exact: true }).click();
  }
  sample.t0 = t0;
  return sample;
}

/** Starts `orbit open`, loads the page, opens History: ms until an entry is painted; then the same in a fresh page, and a rescan. */
async function run(state, { cold }) {
  mkdirSync(join(root, 'home'), { recursive: true });
  spawnSync(BIN, ['trust', ws], { env: env(state), stdio: 'ignore' });
  const start = performance.now();
  const child = spawn(BIN, ['open', '--no-browser', ws], { env: env(state), cwd: ws, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const [login] = await once(createInterface({ input: child.stdout }), 'line');
    const { context, page } = await newPage(login);
    await page.getByRole('button', { name: 'History', exact: true }).click();
    const busy = cold ? await responsiveWhileScanning(page) : null;
    await painted(page);
    const first = performance.now() - start;
    const inPage = await page.evaluate(() => window.benchListAt);
    let longestMs = null;
    if (busy?.during) {
      longestMs = await page.evaluate((t0) => Math.max(0, ...window.benchTasks.filter((t) => t.start + t.ms >= t0).map((t) => t.ms)), busy.t0);
    }
    // A fresh page against the same (warm) orbit (the login is spent: the
    // same browser context, the page's own address).
    const second = { context, page: await context.newPage() };
    countHistoryFrames(second.page);
    await second.page.goto(page.url());
    await page.close();
    await second.page.waitForFunction(() => window.orbitInspect?.panels().history?.scanning === false, null, { timeout: 600000, polling: 250 });
    // In the page: from the click's event time until the open dialog lists
    // an entry, two frames after (Playwright's own click is outside it).
    await second.page.evaluate(() => {
      const button = [...document.querySelectorAll('button')].find((b) => b.textContent === 'History');
      button.addEventListener('click', (e) => {
        const at = e.timeStamp;
        const check = () => {
          const dialog = document.getElementById(button.getAttribute('aria-controls'));
          if (dialog && !dialog.hidden && dialog.querySelector('li')) {
            requestAnimationFrame(() => { requestAnimationFrame(() => { window.benchOpened = performance.now() - at; }); });
          } else requestAnimationFrame(check);
        };
        check();
      }, { capture: true, once: true });
    });
    const reopenStart = performance.now();
    await second.page.getByRole('button', { name: 'History', exact: true }).click();
    await painted(second.page);
    const reopen = performance.now() - reopenStart;
    const opened = (await second.page.waitForFunction(() => window.benchOpened, null, { timeout: 60000 })).jsonValue();
    const count = await second.page.evaluate(() => window.orbitInspect.panels().history?.conversations.length ?? 0);
    // The rescan History's opening asked for, over the list the page holds.
    await second.page.waitForFunction(() => window.orbitInspect?.panels().history?.scanning === false, null, { timeout: 600000, polling: 100 });
    await second.context.close();
    return { first, inPage, reopen, opened: await opened, count, busy, longestMs, frames: takeFrames() };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit').catch(() => {});
  }
}

const cold = [];
const warm = [];
const reopen = [];
const rescan = [];
const opened = [];
const warmInPage = [];
const baseline = [];
const busy = [];
const received = [];
let listed = 0;
for (let i = 0; i < RUNS; i += 1) {
  const state = join(root, `state-${i}`);
  rmSync(state, { recursive: true, force: true });
  baseline.push(wc());
  const c = await run(state, { cold: true });
  cold.push(c.first);
  busy.push({ ...c.busy, longestMs: c.longestMs });
  const w = await run(state, { cold: false });
  warm.push(w.first);
  warmInPage.push(w.inPage);
  reopen.push(w.reopen, c.reopen);
  opened.push(w.opened, c.opened);
  rescan.push(listing(state), listing(state));
  received.push({ cold: c.frames, warm: w.frames });
  listed = w.count;
}
await browser.close();
if (!KEEP) rmSync(root, { recursive: true, force: true });

const base = median(baseline);
const rows = [
  ['wc -l (baseline)', base],
  ['cold: open to first entry painted', median(cold)],
  ['warm: open to first entry painted', median(warm)],
  ['  in the page: navigation to list', median(warmInPage)],
  ['reopen: History clicked, fresh page', median(reopen)],
  ['  the same in the page (click to paint)', median(opened)],
  ['orbit history, cached (the scan alone)', median(rescan)],
];
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
log(`\n${FILES} transcripts, ${SIZE_MB} MB, ${listed} listed, median of ${RUNS}, load average ${load}`);
for (const [name, ms] of rows) log(`${name.padEnd(38)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / base).toFixed(2)}x wc -l`);
for (const b of busy) {
  log(b.during
    ? `during the cold scan: Settings opened in ${b.settingsMs.toFixed(0)} ms (scan ${b.stillScanning ? 'still running' : 'over by then'}), progress ${b.progress ?? 'not shown'}, longest page task ${b.longestMs.toFixed(0)} ms`
    : 'during the cold scan: the scan was over before the page could look');
}
const mb = (b) => (b / 1e6).toFixed(2);
for (const r of received) {
  log(`history frames received (cold run / warm run): lists ${r.cold.history} of ${mb(r.cold.historyBytes)} MB / ${r.warm.history} of ${mb(r.warm.historyBytes)} MB; progress ${r.cold.progress} of ${r.cold.progressBytes} B / ${r.warm.progress} of ${r.warm.progressBytes} B`);
}
log(`goal: once cached (warm) under 1 s: ${median(warm) < 1000 ? 'met' : 'MISSED'}`);
process.stdout.write(`${JSON.stringify({ files: FILES, sizeMb: SIZE_MB, listed, load, baselineMs: base, coldMs: median(cold), warmMs: median(warm), warmInPageMs: median(warmInPage), reopenMs: median(reopen), openedMs: median(opened), rescanMs: median(rescan), coldRatio: median(cold) / base, warmRatio: median(warm) / base, busy, received })}\n`);
