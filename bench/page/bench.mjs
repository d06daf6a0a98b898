#!/usr/bin/env node
// The page's speed, each figure against a baseline measured in the same run
// (real Chromium, the page's real build, the mock host of web/e2e, which can
// send a long session at once):
//
//   load       page load to interactive (whole, entries rendered; also with the socket open)
//              with a 400-entry transcript, against a static HTML file of the
//              same 400 entries (goal: at most 2x)
//   big reply  the longest main-thread task while a 1 MB reply arrives,
//              against the longest while a 1 KB reply arrives (goal: no task
//              over 50 ms)
//   heap       the page's JS heap after 5,000 entries against after 400
//
//   npm --prefix web run build && node bench/page/bench.mjs [--runs N] [--before DIR]
//        [--profile otr|persistent]
//
// --profile: the browser profile every page of the run is loaded in
// (bench/scene/profile.mjs): `otr` (the default) an off-the-record context,
// `persistent` a normal temporary profile, as a user's browser (V8's code
// cache kept between loads).
//
// Prints a table to stderr and one JSON line to stdout.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { openPageBrowser, reported, watchPage, watchStatic } from './watch.mjs';
import { parseProfile } from '../scene/profile.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, '..', '..', 'web');
const require = createRequire(join(web, 'package.json'));
const { chromium } = require('playwright-core');
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] ?? 0) || 5;
// --before DIR: another build of the page (a `web/dist` copy), served by a mock host of its own and
// loaded in turn with this one: the before/after of a change in one run.
const BEFORE = args.includes('--before') ? args[args.indexOf('--before') + 1] : null;
const PROFILE = parseProfile(args);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function startMock(env = {}) {
  const child = spawn(process.execPath, [join(web, 'e2e', 'mock-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  // The mock host goes with the bench, also when it fails.
  process.on('exit', () => { child.kill('SIGTERM'); });
  const [address] = await once(createInterface({ input: child.stdout }), 'line');
  return { child, login: address, origin: new URL(address).origin };
}
const mock = await startMock();
const { login, origin } = mock;
// The same host without the snapshot in the page's HTML (the page waits for its socket's), measured
// in the same run: what the data block saves.
const socketOnly = await startMock({ MOCK_NO_PRELOAD: '1' });
const before = BEFORE ? await startMock({ MOCK_DIST: BEFORE }) : null;
// One context for every page of the run (the page's, the socket-only host's, the build before, the
// static file's), of the kind --profile names.
const browser = await openPageBrowser(chromium, PROFILE);
const context = await browser.newContext();

async function flood(n, bytes = 0, at = origin) {
  const last = Number(await (await fetch(`${at}/mock/flood?n=${n}&bytes=${bytes}`)).text());
  return last;
}

async function waitHolds(page, seq) {
  await page.waitForFunction((s) => {
    const st = window.orbitInspect?.state();
    return Boolean(st?.shown && st.transcripts[st.shown]?.seqs.includes(s));
  }, seq, { timeout: 60000 });
}

async function heap(page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}

async function longestTaskWhile(page, bytes) {
  await page.evaluate(() => {
    window.__benchLongest = 0;
    window.__benchObserver?.disconnect();
    window.__benchObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__benchLongest = Math.max(window.__benchLongest, e.duration);
    });
    window.__benchObserver.observe({ type: 'longtask' });
  });
  const last = await flood(0, bytes);
  await waitHolds(page, last);
  await new Promise((r) => setTimeout(r, 600));
  return page.evaluate(() => window.__benchLongest);
}

// The loads before the measured ones: this first page's, then each measured URL's first run. In a
// new tab (each load here), a script's V8 code cache (persistent profile only) is made on its
// second load and used from its third, as the traces show (bench/README.md, branch `cc`), but in
// Chromium 156 for classic scripts only: the page's module scripts get none on any load.
const first = await context.newPage();
await first.goto(login);
await first.waitForFunction(() => window.orbitInspect?.state().ready === true);
const last400 = await flood(400);
await waitHolds(first, last400);
const pageUrl = first.url().replace(/#.*$/, '');
await new Promise((r) => setTimeout(r, 300));
const heap400 = await heap(first);

// Load to interactive: the page (400 entries, over its socket) against a static file of the same entries.
const state = await first.evaluate(() => window.orbitInspect.state());
const texts = await first.evaluate(() => Array.from(document.querySelectorAll('[role="log"] [data-seq]')).length);
const staticHtml = `<!doctype html><meta charset="utf-8"><title>static</title><div role="log">${
  Array.from({ length: 400 }, (_, i) => `<article><p>Entry ${i + 1}: ${'a long line of conversation text, '.repeat(6)}</p></article>`).join('')
}</div>`;
// The socket-only host's page, signed in and holding the same 400 entries.
const other = await context.newPage();
await other.goto(socketOnly.login);
await other.waitForFunction(() => window.orbitInspect?.state().ready === true);
const otherLast = await flood(400, 0, socketOnly.origin);
await waitHolds(other, otherLast);
const otherUrl = other.url().replace(/#.*$/, '');
await other.close();
// The build before, signed in and holding the same 400 entries.
let beforeUrl = null;
if (before) {
  const page = await context.newPage();
  await page.goto(before.login);
  await page.waitForFunction(() => window.orbitInspect?.state().ready === true);
  await waitHolds(page, await flood(400, 0, before.origin));
  beforeUrl = page.url().replace(/#.*$/, '');
  await page.close();
}

/**
 * Loads `url`; the times (ms from navigation start) of the first animation frame in which the
 * 400 entries are shown, and of the first in which the socket is open too. The frames are watched
 * from the document's start by a script of the bench's own (`watch.mjs`; Playwright's own polling
 * would start only after the `load` event, which waits for the map's preload), which reports with
 * a console line: `page.waitForFunction` (how the bench waited until 2026-12-05) first evaluates
 * Playwright's injected script in the page, 13-20 ms of parsing on the page's main thread, which
 * landed inside the measured load whenever the call came before the entries were shown.
 */
async function load(url) {
  const page = await context.newPage();
  const done = reported(page);
  await page.addInitScript(watchPage, { untilConnected: true });
  await page.goto(url, { waitUntil: 'commit' });
  const times = await done;
  await page.close();
  return times;
}

// The static file comes from an HTTP server on this machine, as the page does (not from the
// browser's own interception), and is watched the same way: the first animation frame in which
// its 400 entries are shown (and, as before, its `loadEventEnd`).
const http = await import('node:http');
const staticServer = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(staticHtml);
});
await new Promise((resolve) => { staticServer.listen(0, '127.0.0.1', resolve); });
const staticUrl = `http://127.0.0.1:${staticServer.address().port}/bench-static.html`;
async function loadStatic() {
  const page = await context.newPage();
  const done = reported(page);
  await page.addInitScript(watchStatic);
  await page.goto(staticUrl, { waitUntil: 'commit' });
  const times = await done;
  await page.close();
  return times;
}

const loads = [];
const connected = [];
const staticShown = [];
const socketLoads = [];
const statics = [];
const beforeLoads = [];
for (let i = 0; i < RUNS; i += 1) {
  const times = await load(pageUrl);
  loads.push(times.shown);
  connected.push(times.connected);
  socketLoads.push((await load(otherUrl)).connected);
  if (beforeUrl) beforeLoads.push((await load(beforeUrl)).shown);
  const st = await loadStatic();
  statics.push(st.loadEnd);
  staticShown.push(st.shown);
}

// The longest task: a 1 MB reply against a 1 KB one (the page in front, as a user watching it).
await first.bringToFront();
// Calibration: the observer must see an 80 ms task the bench makes itself.
await first.evaluate(() => {
  window.__benchCalibration = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__benchCalibration = Math.max(window.__benchCalibration, e.duration);
  }).observe({ type: 'longtask' });
  setTimeout(() => { const end = performance.now() + 80; while (performance.now() < end) { /* busy */ } }, 0);
});
await new Promise((r) => setTimeout(r, 400));
const calibrationMs = await first.evaluate(() => window.__benchCalibration);
if (calibrationMs < 80) throw new Error(`the long-task observer missed an 80 ms task (saw ${calibrationMs} ms)`);
const big = [];
const small = [];
for (let i = 0; i < RUNS; i += 1) {
  small.push(await longestTaskWhile(first, 1000));
  big.push(await longestTaskWhile(first, 1_000_000));
}

// Heap: 5,000 entries against 400 (the big replies above left the ring again: 4,600 more entries).
const last5000 = await flood(4600);
await waitHolds(first, last5000);
const heap5000 = await heap(first);

await browser.close();
mock.child.kill('SIGTERM');
socketOnly.child.kill('SIGTERM');
before?.child.kill('SIGTERM');
staticServer.close();

const result = {
  runs: RUNS,
  profile: PROFILE,
  calibrationMs,
  loadMs: median(loads),
  staticLoadMs: median(statics),
  loadRatio: median(loads) / median(statics),
  // The static file's first animation frame showing its entries (the page's own definition of shown).
  staticShownMs: median(staticShown),
  loadRatioShown: median(loads) / median(staticShown),
  // Shown and the socket open (an action goes out at once).
  connectedMs: median(connected),
  connectedRatio: median(connected) / median(statics),
  // Without the snapshot in the HTML: shown once the socket's snapshot arrived (the page before it).
  socketOnlyMs: median(socketLoads),
  socketOnlyRatio: median(socketLoads) / median(statics),
  // The build given with --before, the same 400 entries shown (null without it).
  beforeMs: beforeLoads.length > 0 ? median(beforeLoads) : null,
  beforeRatio: beforeLoads.length > 0 ? median(beforeLoads) / median(statics) : null,
  loads,
  beforeLoads,
  statics,
  loadAverage: (await import('node:os')).loadavg()[0],
  // The longest over every run: the figure is a worst case.
  longestTaskBigMs: Math.max(...big),
  longestTaskSmallMs: Math.max(...small),
  longestTaskRatio: Math.max(...small) > 0 ? Math.max(...big) / Math.max(...small) : null,
  heap400,
  heap5000,
  heapRatio: heap5000 / heap400,
  renderedAt400: texts,
  lastSeq: state.lastSeq,
};
const line = (name, value, base, ratio, goal) => `${name.padEnd(12)} ${String(value).padStart(12)} ${String(base).padStart(12)} ${ratio.padStart(8)}  ${goal}`;
process.stderr.write(`browser profile: ${PROFILE}\n`);
process.stderr.write(`${line('figure', 'orbit', 'baseline', 'ratio', 'goal')}\n`);
process.stderr.write(`${line('load (ms)', result.loadMs.toFixed(1), result.staticLoadMs.toFixed(1), result.loadRatio.toFixed(2), '<= 2x the static file (400 entries shown)')}\n`);
process.stderr.write(`${line('+ socket', result.connectedMs.toFixed(1), result.staticLoadMs.toFixed(1), result.connectedRatio.toFixed(2), 'shown and the socket open')}\n`);
process.stderr.write(`${line('no preload', result.socketOnlyMs.toFixed(1), result.staticLoadMs.toFixed(1), result.socketOnlyRatio.toFixed(2), 'the snapshot over the socket only (before)')}\n`);
process.stderr.write(`${line('load (ms)', result.loadMs.toFixed(1), result.staticShownMs.toFixed(1), result.loadRatioShown.toFixed(2), 'against the static file’s first frame showing its entries')}\n`);
if (result.beforeMs !== null) process.stderr.write(`${line('before', result.beforeMs.toFixed(1), result.staticLoadMs.toFixed(1), result.beforeRatio.toFixed(2), `the same, the build in ${BEFORE}`)}\n`);
process.stderr.write(`${line('task (ms)', result.longestTaskBigMs.toFixed(0), result.longestTaskSmallMs.toFixed(0), result.longestTaskRatio === null ? 'n/a' : result.longestTaskRatio.toFixed(2), '1 MB reply vs 1 KB; no task > 50 ms')}\n`);
process.stderr.write(`${line('heap (B)', result.heap5000, result.heap400, result.heapRatio.toFixed(2), '5,000 vs 400 entries, <= 1.2')}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
