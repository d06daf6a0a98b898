#!/usr/bin/env node
// What a frame Chromium presents costs (issue 15): run by bench/page/frame-cost (which starts a
// real `orbit open` through the ignored harness `presented_frame_cost`), in Chromium with the
// latency bench's flags (SwiftShader).
//
// 1. Cost per presented frame: after the page settles, a 4x4 px element changes colour in every
//    animation frame for 3 s; the GPU process's CPU (/proc, Chromium's process with
//    `--type=gpu-process`) before and after, over the frames drawn -> ms of GPU CPU per frame.
//    The same on a blank page in the same run (the baseline: the ratio is the figure), and on
//    Orbit's page with its map's canvases, or the whole map, set `display: none` (where the cost
//    is). Also: 3 s idle and 3 s of animation frames that change nothing (do those present?).
// 2. The page's composited layers (CDP LayerTree: size, whether it draws, the reasons).
// 3. A turn's first second: Chromium's trace (cc, viz, gpu, blink, devtools.timeline) from the
//    prompt's Enter: the frames the GPU process drew and swapped (`Display::DrawAndSwap`) and, for
//    each, what the page changed in the animation frame before it (DOM mutations, running CSS
//    animations, socket frames that came); the GPU process's CPU in that second.
//
// A table to stderr, one JSON line to stdout (`ok`). ORBIT_FRAME_COST_TURNS (3) turns;
// ORBIT_FRAME_COST_MS (3000) per cost figure; ORBIT_FRAME_COST_ONLY=cost|layers|turns.
// ORBIT_FRAME_COST_DIST=<dir>: the page's build from this directory (a `web/dist`) instead of the
// one in Orbit's binary (the browser answers the page's HTML and assets: its snapshot block kept,
// its asset tags the directory's); ORBIT_FRAME_COST_BEFORE=<dir>: a second page of the same Orbit
// with that build, measured in turn with the first (before/after in one run).
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { cpuByRole, processRoles } from './proc.mjs';
import { DIST_ARGS, serveBuild } from './serve-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', '..', 'web', 'package.json'));
const { chromium } = require('playwright-core');

const login = process.env.ORBIT_LOGIN_URL;
if (!login) {
  process.stderr.write('frame-cost.mjs: set ORBIT_LOGIN_URL (bench/page/frame-cost does)\n');
  process.exit(2);
}
const TURNS = Number(process.env.ORBIT_FRAME_COST_TURNS ?? 3);
const MS = Number(process.env.ORBIT_FRAME_COST_MS ?? 3000);
const ONLY = process.env.ORBIT_FRAME_COST_ONLY ?? '';
// ORBIT_FRAME_COST_TURN_MS: how long after the Enter a turn's frames are counted (1000: its first
// second; 2500 takes in a short turn's end, the glows fading and the star going home).
const TURN_MS = Number(process.env.ORBIT_FRAME_COST_TURN_MS ?? 1000);
// Where the 4x4 px element is: `x,y` (position: fixed, px from the viewport's left and top; over a
// composited layer it is composited itself, for the overlap) or a selector (an inline block at the
// end of that element, in its flow: as the page's own changes are). By default in the HUD's column.
const DOT = process.env.ORBIT_FRAME_COST_DOT ?? '.conversation-title';
// ORBIT_FRAME_COST_CSS: rules added to Orbit's page(s) (a constructed style sheet), to try a change.
const EXTRA_CSS = process.env.ORBIT_FRAME_COST_CSS ?? '';
const artifacts = process.env.ORBIT_ARTIFACTS ?? null;
const loadAtStart = loadavg();
const GPU = 'chromium GPU process';

// The latency bench's browser, flags and viewport (bench/page/latency.mjs).
const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-dev-shm-usage', '--no-first-run', ...(process.env.ORBIT_FRAME_COST_ARGS ? process.env.ORBIT_FRAME_COST_ARGS.split(' ') : []),
    // A page answered by the browser (ORBIT_FRAME_COST_DIST): bench/page/serve-build.mjs.
    ...(process.env.ORBIT_FRAME_COST_DIST || process.env.ORBIT_FRAME_COST_BEFORE ? DIST_ARGS : [])],
});
const gpuCpu = () => cpuByRole(processRoles())[GPU] ?? 0;
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

// Socket frames' arrival times, noted before the page's scripts (for what caused a turn's frames).
function arrivals() {
  window.__fcArrived = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      super.addEventListener('message', (event) => {
        const text = typeof event.data === 'string' ? event.data : '';
        const type = /"type":"([a-zA-Z]+)"/.exec(text)?.[1] ?? '?';
        window.__fcArrived.push({ t: performance.timeOrigin + performance.now(), type });
      });
    }
  };
}

async function settle(page) {
  await page.waitForFunction(() => !window.orbitInspect?.scene || window.orbitInspect.scene().loop === 'asleep', null, { timeout: 3000, polling: 50 }).catch(() => {});
  await sleep(300);
}

/** GPU CPU over `ms` while the page runs `mode` ('idle', 'noop': animation frames that change nothing, 'change': a 4x4 px element's colour each frame). */
async function cost(page, mode) {
  // Orbit's pages are tabs of one window (one login): the one measured is in front.
  await page.bringToFront();
  await settle(page);
  const roles = processRoles();
  const all = cpuByRole(roles);
  const before = all[GPU] ?? 0;
  const frames = await page.evaluate(({ mode: m, ms, where }) => new Promise((resolve) => {
    if (m === 'idle') { setTimeout(() => resolve(0), ms); return; }
    let dot = document.getElementById('frame-cost-dot');
    if (!dot) {
      dot = document.createElement('div');
      dot.id = 'frame-cost-dot';
      const xy = /^(\d+),(\d+)$/.exec(where);
      const host = xy ? document.body : document.querySelector(where) ?? document.body;
      Object.assign(dot.style, xy
        ? { position: 'fixed', left: `${xy[1]}px`, top: `${xy[2]}px`, width: '4px', height: '4px', zIndex: '99', background: '#000' }
        : { display: 'inline-block', width: '4px', height: '4px', background: '#000' });
      host.append(dot);
    }
    const start = performance.now();
    let n = 0;
    const tick = (t) => {
      if (t - start >= ms) { resolve(n); return; }
      if (m === 'change') dot.style.background = n % 2 ? '#f0f' : '#0f0';
      n += 1;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }), { mode, ms: MS, where: DOT });
  const after = cpuByRole(roles);
  const ms = (after[GPU] ?? 0) - before;
  const others = Object.fromEntries(Object.entries(after).filter(([k]) => k !== GPU).map(([k, v]) => [k, v - (all[k] ?? 0)]));
  return { mode, frames, gpuMs: ms, perFrame: frames > 0 ? ms / frames : null, others };
}

/** Applies `hide` ('canvases': every canvas of the map; 'map': the map's view; '': nothing) to the page. */
const hide = (page, what) => page.evaluate((w) => {
  for (const el of document.querySelectorAll('[data-frame-cost-hidden]')) { el.style.display = ''; el.removeAttribute('data-frame-cost-hidden'); }
  const els = w === 'canvases' ? document.querySelectorAll('.scene canvas') : w === 'map' ? document.querySelectorAll('.map-view') : [];
  for (const el of els) { el.style.display = 'none'; el.setAttribute('data-frame-cost-hidden', ''); }
}, what);

// One context for Orbit's pages: the login address is good once; a second page goes to the first's address.
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
let pageUrl = null;
async function openPage(dist) {
  const p = await context.newPage();
  p.setDefaultTimeout(60000);
  await p.addInitScript(arrivals);
  if (process.env.ORBIT_FRAME_COST_DEBUG) {
    p.on('console', (m) => process.stderr.write(`console ${m.type()} ${m.text()}\n`));
    p.on('pageerror', (e) => process.stderr.write(`pageerror ${e.message}\n`));
    p.on('response', (r) => { if (r.status() >= 400) process.stderr.write(`${r.status()} ${r.url()}\n`); });
  }
  if (pageUrl === null) {
    // Logged in first (the browser follows the login's redirect itself, where no route sees it).
    await p.goto(login);
    pageUrl = p.url();
  }
  if (dist) await serveBuild(p, dist);
  if (dist || p.url() !== pageUrl) await p.goto(pageUrl);
  if (EXTRA_CSS) {
    await p.evaluate((css) => {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    }, EXTRA_CSS);
  }
  await p.waitForFunction(() => window.orbitInspect?.state().ready === true && window.orbitInspect.state().connection === 'open');
  await p.waitForFunction(() => (window.orbitInspect?.scene?.().draws ?? 0) > 0, null, { timeout: 20000 }).catch(() => {});
  return p;
}

const rows = [];
const result = { ok: false, load: { start: loadAtStart.map((x) => Math.round(x * 10) / 10) } };

// ------------------------------------------------------------------ pages
const page = await openPage(process.env.ORBIT_FRAME_COST_DIST ?? null);
const before = process.env.ORBIT_FRAME_COST_BEFORE ? await openPage(process.env.ORBIT_FRAME_COST_BEFORE) : null;
const blank = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
await blank.setContent('<!doctype html><html><body style="margin:0;background:#0d1117"></body></html>');

// ------------------------------------------------------------------ 1. cost per frame
if (!ONLY || ONLY === 'cost') {
  // Two rounds, interleaved, so both pages see the same load.
  for (let round = 0; round < 2; round += 1) {
    rows.push({ page: 'blank', round, ...(await cost(blank, 'change')) });
    // ORBIT_FRAME_COST_TRACE=<file>: Chromium's trace of the first round's Orbit figure (what the GPU process does).
    if (round === 0 && process.env.ORBIT_FRAME_COST_TRACE) await browser.startTracing(page, { categories: ['cc', 'viz', 'gpu', 'skia', 'disabled-by-default-viz.gpu_composite_time'] });
    rows.push({ page: 'orbit', round, ...(await cost(page, 'change')) });
    if (round === 0 && process.env.ORBIT_FRAME_COST_TRACE) writeFileSync(process.env.ORBIT_FRAME_COST_TRACE, await browser.stopTracing());
    await hide(page, 'canvases');
    rows.push({ page: 'orbit, map canvases display:none', round, ...(await cost(page, 'change')) });
    await hide(page, 'map');
    rows.push({ page: 'orbit, map view display:none', round, ...(await cost(page, 'change')) });
    await hide(page, '');
    if (before) rows.push({ page: 'orbit, the build before', round, ...(await cost(before, 'change')) });
  }
  rows.push({ page: 'blank', round: 0, ...(await cost(blank, 'idle')) });
  rows.push({ page: 'orbit', round: 0, ...(await cost(page, 'idle')) });
  rows.push({ page: 'orbit', round: 0, ...(await cost(page, 'noop')) });
  const per = (p) => {
    const xs = rows.filter((r) => r.page === p && r.mode === 'change').map((r) => r.perFrame);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  result.cost = { rows, blankPerFrame: per('blank'), orbitPerFrame: per('orbit'), ratio: per('orbit') / per('blank') };
  if (before) result.cost.beforePerFrame = per('orbit, the build before');
  process.stderr.write(`frame cost (GPU process CPU, ${MS} ms each; load ${loadavg().map((x) => x.toFixed(1)).join(' ')})\n`);
  process.stderr.write('page                                  mode     round  frames  GPU ms  ms/frame\n');
  for (const r of rows) {
    process.stderr.write(`${r.page.padEnd(38)}${r.mode.padEnd(9)}${String(r.round).padStart(5)}${String(r.frames).padStart(8)}${String(r.gpuMs).padStart(8)}${(r.perFrame === null ? '-' : r.perFrame.toFixed(1)).padStart(10)}  ${Object.entries(r.others).map(([k, v]) => `${k.replace('chromium ', '')} ${v}`).join(', ')}\n`);
  }
  process.stderr.write(`orbit ${per('orbit').toFixed(1)} ms a frame against the blank page's ${per('blank').toFixed(1)}: ${(per('orbit') / per('blank')).toFixed(2)}x\n`);
  if (before) process.stderr.write(`the build before: ${per('orbit, the build before').toFixed(1)} ms a frame: ${(per('orbit, the build before') / per('blank')).toFixed(2)}x\n`);
}

// ------------------------------------------------------------------ 2. layers
/** The page's composited layers now (CDP LayerTree): size, whether it draws, the reasons. */
async function layersOf(label) {
  await page.bringToFront();
  await settle(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('DOM.enable');
  await cdp.send('DOM.getDocument', { depth: -1 });
  const tree = new Promise((resolve) => {
    cdp.on('LayerTree.layerTreeDidChange', (e) => { if (e.layers?.length) resolve(e.layers); });
  });
  await cdp.send('LayerTree.enable');
  // A change, so that a new tree is sent.
  await page.evaluate(() => new Promise((resolve) => {
    const dot = document.createElement('div');
    Object.assign(dot.style, { position: 'fixed', left: '4px', bottom: '4px', width: '4px', height: '4px', zIndex: '99', background: '#000' });
    document.body.append(dot);
    requestAnimationFrame(() => requestAnimationFrame(() => { dot.remove(); resolve(); }));
  }));
  const layers = await Promise.race([tree, sleep(5000).then(() => [])]);
  const described = [];
  for (const l of layers) {
    let node = '';
    if (l.backendNodeId) {
      try {
        const { node: n } = await cdp.send('DOM.describeNode', { backendNodeId: l.backendNodeId });
        const attrs = n.attributes ?? [];
        const cls = attrs[attrs.indexOf('class') + 1];
        node = `${n.nodeName.toLowerCase()}${attrs.includes('class') && cls ? `.${cls.split(' ').join('.')}` : ''}`;
      } catch { node = '?'; }
    }
    let reasons = [];
    try {
      const r = await cdp.send('LayerTree.compositingReasons', { layerId: l.layerId });
      reasons = r.compositingReasonIds ?? r.compositingReasons ?? [];
    } catch { /* gone */ }
    described.push({ node: node || '(none)', width: l.width, height: l.height, drawsContent: l.drawsContent, invisible: Boolean(l.invisible), reasons });
  }
  await cdp.send('LayerTree.disable');
  await cdp.detach();
  const drawn = described.filter((l) => l.drawsContent && !l.invisible);
  const area = drawn.reduce((a, l) => a + l.width * l.height, 0) / (1280 * 800);
  process.stderr.write(`composited layers (${label}): ${described.length}, ${drawn.length} drawing content, ${area.toFixed(2)} viewports of area\n`);
  for (const l of described) {
    process.stderr.write(`  ${l.drawsContent && !l.invisible ? 'draws' : '     '} ${`${Math.round(l.width)}x${Math.round(l.height)}`.padEnd(10)} ${l.node.slice(0, 60).padEnd(60)} ${l.reasons.join(', ')}\n`);
  }
  return { layers: described, drawn: drawn.length, area };
}
if (!ONLY || ONLY === 'layers') {
  const l = await layersOf('settled');
  result.layers = l.layers;
  result.layersDrawn = l.drawn;
  result.layersArea = l.area;
}

// ------------------------------------------------------------------ 3. a turn's first second
if ((!ONLY || ONLY === 'turns') && TURNS > 0) {
  const box = page.getByRole('textbox', { name: 'Ask Claude' });
  await page.bringToFront();
  result.turns = [];
  for (let i = 0; i < TURNS; i += 1) {
    await settle(page);
    await box.click();
    await box.fill(`Turn ${i + 1}: read the file and say so`);
    await sleep(300);
    await browser.startTracing(page, { categories: ['cc', 'viz', 'gpu', 'blink', 'devtools.timeline'] });
    const epochOffsetMs = performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
    // The page's animation frames in the next second: what changed in each (its rAF loop asks for
    // frames, but a frame that changes nothing is not drawn: see the cost's `noop` row).
    const ticks = page.evaluate((ms) => new Promise((resolve) => {
      const out = [];
      let changes = [];
      const name = (n) => {
        const el = n.nodeType === 1 ? n : n.parentElement;
        if (!el) return '#text';
        const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).slice(0, 2).join('.')}` : '';
        return `${el.tagName.toLowerCase()}${cls}`;
      };
      const mo = new MutationObserver((records) => {
        for (const r of records) changes.push(`${r.type === 'attributes' ? `@${r.attributeName} ` : r.type === 'characterData' ? 'text ' : '+- '}${name(r.target)}`);
      });
      mo.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      let seen = window.__fcArrived.length;
      const start = performance.now();
      const tick = (t) => {
        const anims = document.getAnimations().filter((a) => a.playState === 'running').map((a) => `${a.animationName ?? a.constructor.name} ${a.effect?.target ? name(a.effect.target) : ''}`);
        const socket = window.__fcArrived.slice(seen).map((a) => a.type);
        seen = window.__fcArrived.length;
        if (changes.length || anims.length || socket.length) out.push({ t: performance.timeOrigin + t, changes: [...new Set(changes)], anims, socket });
        changes = [];
        if (t - start >= ms) { mo.disconnect(); resolve(out); return; }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }), TURN_MS + 200);
    const gpuBefore = gpuCpu();
    const enterAt = Date.now();
    await box.press('Enter');
    const changed = await ticks;
    const gpuMs = gpuCpu() - gpuBefore;
    const buffer = await browser.stopTracing();
    const events = JSON.parse(buffer.toString('utf8')).traceEvents ?? [];
    const draws = events.filter((e) => e.name === 'Display::DrawAndSwap' && (e.ph === 'X' || e.ph === 'B'))
      .map((e) => ({ t: e.ts / 1000 + epochOffsetMs, dur: (e.dur ?? 0) / 1000 }))
      .filter((d) => d.t >= enterAt && d.t <= enterAt + TURN_MS)
      .sort((a, b) => a.t - b.t);
    // Each drawn frame: the page's last animation frame with a change before it.
    const frames = draws.map((d) => {
      const cause = [...changed].reverse().find((c) => c.t <= d.t);
      return { at: Math.round(d.t - enterAt), drawMs: Math.round(d.dur * 10) / 10, cause: cause ? { at: Math.round(cause.t - enterAt), changes: cause.changes.slice(0, 6), anims: cause.anims, socket: cause.socket } : null };
    });
    result.turns.push({ turn: i + 1, gpuMs, presented: draws.length, pageFramesWithChanges: changed.filter((c) => c.t - enterAt <= TURN_MS).length, frames });
    process.stderr.write(`turn ${i + 1}: ${draws.length} frames drawn in the ${TURN_MS} ms after Enter, GPU process ${gpuMs} ms of CPU (${TURN_MS + 200} ms)\n`);
    for (const f of frames) {
      const c = f.cause;
      process.stderr.write(`  +${String(f.at).padStart(4)} ms  ${c ? `page frame +${c.at}: ${[...c.socket.map((s) => `socket ${s}`), ...c.anims.map((a) => `anim ${a}`), ...c.changes].join('; ').slice(0, 200)}` : '(no page change before it)'}\n`);
    }
    // The turn over before the next.
    await page.waitForFunction(() => {
      const st = window.orbitInspect.state();
      return st.shown && st.sessions?.[st.shown]?.phase === 'idle';
    }, null, { timeout: 60000, polling: 100 });
  }
  result.layersAfterTurns = await layersOf('after the turns, settled');
  const p = result.turns.map((t) => t.presented);
  result.presentedPerTurnSecond = p.reduce((a, b) => a + b, 0) / p.length;
  process.stderr.write(`frames drawn in a turn's first ${TURN_MS} ms: ${p.join(', ')} (mean ${result.presentedPerTurnSecond.toFixed(1)})\n`);
}

result.load.end = loadavg().map((x) => Math.round(x * 10) / 10);
if (artifacts) await page.screenshot({ path: join(artifacts, 'frame-cost.png') });
await browser.close();
result.ok = true;
if (process.env.ORBIT_FRAME_COST_JSON) writeFileSync(process.env.ORBIT_FRAME_COST_JSON, JSON.stringify(result, null, 2));
process.stdout.write(`${JSON.stringify(result)}\n`);
