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
//   page     a keystroke typed into the `Add file` combobox, measured in
//            the page from the key's `keydown` (its event time) until the
//            listbox `Files` changed for it (the page's own round trip:
//            input event, request, answer, DOM); `page painted` until the
//            second frame after; `playwright` the wall clock around
//            Playwright's `press` and its wait (its CDP round trips
//            included). Each answer's first option is checked against the
//            matcher's.
//
// The workspaces are written under /tmp (FILES small Rust files in nested
// folders) and deleted at the end (--keep keeps them).
//
//   cargo build --release -p orbit && npm --prefix web run build
//   node bench/panels/completion.mjs [--files 100000] [--queries 20] [--ab] [--keep]
//
// ORBIT_BIN names the binary (default target/release/orbit). Prints a table
// to stderr and one JSON line to stdout.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
// --trace: after the measure on FILES files, type the first query again
// under a Chrome trace and print, per keystroke, the renderer main
// thread's work from the key to the list changed (where the fixed cost is).
const TRACE = args.includes('--trace');
// --no-socket: no `search` frames (a build before them answers none).
const SOCKET = !args.includes('--no-socket');
// --ab: the same keystrokes typed, alternating per query, into a second tab
// of the same page with `?completion=channel` (the search worker off: the
// channel's way), the same-run baseline of the worker's hand-over.
const AB = args.includes('--ab');
// --before BIN: a second `orbit open` (another build, e.g. main's) on the
// same workspace, its page (the worker's way) typed into alternating per
// query with the others: the same-run baseline of a change to the server,
// the worker or the page.
const BEFORE = args.includes('--before') ? args[args.indexOf('--before') + 1] : null;
const TRACE_DEPTH = opt('--trace-depth', 3);
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

function newRun() {
  return { page: [], painted: [], wall: [], splits: [] };
}

/** The page's own measure of each keystroke (see the comment inside). */
async function instrument(page) {
  // In the page: from the keystroke's `keydown` (its event time, as the
  // browser stamped it) until the listbox `Files` changed for it (the
  // answer in the DOM), and until the frame after (painted). Playwright's
  // own cost (the CDP round trip of `press` and of the wait) is outside
  // these; the wall clock around `press` + wait is kept as `playwright`.
  await page.evaluate(() => {
    const input = document.querySelector('input[role="combobox"][aria-label="Add file"]');
    const list = document.getElementById(input.getAttribute('aria-controls'));
    const w = window;
    w.benchTimes = new Map();
    w.benchSeq = 0;
    w.benchKey = null;
    // Where a keystroke's time goes: the search request's resource
    // timing (sent, first byte, end) and the main thread's long tasks.
    performance.setResourceTimingBufferSize(100000);
    w.benchLong = [];
    try {
      new PerformanceObserver((l) => { for (const e of l.getEntries()) w.benchLong.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: false });
    } catch { /* no longtask entries in this browser */ }
    input.addEventListener('keydown', (e) => {
      w.benchSeq += 1;
      const key = { at: e.timeStamp, seq: w.benchSeq, frame: null };
      w.benchKey = key;
      performance.mark(`bench-key-${w.benchSeq}`, { startTime: e.timeStamp });
      // The first frame after the key (its animation-frame callbacks):
      // Chromium defers the page's other tasks (the answer's arrival
      // among them) after a key until that frame.
      requestAnimationFrame(() => { key.frame = performance.now(); });
    }, true);
    new MutationObserver(() => {
      const key = w.benchKey;
      if (key === null) return;
      w.benchKey = null;
      const dom = performance.now() - key.at;
      performance.mark(`bench-dom-${key.seq}`);
      const first = list.querySelector('[role="option"]')?.getAttribute('data-path') ?? null;
      const domAt = performance.now();
      requestAnimationFrame(() => { requestAnimationFrame(() => {
        // The last search request for this value, sent after the key.
        const url = `search?q=${encodeURIComponent(input.value.trim())}&limit=8`;
        const r = performance.getEntriesByType('resource').filter((e) => e.name.endsWith(url) && e.startTime >= key.at).pop();
        const split = r ? { toSent: r.startTime - key.at, server: r.responseStart - r.requestStart, wait: r.requestStart - r.startTime, body: r.responseEnd - r.responseStart, toDom: domAt - r.responseEnd } : null;
        const frames = key.frame === null ? {} : { toFrame: key.frame - key.at, frameToDom: domAt - key.frame };
        const long = w.benchLong.filter(([s, d]) => s + d >= key.at && s <= domAt).reduce((a, [, d]) => a + d, 0);
        // The worker's hand-over of this answer (its times, ms since the
        // epoch): the page's `orbit:completion-answer` mark.
        const origin = performance.timeOrigin;
        const handed = performance.getEntriesByName('orbit:completion-answer').pop()?.detail ?? null;
        const epoch = { key: origin + key.at, frame: key.frame === null ? null : origin + key.frame, dom: origin + domAt, handed };
        w.benchTimes.set(key.seq, { dom, painted: performance.now() - key.at, first, value: input.value, split: { ...split, ...frames }, long, epoch });
      }); });
    }).observe(list, { childList: true, subtree: true, attributes: true });
  });
}

/** Types `q` into `add` a key at a time, each measured in the page and checked against the matcher. */
async function typeQuery(page, add, id, q, run) {
  // With two tabs (--ab), only the front one is shown and has frames.
  await page.bringToFront();
  await page.waitForFunction(() => document.visibilityState === 'visible' && document.hasFocus(), null, { timeout: 10000 });
  await add.fill('');
  for (let i = 1; i <= q.length; i += 1) {
    const prefix = q.slice(0, i);
    const want = await page.evaluate(async ({ id, prefix }) => {
      const r = await fetch(`/w/${encodeURIComponent(id)}/search?q=${encodeURIComponent(prefix)}&limit=8`);
      return (await r.json()).matches?.[0]?.path ?? null;
    }, { id, prefix });
    const seq = await page.evaluate(() => window.benchSeq + 1);
    const start = performance.now();
    await add.press(q[i - 1]);
    const handle = await page.waitForFunction((s) => window.benchTimes.get(s), seq, { timeout: 10000, polling: 'raf' });
    run.wall.push(performance.now() - start);
    const t = await handle.jsonValue();
    if (t.value !== prefix || t.first !== want) throw new Error(`after ${JSON.stringify(prefix)} the list shows ${t.first} for ${JSON.stringify(t.value)}, the matcher says ${want}`);
    run.page.push(t.dom);
    run.painted.push(t.painted);
    run.splits.push({ query: prefix, dom: t.dom, long: t.long, ...(t.split ?? {}), epoch: t.epoch });
  }
}

async function measure({ ws, paths }) {
  const orbits = [];
  try {
    const { login, tracePath } = await startOrbit(BIN, ws, `${paths.length}`, orbits);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('crash', () => { log('the page crashed'); });
    page.on('pageerror', (e) => { log(`page error: ${e.message}`); });
    await page.goto(login);
    // The graph is whole once the workspace says how many files it holds.
    await page.waitForFunction((n) => (window.orbitInspect?.state()?.workspace?.graph?.files ?? 0) >= n, paths.length, { timeout: 600000, polling: 250 });
    const id = new URL(page.url()).pathname.split('/')[2];
    const typed = queries(paths);
    const byLength = [];
    // The round trip both ways, alternating per keystroke: `fetch` of
    // `/search` (a new request through the network service each time) and
    // a `search` frame over a WebSocket of the page's own (resumed like
    // the page's; its `searchAnswer`), each until the answer is parsed.
    // Paced at 30 ms a pair (the socket takes 50 frames a second).
    const both = await page.evaluate(async ({ id, typed, viaSocket }) => {
      const socket = !viaSocket ? null : new WebSocket(`ws://${location.host}/ws?w=${encodeURIComponent(id)}`);
      const waiting = new Map();
      let ended = null;
      const snapshot = new Promise((resolve) => { ended = resolve; });
      socket?.addEventListener('message', (event) => {
        const frame = JSON.parse(event.data);
        if (frame.body?.type === 'snapshotEnd') ended();
        if (frame.body?.type === 'searchAnswer') waiting.get(frame.body.id)?.(frame.body);
      });
      if (socket) {
        await new Promise((resolve) => { socket.addEventListener('open', resolve, { once: true }); });
        socket.send(JSON.stringify({ type: 'resume', instanceId: null, lastSeq: null }));
        await snapshot;
      }
      const http = [];
      const ws = [];
      let n = 0;
      for (const q of typed) {
        for (let i = 1; i <= q.length; i += 1) {
          const query = q.slice(0, i);
          let start = performance.now();
          const response = await fetch(`/w/${encodeURIComponent(id)}/search?q=${encodeURIComponent(query)}&limit=8`, { credentials: 'same-origin' });
          const first = (await response.json()).matches?.[0]?.path ?? null;
          http.push([i, performance.now() - start]);
          n += 1;
          if (!socket) { ws.push(NaN); continue; }
          start = performance.now();
          const answer = await new Promise((resolve) => {
            waiting.set(n, resolve);
            socket.send(JSON.stringify({ type: 'search', id: n, q: query, limit: 8 }));
          });
          ws.push(performance.now() - start);
          waiting.delete(n);
          if (answer.error) throw new Error(`searchAnswer for ${query}: ${answer.error}`);
          if ((answer.matches[0]?.path ?? null) !== first) throw new Error(`the socket's answer for ${query} differs from /search's`);
          await new Promise((resolve) => { setTimeout(resolve, 30); });
        }
      }
      socket?.close();
      return { http, ws };
    }, { id, typed, viaSocket: SOCKET });
    const server = both.http.map(([i, ms]) => { (byLength[i] ??= []).push(ms); return ms; });
    const socketTimes = both.ws;
    const add = page.getByRole('combobox', { name: 'Add file' });
    await add.waitFor();
    await instrument(page);
    const runs = { worker: newRun(), channel: newRun(), before: newRun() };
    let other = null;
    if (AB) {
      other = await context.newPage();
      other.on('pageerror', (e) => { log(`page error (channel tab): ${e.message}`); });
      const url = new URL(page.url());
      url.search = '?completion=channel';
      url.hash = '';
      await other.goto(url.toString());
      await other.waitForFunction((n) => (window.orbitInspect?.state()?.workspace?.graph?.files ?? 0) >= n, paths.length, { timeout: 600000, polling: 250 });
      await other.getByRole('combobox', { name: 'Add file' }).waitFor();
      await instrument(other);
    }
    const tabs = [[page, add, runs.worker]];
    if (other) tabs.push([other, other.getByRole('combobox', { name: 'Add file' }), runs.channel]);
    let beforeContext = null;
    let beforeTrace = null;
    if (BEFORE) {
      // Its own context: cookies are per host, not per port.
      const started = await startOrbit(BEFORE, ws, `${paths.length}-before`, orbits);
      beforeTrace = started.tracePath;
      beforeContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const before = await beforeContext.newPage();
      before.on('pageerror', (e) => { log(`page error (before tab): ${e.message}`); });
      await before.goto(started.login);
      await before.waitForFunction((n) => (window.orbitInspect?.state()?.workspace?.graph?.files ?? 0) >= n, paths.length, { timeout: 600000, polling: 250 });
      const input = before.getByRole('combobox', { name: 'Add file' });
      await input.waitFor();
      await instrument(before);
      tabs.push([before, input, runs.before]);
    }
    for (const [n, q] of typed.entries()) {
      // Which tab types first alternates per query.
      for (const [p, input, run] of n % 2 === 0 ? tabs : [...tabs].reverse()) {
        await typeQuery(p, input, id, q, run);
      }
    }
    const completionPaths = [];
    for (const [p] of tabs) completionPaths.push(await p.evaluate(() => window.orbitInspect.panels().completionPath));
    const r = runs.worker;
    const trace = TRACE && paths.length === FILES ? await traceKeys(page, add, typed[0]) : null;
    await context.close();
    await beforeContext?.close();
    if (BEFORE) runs.before.notes = serverNotes(beforeTrace);
    return { trace, server, socket: socketTimes, byLength: byLength.map((xs) => pct(xs, 50)), page: r.page, painted: r.painted, wall: r.wall, splits: r.splits, base: AB ? runs.channel : null, before: BEFORE ? runs.before : null, completionPaths, notes: serverNotes(tracePath) };
  } finally {
    for (const child of orbits) {
      child.kill('SIGTERM');
      await once(child, 'exit').catch(() => {});
    }
  }
}

/** `bin open` on `ws` (its own state and trace, named by `tag`); its login address. */
async function startOrbit(bin, ws, tag, children) {
  // The server's notes of each `search` frame (read, matcher, answer
  // written: `orbit_common::latency_note`), for the split of a keystroke.
  const tracePath = join(root, `trace-${tag}.jsonl`);
  const env = { ...process.env, ORBIT_CONFIG_DIR: join(root, `state-${tag}`), HOME: join(root, 'home'), ORBIT_LOG: undefined, XDG_RUNTIME_DIR: undefined, DBUS_SESSION_BUS_ADDRESS: undefined, ORBIT_LATENCY_TRACE: tracePath };
  mkdirSync(join(root, 'home'), { recursive: true });
  spawnSync(bin, ['trust', ws], { env, stdio: 'ignore' });
  const child = spawn(bin, ['open', '--no-browser', ws], { env, cwd: ws, stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  const [login] = await once(createInterface({ input: child.stdout }), 'line');
  return { login, tracePath };
}

/**
 * The server's notes of the search-only socket's frames (the worker's), by
 * the frame's id: `{read, matching, matched, sent, q}` in ms since the epoch.
 */
function serverNotes(path) {
  const notes = new Map();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return notes;
  }
  const names = { searchRead: 'read', searchMatching: 'matching', searchMatched: 'matched', searchSent: 'sent' };
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const note = JSON.parse(line);
    const name = names[note.stage];
    if (name === undefined || !note.text.startsWith('search')) continue;
    const entry = notes.get(note.seq) ?? {};
    entry[name] = note.t;
    if (name === 'read') entry.q = note.text.slice('search '.length);
    notes.set(note.seq, entry);
  }
  return notes;
}

/**
 * Each worker keystroke's round trip, stage by stage (ms), from the page's
 * epoch times, the worker's (in the hand-over) and the server's notes.
 */
const STAGES = [
  ['key->asked', (e) => e.handed.asked - e.key],
  ['asked->worker took', (e) => e.handed.took - e.handed.asked],
  ['worker took->sent', (e) => e.handed.sent - e.handed.took],
  ['sent->server read', (e) => e.server.read - e.handed.sent],
  ['read->match start', (e) => e.server.matching - e.server.read],
  ['match', (e) => e.server.matched - e.server.matching],
  ['matched->server sent', (e) => e.server.sent - e.server.matched],
  ['server sent->worker read', (e) => e.handed.answered - e.server.sent],
  ['worker read->handed', (e) => e.handed.handed - e.handed.answered],
  ['handed->page took', (e) => e.handed.taken - e.handed.handed],
  ['page took->DOM', (e) => e.dom - e.handed.taken],
];
function stagesOf(r) {
  const rows = [];
  for (const s of r.splits) {
    const e = s.epoch;
    if (!e?.handed || e.handed.q !== s.query) continue;
    const server = r.notes.get(e.handed.seq);
    if (!server || server.q !== s.query || server.sent === undefined) continue;
    const parts = STAGES.map(([, f]) => f({ ...e, server }));
    rows.push({ query: s.query, dom: s.dom, toFrame: s.toFrame, parts });
  }
  return rows;
}

/** Types `q` under a Chrome trace; per keystroke, the main thread's events from the key to the list changed. */
async function traceKeys(page, add, q) {
  await add.fill('');
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => { events.push(...e.value); });
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: { recordMode: 'recordAsMuchAsPossible', includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8.execute', 'v8', 'blink', 'loading', 'toplevel', 'disabled-by-default-devtools.timeline.frame'] },
  });
  for (let i = 1; i <= q.length; i += 1) {
    const seq = await page.evaluate(() => window.benchSeq + 1);
    await add.press(q[i - 1]);
    await page.waitForFunction((s) => window.benchTimes.get(s), seq, { timeout: 10000, polling: 'raf' });
  }
  const done = new Promise((resolve) => { cdp.once('Tracing.tracingComplete', resolve); });
  await cdp.send('Tracing.end');
  await done;
  mkdirSync(join(repo, 'target', 'artifacts'), { recursive: true });
  writeFileSync(join(repo, 'target', 'artifacts', 'completion-trace.json'), JSON.stringify({ traceEvents: events }));
  const marks = events.filter((e) => typeof e.name === 'string' && e.name.startsWith('bench-'));
  if (marks.length === 0) return ['no marks in the trace'];
  const { pid, tid } = marks.find((e) => e.name.startsWith('bench-dom-')) ?? marks[0];
  const at = (name) => marks.find((e) => e.name === name)?.ts;
  const main = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X' && typeof e.dur === 'number').sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const lines = [];
  const seqs = [...new Set(marks.map((e) => Number(e.name.split('-').pop())))].sort((a, b) => a - b);
  for (const seq of seqs) {
    const key = at(`bench-key-${seq}`);
    const dom = at(`bench-dom-${seq}`);
    if (key === undefined || dom === undefined) continue;
    lines.push(`key ${seq}: ${((dom - key) / 1000).toFixed(2)} ms to the list changed (then 8 ms more shown)`);
    const stack = [];
    for (const e of main) {
      if (e.ts + e.dur < key || e.ts > dom + 8000) continue;
      while (stack.length > 0 && stack[stack.length - 1] <= e.ts) stack.pop();
      const depth = stack.length;
      stack.push(e.ts + e.dur);
      if (depth > TRACE_DEPTH || e.dur < 100) continue;
      const detail = e.args?.data?.type ?? e.args?.data?.url?.split('/').pop() ?? e.args?.data?.functionName ?? '';
      lines.push(`  ${((e.ts - key) / 1000).toFixed(2).padStart(7)} +${(e.dur / 1000).toFixed(2).padStart(6)} ${'  '.repeat(depth)}${e.name} ${detail}`.slice(0, 150));
    }
  }
  return lines;
}

const floor = await measure(small);
const result = await measure(big);
await browser.close();
if (!KEEP) rmSync(root, { recursive: true, force: true });

const row = (name, xs, base) => log(`${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms  (${(pct(xs, 99) / pct(base, 99)).toFixed(2)}x the 100-file p99)`);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
log(`\n${FILES} files, ${result.server.length} keystrokes, load average ${load}`);
row('server: 100 files (floor)', floor.server, floor.server);
row(`server: ${FILES} files`, result.server, floor.server);
row('socket: 100 files (floor)', floor.socket, floor.socket);
row(`socket: ${FILES} files`, result.socket, floor.socket);
for (const [name, r] of [['100 files', floor], [`${FILES} files`, result]]) {
  log(`socket / HTTP round trip, ${name}, same run: p50 ${(pct(r.socket, 50) / pct(r.server, 50)).toFixed(2)}x, p99 ${(pct(r.socket, 99) / pct(r.server, 99)).toFixed(2)}x`);
}
row('page: 100 files (floor)', floor.page, floor.page);
row(`page: ${FILES} files`, result.page, floor.page);
if (AB) {
  row('page, channel (no worker): 100 files', floor.base.page, floor.page);
  row(`page, channel (no worker): ${FILES} files`, result.base.page, floor.page);
  for (const [name, r] of [['100 files', floor], [`${FILES} files`, result]]) {
    log(`worker / channel in the page, ${name}, same run: p50 ${(pct(r.page, 50) / pct(r.base.page, 50)).toFixed(2)}x, p99 ${(pct(r.page, 99) / pct(r.base.page, 99)).toFixed(2)}x`);
  }
}
log(`the completion's way (orbitInspect.panels().completionPath), per tab: 100 files ${floor.completionPaths.join(' / ')}, ${FILES} files ${result.completionPaths.join(' / ')}`);
row('page painted: 100 files (floor)', floor.painted, floor.painted);
row(`page painted: ${FILES} files`, result.painted, floor.painted);
row('playwright: 100 files (floor)', floor.wall, floor.wall);
row(`playwright: ${FILES} files`, result.wall, floor.wall);
log(`server p50 by query length (1, 2, ...): ${result.byLength.slice(1).map((ms) => ms.toFixed(1)).join(' ')} ms`);
// Where the page's slowest keystrokes spent their time (ms): key to the
// request sent, queued before sending, the server's answer (request to
// first byte), the body, the answer to the DOM, long tasks meanwhile.
const f1 = (x) => (x === undefined ? '   -' : x.toFixed(1).padStart(5));
if (BEFORE) {
  row('page, before (BEFORE\'s build): 100 files', floor.before.page, floor.page);
  row(`page, before: ${FILES} files`, result.before.page, floor.page);
  for (const [name, r] of [['100 files', floor], [`${FILES} files`, result]]) {
    log(`this build / before in the page, ${name}, same run: p50 ${(pct(r.page, 50) / pct(r.before.page, 50)).toFixed(2)}x, p99 ${(pct(r.page, 99) / pct(r.before.page, 99)).toFixed(2)}x`);
  }
}
const tabsOf = (name, r) => [[r.base || r.before ? `${name}, worker` : name, r], ...(r.base ? [[`${name}, channel`, r.base]] : []), ...(r.before ? [[`${name}, before`, r.before]] : [])];
for (const [name, r] of [...tabsOf('100 files', floor), ...tabsOf(`${FILES} files`, result)]) {
  const before = r.splits.filter((s) => s.frameToDom !== undefined && s.frameToDom < 0).length;
  log(`${name}: keystrokes whose list changed before the key's first frame: ${before}/${r.splits.length}`);
  log(`slowest keystrokes, ${name}: query, page = to-sent + wait + server + body + to-DOM (HTTP only) (long tasks); key to first frame, that frame to DOM`);
  for (const s of [...r.splits].sort((a, b) => b.dom - a.dom).slice(0, 6)) {
    log(`  ${JSON.stringify(s.query).padEnd(14)} ${f1(s.dom)} = ${f1(s.toSent)} + ${f1(s.wait)} + ${f1(s.server)} + ${f1(s.body)} + ${f1(s.toDom)}  (${f1(s.long)}); ${f1(s.toFrame)}, ${f1(s.frameToDom)}`);
  }
  const part = (k) => r.splits.map((s) => s[k]).filter((x) => x !== undefined);
  log(`  p50/p99: key to its first frame ${f1(pct(part('toFrame'), 50))}/${f1(pct(part('toFrame'), 99))}  that frame to the list changed ${f1(pct(part('frameToDom'), 50))}/${f1(pct(part('frameToDom'), 99))}  keystrokes whose list changed before that frame: ${r.splits.filter((x) => x.frameToDom !== undefined && x.frameToDom < 0).length}`);
  log(`  p50/p99: to-sent ${f1(pct(part('toSent'), 50))}/${f1(pct(part('toSent'), 99))}  server ${f1(pct(part('server'), 50))}/${f1(pct(part('server'), 99))}  to-DOM ${f1(pct(part('toDom'), 50))}/${f1(pct(part('toDom'), 99))}  keystrokes with long tasks ${r.splits.filter((s) => s.long > 0).length}`);
}
const stageTable = (title, r) => {
  // Where a worker keystroke's time goes, stage by stage.
  const rows = stagesOf(r);
  log(`\n${title}: the worker's round trip by stage, ${FILES} files (${rows.length} of ${r.splits.length} keystrokes matched to the server's notes), ms:`);
  log(`  ${'stage'.padEnd(26)}   p50    p99   mean of the 5 slowest keystrokes`);
  const slow = [...rows].sort((a, b) => b.dom - a.dom).slice(0, 5);
  STAGES.forEach(([name], k) => {
    const xs = rows.map((x) => x.parts[k]);
    const mean = slow.reduce((a, x) => a + x.parts[k], 0) / Math.max(1, slow.length);
    log(`  ${name.padEnd(26)} ${f1(pct(xs, 50))}  ${f1(pct(xs, 99))}  ${f1(mean)}`);
  });
  log(`  the 5 slowest: query, page (key to its first frame): ${STAGES.map(([n]) => n).join(', ')}`);
  for (const x of slow) log(`  ${JSON.stringify(x.query).padEnd(14)} ${f1(x.dom)} (${f1(x.toFrame)}): ${x.parts.map((v) => v.toFixed(1)).join(' ')}`);
  return Object.fromEntries(STAGES.map(([name], k) => [name, { p50: pct(rows.map((x) => x.parts[k]), 50), p99: pct(rows.map((x) => x.parts[k]), 99) }]));
};
result.stages = stageTable('this build', result);
if (BEFORE) result.before.stages = stageTable('before', result.before);
if (result.trace) for (const line of result.trace) log(line);
log(`goal: p99 under 16 ms: server ${pct(result.server, 99) < 16 ? 'met' : 'MISSED'}, page ${pct(result.page, 99) < 16 ? 'met' : 'MISSED'}`);
process.stdout.write(`${JSON.stringify({
  files: FILES,
  keystrokes: result.server.length,
  load,
  serverP50: pct(result.server, 50), serverP99: pct(result.server, 99), serverFloorP99: pct(floor.server, 99),
  pageP50: pct(result.page, 50), pageP99: pct(result.page, 99), pageFloorP99: pct(floor.page, 99),
  ...(AB ? { channelPageP50: pct(result.base.page, 50), channelPageP99: pct(result.base.page, 99), channelPageFloorP99: pct(floor.base.page, 99) } : {}),
  completionPaths: result.completionPaths,
  beforeFrame: result.splits.filter((s) => s.frameToDom < 0).length,
  ...(AB ? { channelBeforeFrame: result.base.splits.filter((s) => s.frameToDom < 0).length } : {}),
  paintedP99: pct(result.painted, 99), paintedFloorP99: pct(floor.painted, 99),
  playwrightP99: pct(result.wall, 99), playwrightFloorP99: pct(floor.wall, 99),
  serverByLength: result.byLength.slice(1),
  socketP50: pct(result.socket, 50), socketP99: pct(result.socket, 99), socketFloorP50: pct(floor.socket, 50), socketFloorP99: pct(floor.socket, 99), serverFloorP50: pct(floor.server, 50),
  serverRatio: pct(result.server, 99) / pct(floor.server, 99), pageRatio: pct(result.page, 99) / pct(floor.page, 99),
  stages: result.stages,
  ...(BEFORE ? { beforePageP50: pct(result.before.page, 50), beforePageP99: pct(result.before.page, 99), beforePageFloorP99: pct(floor.before.page, 99), beforeStages: result.before.stages } : {}),
})}\n`);
