#!/usr/bin/env node
// The critical path of one traced reload (a trace `ab.mjs --trace` wrote):
// from the last `navigationStart` to the `orbit:first-frame` mark, what the
// page's renderer main thread and the GPU process's main thread did, in ms
// from navigation start: every top-level slice of at least `--min` ms (the
// renderer's slices of its own process only: the old page's and the new
// page's), the network's requests and answers, and the frames the GPU
// process drew and swapped (for which client: the browser's or a renderer's).
//
//   node bench/scene/path.mjs TRACE.json [--min 1] [--names] [--gpu]
//
// `--names` prints, per thread, the total time of each slice name instead of
// the timeline. `--gpu` prints only where the GPU process's main thread spent
// the window (gpu.mjs: frames swapped, WebGL, raster, ...) and how many
// composites the browser and the renderers asked for (needs the `cc`
// category for the renderers' and the browser's).
import { readFileSync } from 'node:fs';
import { gpuBreakdown } from './gpu.mjs';

const argv = process.argv.slice(2);
const file = argv.find((a) => !a.startsWith('--'));
const minIdx = argv.indexOf('--min');
const MIN = minIdx >= 0 ? Number(argv[minIdx + 1]) : 1;
const NAMES = argv.includes('--names');
const GPU = argv.includes('--gpu');
if (!file) {
  console.error('usage: path.mjs TRACE.json [--min MS] [--names] [--gpu]');
  process.exit(2);
}
const raw = JSON.parse(readFileSync(file, 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;
const MARK = 'orbit:first-frame';

const threadName = new Map();
const processName = new Map();
for (const e of events) {
  if (e.ph !== 'M') continue;
  if (e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  if (e.name === 'process_name') processName.set(e.pid, e.args?.name ?? '');
}
const nav = events.filter((e) => e.name === 'navigationStart').at(-1);
const mark = events.filter((e) => e.name === MARK && e.ph !== 'M').at(-1);
if (!nav || !mark) {
  console.error('no navigationStart or no mark in the trace');
  process.exit(1);
}
const t0 = nav.ts;
const t1 = mark.ts;
const ms = (ts) => ((ts - t0) / 1000).toFixed(1);
const rendererPid = nav.pid;
const gpuPid = [...processName].find(([, n]) => /GPU/i.test(n))?.[0];
const browserPid = [...processName].find(([, n]) => /Browser/i.test(n))?.[0];
const mainOf = (pid, re) => [...threadName].find(([k, n]) => k.startsWith(`${pid}:`) && re.test(n))?.[0];
const threads = [
  ['renderer main', mainOf(rendererPid, /^CrRendererMain$/)],
  ['GPU main', gpuPid !== undefined ? mainOf(gpuPid, /^CrGpuMain$/) : undefined],
  ['GPU viz', gpuPid !== undefined ? mainOf(gpuPid, /VizCompositor/) : undefined],
  ['browser main', browserPid !== undefined ? mainOf(browserPid, /^CrBrowserMain$/) : undefined],
  ['compositor', mainOf(rendererPid, /^Compositor$/)],
].filter(([, k]) => k);

/** Complete slices ('X', and 'B'/'E' pairs) of one thread, depth 0 only, within [t0, t1]. */
function slices(key) {
  const [pid, tid] = key.split(':').map(Number);
  const out = [];
  const open = [];
  const mine = events.filter((e) => e.pid === pid && e.tid === tid && (e.ph === 'X' || e.ph === 'B' || e.ph === 'E')).sort((a, b) => a.ts - b.ts);
  for (const e of mine) {
    if (e.ph === 'X') out.push({ name: e.name, ts: e.ts, dur: e.dur ?? 0, args: e.args });
    else if (e.ph === 'B') open.push(e);
    else {
      const b = open.pop();
      if (b) out.push({ name: b.name, ts: b.ts, dur: e.ts - b.ts, args: b.args });
    }
  }
  out.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Top level: not inside an earlier slice; their children summarised by name.
  const top = [];
  for (const s of out) {
    const parent = top.at(-1);
    if (parent && s.ts < parent.ts + parent.dur) {
      (parent.kids ??= []).push(s);
      continue;
    }
    top.push(s);
  }
  return top.filter((s) => s.ts + s.dur >= t0 && s.ts <= t1);
}

function detail(s) {
  const a = s.args ?? {};
  const d = a.data ?? a;
  const bits = [];
  if (d.url) bits.push(String(d.url).replace(/^https?:\/\/[^/]+/, '').slice(0, 60));
  if (d.functionName) bits.push(d.functionName);
  if (d.frame && typeof d.frame === 'string') bits.push(`frame ${d.frame.slice(0, 6)}`);
  const kids = (s.kids ?? []).filter((k) => k.dur >= 500).sort((a, b) => b.dur - a.dur).slice(0, 4);
  if (kids.length) bits.push(`[${kids.map((k) => `${k.name} ${(k.dur / 1000).toFixed(1)}`).join(', ')}]`);
  return bits.join(' ');
}

console.log(`${file}: navigation start -> mark ${ms(t1)} ms; renderer pid ${rendererPid}, GPU pid ${gpuPid}`);
if (GPU) {
  const key = threads.find(([label]) => label === 'GPU main')?.[1];
  if (!key) {
    console.error('no GPU main thread in the trace');
    process.exit(1);
  }
  const g = gpuBreakdown(events, key, t0, t1);
  console.log(`GPU main busy ${g.busy.toFixed(1)} of ${g.windowMs.toFixed(1)} ms (${((100 * g.busy) / g.windowMs).toFixed(0)}%)`);
  for (const [kind, { ms: t, tasks }] of g.kinds) console.log(`  ${kind.padEnd(36)} ${t.toFixed(1).padStart(6)} ms in ${tasks} tasks`);
  console.log(`composites asked for: browser ${g.composites.browser}, renderers ${g.composites.renderer}`);
  process.exit(0);
}
for (const [label, key] of threads) {
  const top = slices(key);
  const busy = top.reduce((sum, s) => sum + Math.min(s.ts + s.dur, t1) - Math.max(s.ts, t0), 0) / 1000;
  console.log(`\n== ${label} (${key}): busy ${busy.toFixed(1)} of ${ms(t1)} ms`);
  if (NAMES) {
    const by = new Map();
    for (const s of top) by.set(s.name, (by.get(s.name) ?? 0) + s.dur / 1000);
    for (const [n, t] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${t.toFixed(1).padStart(7)}  ${n}`);
    continue;
  }
  for (const s of top) {
    if (s.dur / 1000 < MIN) continue;
    console.log(`  ${ms(s.ts).padStart(7)} +${(s.dur / 1000).toFixed(1).padStart(5)}  ${s.name} ${detail(s)}`);
  }
}

// Instant events worth seeing on the path.
const INSTANT = /^(ResourceSendRequest|ResourceReceiveResponse|ResourceFinish|ResourceReceivedData|MarkDOMContent|MarkLoad|firstContentfulPaint|firstPaint|domInteractive|commitNavigationEnd|unloadEventStart|unloadEventEnd|pagehide|CommitLoad|WebGL.*|UpdateLayerTree)$/;
console.log('\n== marks and network (renderer)');
for (const e of events.filter((x) => x.ts >= t0 - 1000 && x.ts <= t1 && INSTANT.test(x.name)).sort((a, b) => a.ts - b.ts)) {
  const d = e.args?.data ?? {};
  const url = d.url ? String(d.url).replace(/^https?:\/\/[^/]+/, '').slice(0, 50) : '';
  console.log(`  ${ms(e.ts).padStart(7)}  ${e.name} ${url}${d.fromCache ? ' (cache)' : ''}${e.pid !== rendererPid ? ` pid ${e.pid}` : ''}`);
}
