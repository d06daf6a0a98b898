#!/usr/bin/env node
// From a `claude` stdout line to the DOM change it causes (issue 15), p50
// and p99, against the page's own floor measured in the same run.
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
// floor: the host frames the page received over its socket in the live
//        run (captured with their arrival times) are replayed into a fresh
//        page of the same build from memory: no Orbit, no socket (the
//        page's webview transport, fed by `postMessage` from a script in
//        the page itself), at the same pace. latency = DOM time - the time
//        the frame that first carries the marker was posted.
//
// Activity ticks carry no marker and so are left aside. Prints a table to
// stderr and one JSON line to stdout (`ok`: every change was seen in both).
//
//   ORBIT_LOGIN_URL=... ORBIT_SHIM_LOG=... ORBIT_LATENCY_TURNS=N node bench/page/latency.mjs
import { readFileSync, existsSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, '..', '..', 'web');
const dist = join(web, 'dist');
const require = createRequire(join(web, 'package.json'));
const { chromium } = require('playwright-core');

const login = process.env.ORBIT_LOGIN_URL;
const shimLog = process.env.ORBIT_SHIM_LOG;
const TURNS = Number(process.env.ORBIT_LATENCY_TURNS ?? 20);
const TIMEOUT = Number(process.env.ORBIT_TIMEOUT_MS ?? 60000);
if (!login || !shimLog) {
  process.stderr.write('latency.mjs: set ORBIT_LOGIN_URL and ORBIT_SHIM_LOG (bench/page/latency does)\n');
  process.exit(2);
}
const MARKER = /mk\d+[atb]/g;

/** Percentile by nearest rank. */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

// Before any script of the page: note the first time each marker enters the DOM.
function recorder() {
  const seen = Object.create(null);
  window.__latencySeen = seen;
  const pattern = /mk\d+[atb]/g;
  new MutationObserver((records) => {
    const t = performance.timeOrigin + performance.now();
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

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-dev-shm-usage', '--no-first-run'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });

// ------------------------------------------------------------------ live
const page = await context.newPage();
page.setDefaultTimeout(TIMEOUT);
await page.addInitScript(recorder);
const frames = [];
page.on('websocket', (ws) => {
  ws.on('framereceived', (event) => {
    // Node's clock at arrival: only the gaps between frames are used (the replay's pace).
    frames.push({ at: performance.now(), text: typeof event.payload === 'string' ? event.payload : event.payload.toString('utf8') });
  });
});
// The page's HTML carries the opening snapshot (docs/page-protocol.md, "The snapshot in the page").
let html = '';
page.on('response', (response) => {
  if (response.request().resourceType() === 'document' && response.status() === 200) {
    response.text().then((text) => { html = text; }, () => {});
  }
});
await page.goto(login);
await page.waitForFunction(() => window.orbitInspect?.state().ready === true);
const state = () => page.evaluate(() => {
  const st = window.orbitInspect.state();
  const key = st.shown;
  return { key, phase: key ? st.sessions?.[key]?.phase ?? null : null, seen: Object.keys(window.__latencySeen).length };
});
const box = page.getByRole('textbox', { name: 'Ask Claude' });
const turnStarts = [];
for (let i = 0; i < TURNS; i += 1) {
  turnStarts.push(frames.length);
  await box.click();
  await box.fill(`Turn ${i + 1}: read the file and say so`);
  await box.press('Enter');
  // The turn's three markers in the DOM.
  await page.waitForFunction((n) => ['a', 't', 'b'].every((k) => `mk${n}${k}` in window.__latencySeen), i, { timeout: TIMEOUT, polling: 50 });
  // And the turn over (the next prompt would otherwise queue).
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const s = await state();
    if (s.phase === 'idle') break;
    if (Date.now() > deadline) throw new Error(`turn ${i + 1} did not end: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const liveSeen = await page.evaluate(() => ({ ...window.__latencySeen }));
await page.close();

// The stdout lines: the first that carries each marker.
const lines = readFileSync(shimLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const lineOf = {};
for (const { t, line } of lines) {
  for (const m of line.matchAll(MARKER)) if (!(m[0] in lineOf)) lineOf[m[0]] = { t, type: /"type":"(\w+)"/.exec(line)?.[1] ?? '?' };
}
const live = {};
for (const [marker, t] of Object.entries(liveSeen)) {
  if (lineOf[marker]) live[marker] = t - lineOf[marker].t;
}

// ------------------------------------------------------------------ floor
// The first frames (hello, the snapshot, up to snapshotEnd) at once, then the
// turns' frames at the pace they came; each post time noted for the frames
// that first carry a marker.
// With a snapshot in the HTML, the socket's opening is its `hello` (resumed) and what it missed.
const block = /<script type="application\/json" id="orbit-snapshot">([\s\S]*?)<\/script>/.exec(html)?.[1];
const preloaded = block ? JSON.parse(block).map((frame) => JSON.stringify(frame)) : [];
let openingEnd = frames.findIndex((f) => f.text.includes('"snapshotEnd"'));
if (openingEnd < 0 && preloaded.length > 0) openingEnd = frames.findIndex((f) => f.text.includes('"hello"'));
if (openingEnd < 0) throw new Error('the live page got no snapshot, neither in its HTML nor over its socket');
const opening = [...preloaded, ...frames.slice(0, openingEnd + 1).map((f) => f.text)];
const rest = frames.slice(openingEnd + 1);
const base = rest[0]?.at ?? 0;
const paced = rest.map((f) => ({ dt: f.at - base, text: f.text }));

const replay = await context.newPage();
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
// The host side of the webview transport, in the page: frames from memory.
await replay.addInitScript(({ opening: first, paced: turns }) => {
  window.__replayPosted = Object.create(null);
  window.__replayDone = false;
  const post = (message) => window.postMessage(message, '*');
  window.acquireVsCodeApi = () => ({
    getState: () => null,
    setState: () => {},
    postMessage: (message) => {
      if (message?.orbit !== 'ready') return;
      post({ orbit: 'state', state: 'open' });
      post({ orbit: 'frames', frames: first });
      // The turns, after the page has taken the snapshot, at their own pace.
      setTimeout(() => {
        const start = performance.now();
        let i = 0;
        const next = () => {
          while (i < turns.length && performance.now() - start >= turns[i].dt) {
            const { text } = turns[i];
            i += 1;
            const t = performance.timeOrigin + performance.now();
            for (const m of text.matchAll(/mk\d+[atb]/g)) if (!(m[0] in window.__replayPosted)) window.__replayPosted[m[0]] = t;
            post({ orbit: 'frames', frames: [text] });
          }
          if (i < turns.length) setTimeout(next, Math.max(0, turns[i].dt - (performance.now() - start)));
          else window.__replayDone = true;
        };
        next();
      }, 500);
    },
  });
}, { opening, paced });
await replay.goto(`${origin}/w/replay/`);
await replay.waitForFunction(() => window.__replayDone === true, null, { timeout: TIMEOUT + (paced.at(-1)?.dt ?? 0) });
await replay.waitForTimeout(300);
const { posted, seen: floorSeen } = await replay.evaluate(() => ({ posted: { ...window.__replayPosted }, seen: { ...window.__latencySeen } }));
await browser.close();
const floor = {};
for (const [marker, t] of Object.entries(floorSeen)) if (posted[marker] !== undefined) floor[marker] = t - posted[marker];

// ------------------------------------------------------------------ report
const markers = Object.keys(live).filter((m) => m in floor);
const expected = TURNS * 3;
const summary = (xs) => ({ n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) });
const liveAll = summary(markers.map((m) => live[m]));
const floorAll = summary(markers.map((m) => floor[m]));
const byKind = {};
for (const kind of ['a', 't', 'b']) {
  const ms = markers.filter((m) => m.endsWith(kind));
  byKind[kind] = { live: summary(ms.map((m) => live[m])), floor: summary(ms.map((m) => floor[m])), lineType: lineOf[ms[0]]?.type ?? null };
}
const result = {
  ok: markers.length === expected,
  turns: TURNS,
  markers: markers.length,
  expected,
  live: liveAll,
  floor: floorAll,
  overFloor: { p50: liveAll.p50 - floorAll.p50, p99: liveAll.p99 - floorAll.p99 },
  byKind,
  samples: Object.fromEntries(markers.map((m) => [m, { live: live[m], floor: floor[m] }])),
};
const f = (x) => (x === null ? '-' : x.toFixed(1));
const row = (name, s) => `${name.padEnd(34)} ${f(s.p50).padStart(8)} ${f(s.p99).padStart(8)} ${f(s.max).padStart(8)} ${String(s.n).padStart(5)}`;
process.stderr.write(`${'claude line -> DOM (ms)'.padEnd(34)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'n'.padStart(5)}\n`);
process.stderr.write(`${row('live (shim line -> DOM)', liveAll)}\n`);
process.stderr.write(`${row('floor (replayed from memory)', floorAll)}\n`);
for (const [kind, name] of [['a', 'text with a tool call'], ['t', 'the tool entry'], ['b', 'closing text']]) {
  process.stderr.write(`${row(`  live: ${name}`, byKind[kind].live)}\n`);
  process.stderr.write(`${row(`  floor: ${name}`, byKind[kind].floor)}\n`);
}
process.stderr.write(`over the floor: p50 ${f(result.overFloor.p50)} ms, p99 ${f(result.overFloor.p99)} ms (goal: p99 under 20 ms over the floor)\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
if (markers.length < expected) {
  process.stderr.write(`only ${markers.length} of ${expected} markers were seen in both runs\n`);
  process.exit(1);
}
