#!/usr/bin/env node
// From a `claude` stdout line to the DOM change it causes (issue 15), p50
// and p99, against the page's own floor measured in the same run, and the
// live time split along its path.
//
// Run by `bench/page/latency` (which builds, then runs the Rust harness
// `page_latency` in crates/orbit/tests/it: a real `orbit open` whose
// `claude.path` is bench/page/claude-shim.mjs in front of the pinned CLI,
// talking to the fake Messages API). The harness scripts TURNS turns; turn
// i answers with three changes the page shows, each carrying a marker that
// appears nowhere else: a text `mk<i>a` (with a tool call), the tool entry
// (a Read of the file `mk<i>t.md`) and a closing text `mk<i>b`.
//
// live:  the page types each prompt; a MutationObserver (installed before
//        the page's scripts) notes when each marker first enters the DOM;
//        the shim's log gives when the stdout line that first carries the
//        marker was passed on. latency = DOM time - line time (both epoch
//        milliseconds with sub-millisecond resolution on the same machine).
// floor: the host frames the live page received over its socket (captured
//        in the page) are replayed into a second page of the same build
//        from memory: no Orbit, no socket (the page's webview transport, fed
//        by `postMessage` from a script in the page itself), paced as Orbit
//        handed them to the socket (its trace; else as they came), so a
//        burst stays a burst. Interleaved: each turn's frames are replayed
//        right after the live turn, so both see the same machine load. The
//        floor's page has a window of its own (both pages in front all
//        along; ORBIT_LATENCY_TABS=1: a second tab, as before 2026-12-05).
//        latency = DOM time - the time the frame that first carries the
//        marker was posted.
// split: with ORBIT_LATENCY_TRACE (the file `orbit open` appends its trace
//        to: orbit_common::latency_note), each live change's time is cut at
//        Orbit's stdout reader (`read`), the workspace taking the agent
//        event (`event`), the projector's frame in the page log (`push`),
//        the frame written to the socket (`sent`) and the frame's `message`
//        event in the page (a listener the bench adds before the page's own).
//
// Activity ticks carry no marker and so are left aside. Prints a table to
// stderr and one JSON line to stdout (`ok`: every change was seen in both).
// The load average (1, 5, 15 min) at the start and the end is printed too.
//
// For a closer look (each off by default): ORBIT_LATENCY_RAW=<file> (every
// timestamp: the shim's lines, Orbit's trace, the frames' arrivals, the
// page's tasks), ORBIT_LATENCY_PROFILE=<file> (a V8 CPU profile of the live
// page), ORBIT_LATENCY_CHROME_TRACE=<file> (Chromium's trace, every
// process; slows everything), ORBIT_LATENCY_REDUCED_MOTION=1,
// ORBIT_LATENCY_SUBMIT=script (Enter dispatched in the page, not through
// Playwright's keyboard).
//
// A/B of the page alone, without a release build of Orbit: ORBIT_LATENCY_DIST=<dir> (a copy of a
// `web/dist`) serves both pages' build from that directory (the live page's HTML still from Orbit,
// its snapshot block kept: bench/page/serve-build.mjs; Chromium then runs with
// `--disable-features=LocalNetworkAccessChecks`, both pages), and ORBIT_LATENCY_QUERY=<query>
// opens both pages with that query (`frames=all`: the page's frame budget on a software GPU off,
// scene/framebudget.ts). Runs with and without, back to back, are the A/B.
//
//   ORBIT_LOGIN_URL=... ORBIT_SHIM_LOG=... [ORBIT_LATENCY_TRACE=...] ORBIT_LATENCY_TURNS=N node bench/page/latency.mjs
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { cpuByRole, cpuDelta, processRoles } from './proc.mjs';
import { DIST_ARGS, serveBuild } from './serve-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, '..', '..', 'web');
// The page's build both pages load: Orbit's own (web/dist, which the binary embeds) or ORBIT_LATENCY_DIST.
const DIST = process.env.ORBIT_LATENCY_DIST ? resolve(process.env.ORBIT_LATENCY_DIST) : null;
const dist = DIST ?? join(web, 'dist');
const QUERY = process.env.ORBIT_LATENCY_QUERY ?? '';
const require = createRequire(join(web, 'package.json'));
const { chromium } = require('playwright-core');

const login = process.env.ORBIT_LOGIN_URL;
const shimLog = process.env.ORBIT_SHIM_LOG;
const traceLog = process.env.ORBIT_LATENCY_TRACE;
const TURNS = Number(process.env.ORBIT_LATENCY_TURNS ?? 100);
const TIMEOUT = Number(process.env.ORBIT_TIMEOUT_MS ?? 60000);
if (!login || !shimLog) {
  process.stderr.write('latency.mjs: set ORBIT_LOGIN_URL and ORBIT_SHIM_LOG (bench/page/latency does)\n');
  process.exit(2);
}
const MARKER = /mk\d+[atb]/g;
const seqOf = (text) => /^\{"seq":(\d+)/.exec(text)?.[1] ?? null;
const KINDS = [['a', 'text with a tool call'], ['t', 'the tool entry'], ['b', 'closing text']];
const loadAtStart = loadavg();

// CPU time of the processes on the path (/proc): bench/page/proc.mjs.

/** Percentile by nearest rank. */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

// Before any script of the page: note the first time each marker enters the
// DOM, and when each numbered frame's `message` event fires (the live
// page's socket, or the replay's window messages), before the page's own
// listeners.
function recorder() {
  const seen = Object.create(null);
  const arrived = Object.create(null);
  // The socket's frames as they came (the floor replays them): { t, text }.
  const frames = [];
  // The page's own tasks of 2 ms or more (animation frames, timers, socket messages): { kind, start, end }.
  const busy = [];
  window.__latencySeen = seen;
  window.__latencyArrived = arrived;
  window.__latencyFrames = frames;
  window.__latencyBusy = busy;
  const now = () => performance.timeOrigin + performance.now();
  const note = (t, text) => {
    if (typeof text !== 'string') return;
    const m = /^\{"seq":(\d+)/.exec(text);
    if (m && !(m[1] in arrived)) arrived[m[1]] = t;
  };
  const timed = (kind, fn) => function timedTask(...args) {
    const start = now();
    try {
      return fn.apply(this, args);
    } finally {
      const end = now();
      if (end - start >= 2) busy.push({ kind, start, end });
    }
  };
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (fn) => raf(timed('animation frame', fn));
  const timeout = window.setTimeout.bind(window);
  window.setTimeout = (fn, ...rest) => (typeof fn === 'function' ? timeout(timed('timer', fn), ...rest) : timeout(fn, ...rest));
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      super.addEventListener('message', (event) => {
        const t = now();
        note(t, event.data);
        if (typeof event.data === 'string') frames.push({ t, text: event.data });
      });
    }
    addEventListener(type, listener, options) {
      super.addEventListener(type, type === 'message' && typeof listener === 'function' ? timed('socket message', listener) : listener, options);
    }
  };
  window.addEventListener('message', (event) => {
    const t = now();
    const frames = event.data?.frames;
    if (Array.isArray(frames)) for (const frame of frames) note(t, frame);
  }, true);
  const pattern = /mk\d+[atb]/g;
  new MutationObserver((records) => {
    const t = now();
    for (const record of records) {
      const nodes = record.type === 'characterData' ? [record.target] : Array.from(record.addedNodes);
      for (const node of nodes) {
        const text = node.textContent;
        if (!text || !text.includes('mk')) continue;
        for (const m of text.matchAll(pattern)) if (!(m[0] in seen)) seen[m[0]] = t;
      }
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
}

// The host side of the webview transport, in the replay page: frames from
// memory. The opening frames when the page says it is ready; then each
// batch (`window.__replay`) at its own pace, noting when the frame that
// first carries each marker was posted.
function replayer({ opening }) {
  window.__replayPosted = Object.create(null);
  const post = (message) => { window.postMessage(message, '*'); };
  window.acquireVsCodeApi = () => ({
    getState: () => null,
    setState: () => {},
    postMessage: (message) => {
      if (message?.orbit !== 'ready') return;
      post({ orbit: 'state', state: 'open' });
      post({ orbit: 'frames', frames: opening });
    },
  });
  window.__replay = (batch) => new Promise((resolve) => {
    const start = performance.now();
    let i = 0;
    const next = () => {
      while (i < batch.length && performance.now() - start >= batch[i].dt) {
        const { text } = batch[i];
        i += 1;
        const t = performance.timeOrigin + performance.now();
        for (const m of text.matchAll(/mk\d+[atb]/g)) if (!(m[0] in window.__replayPosted)) window.__replayPosted[m[0]] = t;
        post({ orbit: 'frames', frames: [text] });
      }
      if (i < batch.length) setTimeout(next, Math.max(0, batch[i].dt - (performance.now() - start)));
      else resolve();
    };
    next();
  });
}

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  // ORBIT_LATENCY_EXTRA_ARGS (an experiment, never the goal's figure: the floor and the live page share the flags above):
  // more Chromium flags, space-separated, e.g. `--disable-gpu-compositing`.
  args: ['--no-sandbox', '--headless=new', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-dev-shm-usage', '--no-first-run', ...(DIST ? DIST_ARGS : []), ...(process.env.ORBIT_LATENCY_EXTRA_ARGS ?? '').split(' ').filter(Boolean)],
});
// ORBIT_LATENCY_REDUCED_MOTION=1: both pages with `prefers-reduced-motion: reduce` (no CSS animations, no effects' flow).
const contextOptions = { viewport: { width: 1280, height: 800 }, ...(process.env.ORBIT_LATENCY_REDUCED_MOTION ? { reducedMotion: 'reduce' } : {}) };
const context = await browser.newContext(contextOptions);
// The floor's page is in a window of its own (a second context), so that both pages are in front
// all along, as a user's one page is. ORBIT_LATENCY_TABS=1: as until 2026-12-05, a second tab of
// the live page's window, each brought to the front while it works. A tab brought to the front
// costs Chromium's GPU process ~130 ms of CPU (the whole page presented again on a software GPU),
// just before the live turn's prompt: a load on the turn's start that no user's page has.
const TABS = Boolean(process.env.ORBIT_LATENCY_TABS);
const TYPE_PAUSE_MS = Number(process.env.ORBIT_LATENCY_TYPE_PAUSE_MS ?? 100);

// ------------------------------------------------------------------ live page
const page = await context.newPage();
page.setDefaultTimeout(TIMEOUT);
await page.addInitScript(recorder);
// The socket's frames, as the page got them (the recorder keeps them; fetched between turns).
const frames = [];
const fetchFrames = async () => {
  frames.push(...await page.evaluate((from) => window.__latencyFrames.slice(from), frames.length));
};
// The page's HTML carries the opening snapshot (docs/page-protocol.md, "The snapshot in the page").
let html = '';
page.on('response', (response) => {
  if (response.request().resourceType() === 'document' && response.status() === 200) {
    response.text().then((text) => { html = text; }, () => {});
  }
});
await page.goto(login);
if (DIST || QUERY) {
  // Logged in (the browser follows the login's redirect itself, where no route sees it): the page again, from DIST, with QUERY.
  if (DIST) await serveBuild(page, DIST);
  const url = new URL(page.url());
  if (QUERY) url.search = `?${QUERY}`;
  await page.goto(url.href);
}
await page.waitForFunction(() => window.orbitInspect?.state().ready === true && window.orbitInspect.state().connection === 'open');

// ------------------------------------------------------------------ floor page
await fetchFrames();
// Its opening: the HTML's data block and the socket's frames so far (its `hello`, or a whole snapshot).
const block = /<script type="application\/json" id="orbit-snapshot">([\s\S]*?)<\/script>/.exec(html)?.[1];
const preloaded = block ? JSON.parse(block).map((frame) => JSON.stringify(frame)) : [];
let openingEnd = frames.findIndex((f) => f.text.includes('"snapshotEnd"'));
if (openingEnd < 0 && preloaded.length > 0) openingEnd = frames.findIndex((f) => f.text.includes('"hello"'));
if (openingEnd < 0) throw new Error('the live page got no snapshot, neither in its HTML nor over its socket');
const opening = [...preloaded, ...frames.slice(0, openingEnd + 1).map((f) => f.text)];
let replayed = openingEnd + 1;

const replay = await (TABS ? context : await browser.newContext(contextOptions)).newPage();
replay.setDefaultTimeout(TIMEOUT);
const origin = 'http://orbit-replay.test';
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'";
const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8' };
await replay.route(`${origin}/**`, (route) => {
  const path = new URL(route.request().url()).pathname;
  const file = path.startsWith('/assets/') ? join(dist, normalize(path)) : path === '/w/replay/' ? join(dist, 'index.html') : null;
  if (!file || !file.startsWith(dist) || !existsSync(file)) return route.fulfill({ status: 404, body: 'not here' });
  return route.fulfill({ status: 200, headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-security-policy': CSP }, body: readFileSync(file) });
});
await replay.addInitScript(recorder);
await replay.addInitScript(replayer, { opening });
await replay.goto(`${origin}/w/replay/${QUERY ? `?${QUERY}` : ''}`);
await replay.waitForFunction(() => window.orbitInspect?.state().ready === true);

// When Orbit handed each numbered frame to the socket (its trace, read as it grows).
const sentAt = {};
let traceRead = 0;
function readSent() {
  if (!traceLog || !existsSync(traceLog)) return;
  const bytes = readFileSync(traceLog);
  const end = bytes.lastIndexOf(10) + 1;
  if (end <= traceRead) return;
  for (const line of bytes.subarray(traceRead, end).toString('utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (r.stage === 'sent' && r.seq !== null && !(r.seq in sentAt)) sentAt[r.seq] = r.t;
  }
  traceRead = end;
}

/**
 * Replays the live frames not replayed yet, then waits for `markers` in the floor's DOM. Paced as
 * Orbit sent them (its trace), so that a burst the live page got at once, or queued behind its own
 * work, comes as a burst here too; a frame with no `sent` note (an `ack`), or with no trace, keeps
 * its gap to the one before as the live page got them.
 */
async function replayUpTo(markers) {
  if (TABS && !process.env.ORBIT_LATENCY_NO_FRONT) await replay.bringToFront();
  readSent();
  const batch = frames.slice(replayed);
  replayed += batch.length;
  const paced = [];
  for (const [i, f] of batch.entries()) {
    const sent = sentAt[seqOf(f.text)];
    const prev = paced[i - 1];
    paced.push(sent ?? (prev === undefined ? f.t : prev + (f.t - batch[i - 1].t)));
  }
  const base = paced[0] ?? 0;
  await replay.evaluate((b) => window.__replay(b), batch.map((f, i) => ({ dt: Math.max(0, paced[i] - base), text: f.text })));
  await replay.waitForFunction((ms) => ms.every((m) => m in window.__latencySeen), markers, { timeout: 10000, polling: 20 }).catch(() => {
    process.stderr.write(`floor: ${markers.join(', ')} not all seen\n`);
  });
}

// ------------------------------------------------------------------ the turns
const state = () => page.evaluate(() => {
  const st = window.orbitInspect.state();
  const key = st.shown;
  return { key, phase: key ? st.sessions?.[key]?.phase ?? null : null, seen: Object.keys(window.__latencySeen).length };
});
const box = page.getByRole('textbox', { name: 'Ask Claude' });
// ORBIT_LATENCY_PROFILE=<file>: a CPU profile of the live page over the turns (Chromium's .cpuprofile).
const profiler = process.env.ORBIT_LATENCY_PROFILE ? await context.newCDPSession(page) : null;
if (profiler) {
  await profiler.send('Profiler.enable');
  await profiler.send('Profiler.setSamplingInterval', { interval: 200 });
  await profiler.send('Profiler.start');
}
// ORBIT_LATENCY_CHROME_TRACE=<file>: Chromium's own trace over the turns (every process), with the
// offset from its clock (CLOCK_MONOTONIC, µs) to epoch milliseconds (`epochOffsetMs`).
const chromeTrace = process.env.ORBIT_LATENCY_CHROME_TRACE;
if (chromeTrace) {
  await browser.startTracing(page, { categories: ['toplevel', 'net', 'mojom', 'ipc', 'renderer.scheduler', 'disabled-by-default-network', 'devtools.timeline', 'gpu', 'viz', 'cc', 'blink'] });
}
const started = Date.now();
// Per live turn (from typing its prompt to its end, the floor's replay not included): CPU ms by role.
const turnCpu = [];
let roles = processRoles();
const cpuAtStart = cpuByRole(roles);
for (let i = 0; i < TURNS; i += 1) {
  // With the floor in a window of its own, its last frames (the turn's glows fading, the star going
  // home) would be drawn during this turn's start by the same GPU process: both pages' maps settle
  // first (at most 1.5 s), as a page has settled when its user types the next prompt.
  if (!TABS) {
    await Promise.all([page, replay].map((p) => p.waitForFunction(() => window.orbitInspect?.scene?.().loop === 'asleep', null, { timeout: 1500, polling: 50 }).catch(() => {})));
  }
  // The CLI is a new process in the first turn, and Chromium's set may change: looked up again.
  if (i < 2) roles = processRoles();
  const cpuBefore = cpuByRole(roles);
  // ORBIT_LATENCY_TABS=1: the page at work is the tab in front (Chromium lowers the CPU priority of
  // a renderer whose tab is in the background: nice 5 against 0 on Linux); else each has its window.
  if (TABS && !process.env.ORBIT_LATENCY_NO_FRONT) await page.bringToFront();
  await box.click();
  await box.fill(`Turn ${i + 1}: read the file and say so`);
  // The prompt on screen before its Enter, as a person's typing is (ORBIT_LATENCY_TYPE_PAUSE_MS,
  // 100 by default; 0 as until 2026-12-05): the click's and the text's frames (~25 ms of the GPU
  // process's CPU each on a software GPU) are then not drawn as the turn starts.
  if (TYPE_PAUSE_MS > 0) await page.waitForTimeout(TYPE_PAUSE_MS);
  // ORBIT_LATENCY_SUBMIT=script: the Enter dispatched by a script in the page instead of Playwright's
  // keyboard (CDP input events through the browser process).
  if (process.env.ORBIT_LATENCY_SUBMIT === 'script') {
    await box.evaluate((el) => { el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true })); });
  } else {
    await box.press('Enter');
  }
  const markers = ['a', 't', 'b'].map((k) => `mk${i}${k}`);
  // The turn's three markers in the DOM.
  await page.waitForFunction((ms) => ms.every((m) => m in window.__latencySeen), markers, { timeout: TIMEOUT, polling: 50 });
  // And the turn over (the next prompt would otherwise queue).
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const s = await state();
    if (s.phase === 'idle') break;
    if (Date.now() > deadline) throw new Error(`turn ${i + 1} did not end: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  turnCpu.push(cpuDelta(cpuBefore, cpuByRole(roles)));
  // The same frames into the floor's page, now (the same load as the live turn's).
  await fetchFrames();
  await replayUpTo(markers);
  if ((i + 1) % 20 === 0) process.stderr.write(`latency: ${i + 1} of ${TURNS} turns (${Math.round((Date.now() - started) / 1000)} s)\n`);
}
if (chromeTrace) {
  const buffer = await browser.stopTracing();
  const epochOffsetMs = performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
  writeFileSync(chromeTrace, JSON.stringify({ epochOffsetMs, trace: JSON.parse(buffer.toString('utf8')) }));
}
if (profiler) {
  const { profile } = await profiler.send('Profiler.stop');
  writeFileSync(process.env.ORBIT_LATENCY_PROFILE, JSON.stringify(profile));
}
const liveSeen = await page.evaluate(() => ({ ...window.__latencySeen }));
const liveArrived = await page.evaluate(() => ({ ...window.__latencyArrived }));
const liveBusy = await page.evaluate(() => window.__latencyBusy.slice());
const floorGot = await replay.evaluate(() => ({ posted: { ...window.__replayPosted }, seen: { ...window.__latencySeen }, arrived: { ...window.__latencyArrived } }));
await browser.close();
const loadAtEnd = loadavg();
const cpuWhole = cpuDelta(cpuAtStart, cpuByRole(roles));

// ------------------------------------------------------------------ join
const jsonLines = (path) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
/** The first record (in file order) whose text carries each marker: `{ marker: record }`. */
const firstCarrying = (records, text = (r) => r.text ?? r.line) => {
  const out = {};
  for (const r of records) {
    const s = text(r);
    if (!s?.includes('mk')) continue;
    for (const m of s.matchAll(MARKER)) if (!(m[0] in out)) out[m[0]] = r;
  }
  return out;
};

// The stdout lines: the first that carries each marker.
const lineOf = firstCarrying(jsonLines(shimLog), (r) => r.line);
const trace = traceLog && existsSync(traceLog) ? jsonLines(traceLog) : [];
const readOf = firstCarrying(trace.filter((r) => r.stage === 'read'));
const eventOf = firstCarrying(trace.filter((r) => r.stage === 'event'));
const pushOf = firstCarrying(trace.filter((r) => r.stage === 'push'));
const sentBySeq = {};
for (const r of trace) if (r.stage === 'sent' && r.seq !== null && !(r.seq in sentBySeq)) sentBySeq[r.seq] = r.t;
// The live frame that first carries each marker, by its seq (from the frames the page got).
const frameSeqOf = firstCarrying(frames.map((f) => ({ text: f.text })));

const live = {};
const floor = {};
const split = {};
const busyOf = {};
// Each live change's times along its path (epoch ms), for ORBIT_LATENCY_RAW.
const atOf = {};
for (const [marker, dom] of Object.entries(liveSeen)) {
  const line = lineOf[marker];
  if (!line) continue;
  live[marker] = dom - line.t;
  const seq = pushOf[marker] ? String(pushOf[marker].seq) : seqOf(frameSeqOf[marker]?.text ?? '');
  const at = {
    shim: line.t,
    read: readOf[marker]?.t,
    event: eventOf[marker]?.t,
    push: pushOf[marker]?.t,
    sent: seq !== null ? sentBySeq[seq] : undefined,
    arrived: seq !== null ? liveArrived[seq] : undefined,
    dom,
  };
  const gap = (a, b) => (at[a] !== undefined && at[b] !== undefined ? at[b] - at[a] : undefined);
  // The page's own tasks that ran while the frame was on its way to the page (from its write).
  const overlap = {};
  if (at.sent !== undefined && at.arrived !== undefined) {
    for (const task of liveBusy) {
      const ms = Math.min(task.end, at.arrived) - Math.max(task.start, at.sent);
      if (ms > 0) overlap[task.kind] = (overlap[task.kind] ?? 0) + ms;
    }
  }
  busyOf[marker] = overlap;
  atOf[marker] = at;
  split[marker] = {
    cliToRead: gap('shim', 'read'),
    readToEvent: gap('read', 'event'),
    eventToPush: gap('event', 'push'),
    pushToSent: gap('push', 'sent'),
    sentToPage: gap('sent', 'arrived'),
    pageToDom: gap('arrived', 'dom'),
  };
}
const floorSplit = {};
for (const [marker, dom] of Object.entries(floorGot.seen)) {
  const posted = floorGot.posted[marker];
  if (posted === undefined) continue;
  floor[marker] = dom - posted;
  const seq = pushOf[marker] ? String(pushOf[marker].seq) : seqOf(frameSeqOf[marker]?.text ?? '');
  const arrived = seq !== null ? floorGot.arrived[seq] : undefined;
  floorSplit[marker] = { postToPage: arrived !== undefined ? arrived - posted : undefined, pageToDom: arrived !== undefined ? dom - arrived : undefined };
}

// ------------------------------------------------------------------ bursts
// Where each change's frame stands in its burst: Orbit's writes (`sent`) less than BURST_GAP_MS
// apart are one burst. `before`: the burst's frames written before it (their types, from the
// page log's `push`); `messagesBefore`: the burst's socket messages the page got before the one
// carrying it (each one a task of the page's main thread).
const BURST_GAP_MS = 3;
const typeOfSeq = {};
for (const r of trace) if (r.stage === 'push' && r.seq !== null) typeOfSeq[r.seq] = /"body":\{"type":"(\w+)"/.exec(r.text ?? '')?.[1] ?? '?';
const sentOrder = Object.entries(sentBySeq).map(([seq, t]) => ({ seq, t })).sort((a, b) => a.t - b.t);
const burstOf = {};
{
  let burst = [];
  for (const [i, w] of sentOrder.entries()) {
    if (i > 0 && w.t - sentOrder[i - 1].t >= BURST_GAP_MS) burst = [];
    burst.push(w.seq);
    burstOf[w.seq] = burst;
  }
}
// The socket message (its index among the live page's messages) that carried each seq.
const messageOfSeq = {};
for (const [i, f] of frames.entries()) {
  const seq = seqOf(f.text);
  if (seq !== null && !(seq in messageOfSeq)) messageOfSeq[seq] = i;
}
const burstPlace = {};
for (const marker of Object.keys(atOf)) {
  const seq = pushOf[marker] ? String(pushOf[marker].seq) : null;
  const burst = seq !== null ? burstOf[seq] : undefined;
  if (!burst) continue;
  const before = burst.slice(0, burst.indexOf(seq));
  const messages = new Set(before.map((q) => messageOfSeq[q]).filter((i) => i !== undefined && i !== messageOfSeq[seq]));
  burstPlace[marker] = { before: before.length, types: before.map((q) => typeOfSeq[q] ?? '?'), messagesBefore: messages.size, burst: burst.length };
}

// ------------------------------------------------------------------ report
const markers = Object.keys(live).filter((m) => m in floor);
const expected = TURNS * 3;
const summary = (xs) => {
  const v = xs.filter((x) => x !== undefined);
  return { n: v.length, p50: pct(v, 50), p99: pct(v, 99), max: v.length ? Math.max(...v) : null };
};
const liveAll = summary(markers.map((m) => live[m]));
const floorAll = summary(markers.map((m) => floor[m]));
const paired = summary(markers.map((m) => live[m] - floor[m]));
const SPLIT = [
  ['cliToRead', 'CLI line -> Orbit read it'],
  ['readToEvent', 'Orbit: read -> workspace (agent, service)'],
  ['eventToPush', 'Orbit: workspace -> page log (projector)'],
  ['pushToSent', 'Orbit: page log -> socket written'],
  ['sentToPage', 'socket -> page (message event)'],
  ['pageToDom', 'page: message event -> DOM'],
];
const splitSummary = Object.fromEntries(SPLIT.map(([k]) => [k, summary(markers.map((m) => split[m][k]))]));
const BUSY_KINDS = ['animation frame', 'timer', 'socket message'];
const busySummary = Object.fromEntries(BUSY_KINDS.map((k) => [k, summary(markers.map((m) => busyOf[m]?.[k] ?? 0))]));
const floorSplitSummary = {
  postToPage: summary(markers.map((m) => floorSplit[m]?.postToPage)),
  pageToDom: summary(markers.map((m) => floorSplit[m]?.pageToDom)),
};
const byKind = {};
for (const [kind] of KINDS) {
  const ms = markers.filter((m) => m.endsWith(kind));
  byKind[kind] = {
    live: summary(ms.map((m) => live[m])),
    floor: summary(ms.map((m) => floor[m])),
    split: Object.fromEntries(SPLIT.map(([k]) => [k, summary(ms.map((m) => split[m][k]))])),
    lineType: lineOf[ms[0]] ? /"type":"(\w+)"/.exec(lineOf[ms[0]].line)?.[1] ?? null : null,
  };
}
// Changes by their place in the burst: first of it, or after others (how many, which types).
const placed = markers.filter((m) => burstPlace[m]);
const notFirst = placed.filter((m) => burstPlace[m].before > 0);
const typesBefore = {};
for (const m of notFirst) for (const t of burstPlace[m].types) typesBefore[t] = (typesBefore[t] ?? 0) + 1;
const burstSummary = {
  placed: placed.length,
  notFirst: notFirst.length,
  framesBefore: summary(notFirst.map((m) => burstPlace[m].before)),
  messagesBefore: summary(notFirst.map((m) => burstPlace[m].messagesBefore)),
  typesBefore,
  sentToPageFirst: summary(placed.filter((m) => burstPlace[m].before === 0).map((m) => split[m].sentToPage)),
  sentToPageNotFirst: summary(notFirst.map((m) => split[m].sentToPage)),
  liveFirst: summary(placed.filter((m) => burstPlace[m].before === 0).map((m) => live[m])),
  liveNotFirst: summary(notFirst.map((m) => live[m])),
  byKind: Object.fromEntries(KINDS.map(([k]) => [k, { n: placed.filter((m) => m.endsWith(k)).length, notFirst: notFirst.filter((m) => m.endsWith(k)).length }])),
  // The live page's socket messages.
  messages: frames.length,
};
const round = (xs) => xs.map((x) => Math.round(x * 100) / 100);
const result = {
  ok: markers.length === expected,
  turns: TURNS,
  markers: markers.length,
  expected,
  load: { start: round(loadAtStart), end: round(loadAtEnd) },
  page: { dist: DIST, query: QUERY },
  traced: trace.length > 0,
  live: liveAll,
  floor: floorAll,
  pairedOverFloor: paired,
  overFloor: { p50: liveAll.p50 - floorAll.p50, p99: liveAll.p99 - floorAll.p99 },
  split: splitSummary,
  pageBusyWhileInFlight: busySummary,
  floorSplit: floorSplitSummary,
  byKind,
  bursts: burstSummary,
  // CPU ms per live turn by role (p50, p99 over the turns; /proc's 10 ms ticks), and over the whole run (floor included).
  cpuPerTurn: Object.fromEntries([...new Set(turnCpu.flatMap((t) => Object.keys(t)))].sort().map((k) => [k, summary(turnCpu.map((t) => t[k] ?? 0))])),
  cpuWholeRunMs: cpuWhole,
  samples: Object.fromEntries(markers.map((m) => [m, { live: live[m], floor: floor[m], split: split[m], busy: busyOf[m], floorSplit: floorSplit[m], burst: burstPlace[m] }])),
};
const f = (x) => (x === null || x === undefined ? '-' : x.toFixed(1));
const row = (name, s) => `${name.padEnd(44)} ${f(s.p50).padStart(8)} ${f(s.p99).padStart(8)} ${f(s.max).padStart(8)} ${String(s.n).padStart(5)}`;
const out = [];
out.push(`load average (1, 5, 15 min): ${round(loadAtStart).join(' ')} at the start, ${round(loadAtEnd).join(' ')} at the end; ${TURNS} turns; page ${DIST ?? "Orbit's"}${QUERY ? ` ?${QUERY}` : ''}`);
out.push(`${'claude line -> DOM (ms)'.padEnd(44)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'n'.padStart(5)}`);
out.push(row('live (shim line -> DOM)', liveAll));
out.push(row('floor (replayed from memory, interleaved)', floorAll));
out.push(row('live - floor, paired per change', paired));
if (trace.length > 0) {
  out.push('live, split:');
  for (const [k, name] of SPLIT) out.push(row(`  ${name}`, splitSummary[k]));
}
if (trace.length > 0) {
  out.push("  of which the page's own tasks ran (socket -> page):");
  for (const k of BUSY_KINDS) out.push(row(`    ${k}s`, busySummary[k]));
}
out.push('floor, split:');
out.push(row('  posted -> page (message event)', floorSplitSummary.postToPage));
out.push(row('  page: message event -> DOM', floorSplitSummary.pageToDom));
for (const [kind, name] of KINDS) {
  out.push(row(`  live: ${name}`, byKind[kind].live));
  out.push(row(`  floor: ${name}`, byKind[kind].floor));
}
if (placed.length > 0) {
  const b = burstSummary;
  out.push(`bursts (Orbit's writes < ${BURST_GAP_MS} ms apart): ${b.notFirst} of ${b.placed} changes not the first frame of theirs (text ${b.byKind.a.notFirst}/${b.byKind.a.n}, tool entry ${b.byKind.t.notFirst}/${b.byKind.t.n}, closing ${b.byKind.b.notFirst}/${b.byKind.b.n}); frames before p50 ${f(b.framesBefore.p50)} max ${f(b.framesBefore.max)}, messages before p50 ${f(b.messagesBefore.p50)} max ${f(b.messagesBefore.max)}; before them: ${Object.entries(b.typesBefore).map(([t, n]) => `${t} ${n}`).join(', ')}; ${b.messages} socket messages`);
  out.push(row('  socket -> page, first of its burst', b.sentToPageFirst));
  out.push(row('  socket -> page, after others', b.sentToPageNotFirst));
  out.push(row('  live, first of its burst', b.liveFirst));
  out.push(row('  live, after others', b.liveNotFirst));
}
if (turnCpu.length > 0) {
  out.push('CPU ms per live turn (/proc, 10 ms ticks)        p50      p99      max');
  for (const [k, v] of Object.entries(result.cpuPerTurn)) out.push(`  ${k.padEnd(44)} ${f(v.p50).padStart(8)} ${f(v.p99).padStart(8)} ${f(v.max).padStart(8)}`);
}
out.push(`over the floor: p50 ${f(result.overFloor.p50)} ms, p99 ${f(result.overFloor.p99)} ms (goal: p99 under 20 ms over the floor)`);
process.stderr.write(`${out.join('\n')}\n`);
if (process.env.ORBIT_LATENCY_RAW) {
  // Everything measured, for a closer look at one run: the trace, the frames' arrivals, the page's tasks.
  writeFileSync(process.env.ORBIT_LATENCY_RAW, JSON.stringify({
    shim: jsonLines(shimLog).map(({ t, line }) => ({ t, line: line.slice(0, 200) })),
    trace: trace.map((r) => ({ ...r, text: r.text.slice(0, 200) })),
    frames: frames.map(({ t, text }) => ({ t, seq: seqOf(text), text: text.slice(0, 200) })),
    busy: liveBusy,
    dom: liveSeen,
    // Per live change: the shim's line, Orbit's read, event, push and sent, the page's message event, the DOM (bench/page/latency-sched.py joins them with a scheduler record).
    changes: atOf,
  }));
}
process.stdout.write(`${JSON.stringify(result)}\n`);
if (markers.length < expected) {
  process.stderr.write(`only ${markers.length} of ${expected} markers were seen in both runs\n`);
  process.exit(1);
}
