#!/usr/bin/env node
// Where a 400-entry load's time goes: Chromium's trace of one reload of the
// page (after a few untraced ones, so the assets and V8's code cache are as
// warm as in the page benchmark's runs) and of the static file of the same
// 400 entries, both served and watched as `bench.mjs` does. Keeps each trace
// under `target/artifacts/page/` (open them in Chrome's DevTools, Performance
// panel) and prints the split of the page's main thread from navigation
// start to the first animation frame showing the entries.
//
//   npm --prefix web run build && node bench/page/trace-load.mjs [--warm N] [--dist DIR]
//        [--cpu-profile] [--profile otr|persistent]
//
// --dist DIR serves another build of the page (a `web/dist` copy).
// ORBIT_CHROMIUM_DISABLE_FEATURES=A,B turns Chromium features off (profile.mjs).
// --cpu-profile (or a bare --profile, its name before the browser profile's
// flag) adds V8's sampling profiler. --profile otr|persistent: the browser
// profile (bench/scene/profile.mjs; otr by default). The traced reload's
// V8 compiles of the page's scripts, and whether they took a code cache, are
// printed after the split.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import http from 'node:http';
import { openPageBrowser, reported, watchPage, watchStatic } from './watch.mjs';
import { compilesOf, parseProfile } from '../scene/profile.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const web = join(repo, 'web');
const require = createRequire(join(web, 'package.json'));
const { chromium } = require('playwright-core');
const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : null);
const WARM = Number(opt('--warm') ?? 3);
const DIST = opt('--dist');
const PROFILE = parseProfile(args, { bare: true });
const CPU_PROFILE = args.includes('--cpu-profile') || args.some((a, i) => a === '--profile' && !['otr', 'persistent'].includes(args[i + 1]));
const out = join(repo, 'target', 'artifacts', 'page');
mkdirSync(out, { recursive: true });

const child = spawn(process.execPath, [join(web, 'e2e', 'mock-server.mjs')], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, ...(DIST ? { MOCK_DIST: DIST } : {}) },
});
const [login] = await once(createInterface({ input: child.stdout }), 'line');
// The mock host goes with this script, also when it fails.
process.on('exit', () => { child.kill('SIGTERM'); });
const origin = new URL(login).origin;
const handle = await openPageBrowser(chromium, PROFILE);
const context = await handle.newContext();
const first = await context.newPage();
await first.goto(login);
await first.waitForFunction(() => window.orbitInspect?.state().ready === true);
const last = Number(await (await fetch(`${origin}/mock/flood?n=400&bytes=0`)).text());
await first.waitForFunction((s) => {
  const st = window.orbitInspect?.state();
  return Boolean(st?.shown && st.transcripts[st.shown]?.seqs.includes(s));
}, last, { timeout: 60000 });
const pageUrl = first.url().replace(/#.*$/, '');

const staticHtml = `<!doctype html><meta charset="utf-8"><title>static</title><div role="log">${
  Array.from({ length: 400 }, (_, i) => `<article><p>Entry ${i + 1}: ${'a long line of conversation text, '.repeat(6)}</p></article>`).join('')
}</div>`;
const staticServer = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(staticHtml);
});
await new Promise((resolve) => { staticServer.listen(0, '127.0.0.1', resolve); });
const staticUrl = `http://127.0.0.1:${staticServer.address().port}/bench-static.html`;

const CATEGORIES = [
  'devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.frame',
  'v8', 'v8.execute', 'disabled-by-default-v8.compile', 'blink', 'blink.user_timing', 'loading', 'navigation',
  'toplevel', 'netlog', 'cc', 'gpu', 'viz', 'benchmark', 'rail',
  // --cpu-profile: V8's sampling profiler too (it costs the traced load ~15 ms at its start).
  ...(CPU_PROFILE ? ['disabled-by-default-v8.cpu_profiler'] : []),
];

async function traced(url, watcher, name) {
  for (let i = 0; i < WARM; i += 1) {
    const page = await context.newPage();
    const shown = reported(page);
    await page.addInitScript(...watcher);
    await page.goto(url, { waitUntil: 'commit' });
    await shown;
    await new Promise((r) => setTimeout(r, 300));
    await page.close();
  }
  const page = await context.newPage();
  const shownAt = reported(page);
  await page.addInitScript(...watcher);
  // The browser's session (otr, as before); a persistent context has no `Browser`: the page's.
  const cdp = handle.browser ? await handle.browser.newBrowserCDPSession() : await context.newCDPSession(page);
  const chunks = [];
  cdp.on('Tracing.dataCollected', ({ value }) => { chunks.push(...value); });
  const done = new Promise((resolve) => { cdp.once('Tracing.tracingComplete', resolve); });
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: CATEGORIES, recordMode: 'recordAsMuchAsPossible' }, transferMode: 'ReportEvents' });
  await page.goto(url, { waitUntil: 'commit' });
  const { shown } = await shownAt;
  await new Promise((r) => setTimeout(r, 500));
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  await page.close();
  const file = join(out, `load-trace-${name}.json`);
  writeFileSync(file, JSON.stringify({ traceEvents: chunks }));
  return { shown, events: chunks, file };
}

/** The split of the renderer's main thread from navigation start to the bench's mark. */
function split(events, shownMs, label) {
  const threads = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
  const mark = events.find((e) => e.name === 'bench:shown');
  if (!mark) return `${label}: no bench:shown mark in the trace`;
  const main = `${mark.pid}:${mark.tid}`;
  const nav = events.filter((e) => e.name === 'navigationStart' && `${e.pid}:${e.tid}` === main).map((e) => e.ts);
  const t0 = nav.length > 0 ? Math.max(...nav.filter((t) => t <= mark.ts)) : mark.ts - shownMs * 1000;
  const end = mark.ts;
  const on = events.filter((e) => `${e.pid}:${e.tid}` === main && e.ts >= t0 - 1 && e.ts <= end && (e.ph === 'X' || e.ph === 'B' || e.ph === 'E' || e.ph === 'I' || e.ph === 'R' || e.ph === 'n' || e.ph === 'b'));
  const lines = [`${label}: shown at ${shownMs.toFixed(1)} ms (mark at ${((end - t0) / 1000).toFixed(1)} ms from navigationStart)`];
  // Marks and instants (navigation, the page's own performance marks).
  const wantedMarks = /^(navigationStart|fetchStart|responseEnd|domInteractive|domContentLoadedEventEnd|loadEventEnd|firstPaint|firstContentfulPaint|orbit:|bench:)/;
  for (const e of on) if (wantedMarks.test(e.name)) lines.push(`  mark ${((e.ts - t0) / 1000).toFixed(1).padStart(7)}  ${e.name}`);
  // Top-level tasks and what they hold (complete events only; Chromium's main-thread tasks are `X`).
  const tasks = on.filter((e) => e.ph === 'X' && e.name === 'RunTask' && e.dur >= 500);
  const kinds = ['ParseHTML', 'EvaluateScript', 'v8.compileModule', 'v8.evaluateModule', 'v8.compile', 'v8.run', 'FunctionCall', 'EventDispatch', 'TimerFire', 'FireAnimationFrame', 'UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'UpdateLayer', 'CompositeLayers', 'ParseAuthorStyleSheet', 'v8.parseOnBackground', 'MajorGC', 'MinorGC', 'V8.GC_SCAVENGER', 'v8.produceModuleCache', 'v8.produceCache', 'v8.deserializeOnBackground', 'v8.compile.consumeCache', 'ResourceReceivedData', 'ResourceFinish', 'ResourceReceiveResponse', 'HitTest', 'ScheduleStyleRecalculation', 'InvalidateLayout'];
  let busy = 0;
  for (const task of tasks) {
    const inner = on.filter((e) => e.ph === 'X' && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur + 1 && e !== task);
    const sums = new Map();
    for (const e of inner) {
      if (!kinds.includes(e.name)) continue;
      // Only outermost of the same name (a Layout inside a Layout is counted once).
      const nested = inner.some((o) => o !== e && o.name === e.name && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && o.dur > e.dur);
      if (nested) continue;
      sums.set(e.name, (sums.get(e.name) ?? 0) + e.dur);
    }
    const detail = [...sums].filter(([, d]) => d >= 300).map(([n, d]) => `${n} ${(d / 1000).toFixed(1)}`).join(', ');
    const urls = inner.filter((e) => (e.name === 'EvaluateScript' || e.name === 'v8.compileModule' || e.name === 'v8.compile') && (e.args?.data?.url || e.args?.fileName)).map((e) => String(e.args?.data?.url ?? e.args?.fileName).replace(/^.*\//, '')).slice(0, 3);
    busy += task.dur;
    lines.push(`  task ${((task.ts - t0) / 1000).toFixed(1).padStart(7)} +${(task.dur / 1000).toFixed(1).padStart(6)}  ${detail}${urls.length ? `  [${urls.join(' ')}]` : ''}`);
  }
  lines.push(`  main thread busy ${(busy / 1000).toFixed(1)} ms of ${((end - t0) / 1000).toFixed(1)}`);
  // Network: when each response started and finished (the browser's view).
  const sends = events.filter((e) => e.name === 'ResourceSendRequest' && e.ts >= t0 - 1000 && e.ts <= end);
  for (const s of sends) {
    const id = s.args?.data?.requestId;
    const fin = events.find((e) => e.name === 'ResourceFinish' && e.args?.data?.requestId === id);
    const resp = events.find((e) => e.name === 'ResourceReceiveResponse' && e.args?.data?.requestId === id);
    const u = String(s.args?.data?.url ?? '').replace(/^https?:\/\/[^/]+/, '');
    lines.push(`  net  ${((s.ts - t0) / 1000).toFixed(1).padStart(7)} -> response ${resp ? ((resp.ts - t0) / 1000).toFixed(1) : '?'} finish ${fin ? ((fin.ts - t0) / 1000).toFixed(1) : '?'}  ${u.slice(0, 60)}${resp?.args?.data?.fromCache ? ' (cache)' : ''}`);
  }
  // V8's code cache for the scripts.
  for (const e of events.filter((x) => `${x.pid}:${x.tid}` === main && x.ts >= t0 && x.ts <= end && /Cache/.test(x.name) && x.name !== 'FlushInstructionCache' && x.ph === 'X')) {
    lines.push(`  v8   ${((e.ts - t0) / 1000).toFixed(1).padStart(7)} +${(e.dur / 1000).toFixed(1)} ${e.name} ${JSON.stringify(e.args?.data ?? e.args ?? {}).slice(0, 160)}`);
  }
  if (CPU_PROFILE) lines.push(...profileSplit(events, mark, t0, end));
  return lines.join('\n');
}

/** With --profile: the main thread's JS by function (self and total ms) from V8's samples between `t0` and `end`. */
function profileSplit(events, mark, t0, end) {
  const profiles = events.filter((e) => e.name === 'Profile' && e.pid === mark.pid);
  const lines = [];
  for (const profile of profiles) {
    const chunks = events.filter((e) => e.name === 'ProfileChunk' && e.pid === profile.pid && e.id === profile.id);
    const nodes = new Map();
    let time = profile.args.data.startTime;
    const self = new Map();
    const total = new Map();
    let sampled = 0;
    for (const chunk of chunks) {
      const cpu = chunk.args.data.cpuProfile ?? {};
      for (const n of cpu.nodes ?? []) nodes.set(n.id, n);
      const deltas = chunk.args.data.timeDeltas ?? [];
      (cpu.samples ?? []).forEach((id, i) => {
        time += deltas[i] ?? 0;
        if (time < t0 || time > end) return;
        const dt = deltas[i + 1] ?? 0;
        sampled += dt;
        const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${String(n.callFrame.url ?? '').replace(/^.*\//, '')}:${n.callFrame.lineNumber + 1}`;
        let node = nodes.get(id);
        if (!node) return;
        self.set(name(node), (self.get(name(node)) ?? 0) + dt);
        const seen = new Set();
        while (node) {
          const k = name(node);
          if (!seen.has(k)) total.set(k, (total.get(k) ?? 0) + dt);
          seen.add(k);
          node = nodes.get(node.parent);
        }
      });
    }
    if (sampled === 0) continue;
    lines.push(`  profile: ${(sampled / 1000).toFixed(1)} ms sampled`);
    const top = (m, label) => [...m].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([k, v]) => `  ${label} ${(v / 1000).toFixed(1).padStart(6)}  ${k}`);
    lines.push(...top(self, 'self '), ...top(total, 'total'));
  }
  return lines;
}

const pageRun = await traced(pageUrl, [watchPage, { untilConnected: false }], 'page');
const staticRun = await traced(staticUrl, [watchStatic], 'static');
await handle.close();
child.kill('SIGTERM');
staticServer.close();
process.stdout.write(`${split(pageRun.events, pageRun.shown, `page (${pageRun.file})`)}\n\n${split(staticRun.events, staticRun.shown, `static (${staticRun.file})`)}\n`);
// Whether the traced reload's compiles of the page's scripts took V8's code cache (the profile: ${PROFILE}).
process.stdout.write(`\nV8 compiles of /assets/ scripts in the traced page load (profile ${PROFILE}, after ${WARM} untraced loads):\n`);
for (const c of compilesOf(pageRun.events, /\/assets\/.*\.js$/)) {
  const { name, thread, ms, url, ts, ...cache } = c;
  process.stdout.write(`  ${name.padEnd(28)} ${ms.toFixed(1).padStart(6)} ms  ${thread.padEnd(22)} ${url}  ${JSON.stringify(cache)}\n`);
}
