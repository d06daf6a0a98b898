#!/usr/bin/env node
// A/B of page builds on the map's first frame (issue 16), in one run: one real
// `orbit open` (release), and in front of it one small proxy per page build
// (`web/dist` folders) that serves that build's `index.html` (with the
// snapshot block Orbit put in its own) and `/assets/*`, and passes everything
// else (login, the socket, `/map`) to Orbit. Each build gets its own browser
// tab; the reloads go round the tabs in turn, so every build sees the same
// machine load. `--minimal` adds the minimal WebGL2 page (bench/scene/dist)
// drawing the same `/map` bytes at the same canvas size, as the last tab.
//
//   node bench/scene/ab.mjs --orbit BIN --workspace DIR [--loads 9] [--minimal]
//        [--trace PREFIX] [--categories viz,gpu,...] [--back-to-back] [--settle-ms MS]
//        [--profile otr|persistent] [--map-in-page BYTES] DIST_A [DIST_B ...]
//
// `--profile` (profile.mjs): `otr` (the default) a fresh off-the-record
// context per tab; `persistent` every tab in one normal temporary profile,
// as a user's browser (V8's code cache kept between loads), and the minimal
// page's hashed scripts served cacheable as Orbit serves its own.
//
// `orbit` as a DIST is Orbit's own embedded page (no proxy). Per build: the
// median first frame (navigation start to `orbit:first-frame`), its ratio to
// the last tab's, and per reload the CPU the GPU process used from the
// reload to the mark (`/proc/<pid>/stat`, 10 ms ticks). `--trace PREFIX`
// traces each tab's last reload (`viz`, `gpu`, `toplevel`, user timing) into
// PREFIX-<i>.json and counts the frames the GPU process drew and swapped
// (`Display::DrawAndSwap`) before the mark, with their total time.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { processType } from './cpu.mjs';
import { openBrowser, profileOf, startTrace } from './profile.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const MARK = 'orbit:first-frame';
const argv = process.argv.slice(2);
const flags = new Map();
const dists = [];
for (let i = 0; i < argv.length; i += 1) {
  const a = argv[i];
  if (a === '--minimal') flags.set('minimal', true);
  else if (a === '--back-to-back') flags.set('back-to-back', true);
  else if (a.startsWith('--')) {
    flags.set(a.slice(2), argv[i + 1]);
    i += 1;
  } else dists.push(a);
}
// `DIST@BYTES`: that build's own `--map-in-page` bound (the same build may be given twice so).
const bounds = new Map();
for (const [i, d] of dists.entries()) {
  const at = d.lastIndexOf('@');
  if (at > 0 && /^\d+$/.test(d.slice(at + 1))) {
    dists[i] = d.slice(0, at);
    bounds.set(i, Number(d.slice(at + 1)));
  }
}
const bin = flags.get('orbit') ?? process.env.ORBIT_BIN;
const ws = flags.get('workspace');
const LOADS = Number(flags.get('loads') ?? 9);
// `--back-to-back`: as bench/scene/bench.mjs reloads (each reload as soon as
// the last one's mark is seen, polled every 50 ms), so the page a measured
// reload replaces has just drawn its first frame and is still starting: each
// measured reload comes right after an unmeasured one. `--settle-ms` is the
// pause after a tab's reloads before the next tab's (default 300), long
// enough with `--back-to-back` for work a page leaves for later not to fall
// into the next tab's reloads.
const BACK_TO_BACK = flags.get('back-to-back') === true;
const SETTLE_MS = Number(flags.get('settle-ms') ?? 300);
const tracePrefix = flags.get('trace');
// `--categories a,b` replaces the trace's categories (e.g. adding cc, blink, v8 for bench/scene/path.mjs).
const CATEGORIES = (flags.get('categories') ?? 'viz,gpu,toplevel,blink.user_timing,devtools.timeline,loading').split(',');
const PROFILE = profileOf(flags.get('profile') ?? 'otr');
if (!bin || !ws || dists.length === 0) {
  console.error('usage: ab.mjs --orbit BIN --workspace DIR [--loads N] [--minimal] [--trace PREFIX] DIST...');
  process.exit(2);
}
for (const d of dists) {
  if (d !== 'orbit' && !existsSync(join(d, 'index.html'))) {
    console.error(`${d} has no index.html (a page build: npm --prefix web run build, then copy web/dist)`);
    process.exit(2);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
async function freePort() {
  const p = net.createServer();
  await new Promise((r) => p.listen(0, '127.0.0.1', r));
  const { port } = p.address();
  await new Promise((r) => p.close(r));
  return port;
}

// ---------------------------------------------------------------- orbit open
const config = mkdtempSync(join(tmpdir(), 'orbit-ab-config-'));
chmodSync(config, 0o700);
const home = mkdtempSync(join(tmpdir(), 'orbit-ab-home-'));
const port = await freePort();
const env = { ...process.env, ORBIT_CONFIG_DIR: config, HOME: home };
delete env.ORBIT_LOG;
delete env.XDG_RUNTIME_DIR;
delete env.XDG_STATE_HOME;
const child = spawn(bin, ['open', ws, '--no-browser', '--port', String(port)], { cwd: ws, env, stdio: ['ignore', 'pipe', 'ignore'] });
// Not left running when the script fails.
process.on('exit', () => { child.kill('SIGTERM'); });
const loginUrl = await new Promise((res, rej) => {
  let b = '';
  child.stdout.on('data', (c) => {
    b += c;
    const nl = b.indexOf('\n');
    if (nl >= 0) res(b.slice(0, nl).trim());
  });
  child.on('exit', (code) => rej(new Error(`orbit open exited (${code}) before its login address`)));
});

// ---------------------------------------------------------------- the proxies
const TYPES = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8' };
const SNAPSHOT = /<script type="application\/json" id="orbit-snapshot">[\s\S]*?<\/script>/;
const MAP_BLOCK = /<script type="application\/octet-stream" id="orbit-map">[\s\S]*?<\/script>/;
// `--map-in-page BYTES`: a build whose code reads the map's data block (`orbit-map`) gets one when
// Orbit's `/map` is at most BYTES (the proxy asks Orbit's `/map` beside the page and drops the
// `Link: preload`), else none and the `Link` header, as a server with that bound would serve it
// (0: never), whatever Orbit's own HTML had. Without the flag, such a build gets the block Orbit's
// HTML has. A build that does not read the block gets none, and the `Link` header as before it.
const MAP_IN_PAGE_FLAG = flags.has('map-in-page') ? Number(flags.get('map-in-page')) : null;
/** Whether the build `dist` reads the map's data block (its scripts name `orbit-map`). */
function readsMapBlock(dist) {
  const assets = join(dist, 'assets');
  return existsSync(assets) && readdirSync(assets).some((f) => f.endsWith('.js') && readFileSync(join(assets, f), 'utf8').match(/[`'"]orbit-map[`'"]/) !== null);
}
/** Orbit's `/map` bytes for a page request (its cookie), or null. */
function orbitMap(req, path) {
  return new Promise((res) => {
    const headers = { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', cookie: req.headers.cookie ?? '' };
    const r = http.request({ host: '127.0.0.1', port, path, headers }, (m) => {
      const chunks = [];
      m.on('data', (c) => chunks.push(c));
      m.on('end', () => res(m.statusCode === 200 ? Buffer.concat(chunks) : null));
    });
    r.on('error', () => res(null));
    r.end();
  });
}
async function proxy(dist, MAP_IN_PAGE = MAP_IN_PAGE_FLAG) {
  const html = dist ? readFileSync(join(dist, 'index.html'), 'utf8') : null;
  const mapBlock = dist ? readsMapBlock(dist) : false;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (dist && url.pathname.startsWith('/assets/')) {
      const file = resolve(dist, `.${url.pathname}`);
      if (!file.startsWith(resolve(dist) + sep) || !existsSync(file)) {
        res.writeHead(404).end();
        return;
      }
      // As Orbit serves its assets (hashed names, cached).
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'public, max-age=31536000, immutable' });
      res.end(readFileSync(file));
      return;
    }
    const headers = { ...req.headers, host: `127.0.0.1:${port}` };
    if (headers.origin) headers.origin = `http://127.0.0.1:${port}`;
    delete headers.referer;
    // Asked beside the page (a server with the block asks its workspace for both at once).
    const mapBytes = mapBlock && MAP_IN_PAGE !== null && /^\/w\/[^/]+\/$/.test(url.pathname) ? orbitMap(req, `${url.pathname}map`) : null;
    const up = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers }, (pres) => {
      const h = { ...pres.headers };
      if (h.location) h.location = h.location.replace(`127.0.0.1:${port}`, req.headers.host ?? '');
      if (html && /^\/w\/[^/]+\/$/.test(url.pathname) && String(h['content-type']).startsWith('text/html')) {
        const chunks = [];
        pres.on('data', (c) => chunks.push(c));
        pres.on('end', async () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const block = SNAPSHOT.exec(text);
          let blocks = block ? block[0] : '';
          const own = MAP_BLOCK.exec(text)?.[0];
          const preload = `<${url.pathname}map>; rel=preload; as=fetch; crossorigin`;
          if (mapBlock && MAP_IN_PAGE === null && own) blocks += own;
          else if (mapBlock && MAP_IN_PAGE !== null) {
            const bytes = await mapBytes;
            if (bytes && bytes.length <= MAP_IN_PAGE) {
              blocks += `<script type="application/octet-stream" id="orbit-map">${bytes.toString('base64')}</script>`;
              delete h.link;
            } else h.link ??= preload;
          } else if (own) h.link ??= preload;
          delete h['content-length'];
          res.writeHead(pres.statusCode ?? 502, h).end(blocks ? html.replace('</body>', `${blocks}</body>`) : html);
        });
        return;
      }
      res.writeHead(pres.statusCode ?? 502, h);
      pres.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('upgrade', (req, socket, rest) => {
    const up = net.connect(port, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i];
        let v = req.rawHeaders[i + 1];
        if (/^host$/i.test(k)) v = `127.0.0.1:${port}`;
        if (/^origin$/i.test(k)) v = `http://127.0.0.1:${port}`;
        lines.push(`${k}: ${v}`);
      }
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      up.write(rest);
      socket.pipe(up);
      up.pipe(socket);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

// ---------------------------------------------------------------- the browser
const handle = await openBrowser(chromium, {
  profile: PROFILE,
  server: true,
  context: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
  launch: {
    executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps', '--no-first-run', '--no-default-browser-check', '--disable-extensions'],
  },
});
const { browser } = handle;
const browserPid = handle.pid;

/** The GPU process's CPU ticks (utime + stime) now. */
function gpuTicks() {
  const kids = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      kids.set(Number(entry), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone meanwhile
    }
  }
  const stack = [browserPid];
  let ticks = 0;
  while (stack.length > 0) {
    const pid = stack.pop();
    for (const [k, v] of kids) {
      if (v.ppid !== pid) continue;
      stack.push(k);
      if (processType(k) === 'gpu-process') ticks += v.ticks;
    }
  }
  return ticks;
}

async function firstFrame(page) {
  await page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0 || window.benchError !== undefined, MARK, { timeout: 120000, polling: BACK_TO_BACK ? 50 : 20 });
  return page.evaluate((mark) => {
    // The map's bytes: when asked for, the request sent, its answer's first and last byte.
    const map = performance.getEntriesByType('resource').find((e) => /\/map(\.bin)?$/.test(new URL(e.name).pathname));
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      at: performance.getEntriesByName(mark)[0]?.startTime ?? Number.NaN,
      html: nav ? [nav.requestStart, nav.responseEnd] : null,
      map: map ? [map.startTime, map.requestStart, map.responseStart, map.responseEnd] : null,
    };
  }, MARK);
}

const tabs = [];
const token = new URL(loginUrl).search;
let cookies = null;
let wpath = null;
for (const [i, dist] of dists.entries()) {
  const p = await proxy(dist === 'orbit' ? null : dist, bounds.get(i) ?? MAP_IN_PAGE_FLAG);
  const context = await handle.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  if (cookies) {
    await context.addCookies(cookies.map((c) => ({ ...c, domain: '127.0.0.1' })));
    await page.goto(`${p.origin}${wpath}`, { waitUntil: 'commit' });
  } else {
    await page.goto(`${p.origin}/login${token}`, { waitUntil: 'commit' });
    await page.waitForURL(/\/w\//);
    cookies = await context.cookies();
    wpath = new URL(page.url()).pathname;
  }
  await firstFrame(page);
  tabs.push({ name: bounds.has(i) ? `${dist}@${bounds.get(i)}` : dist, page, times: [], gpu: [], errors, server: p.server });
}

let minimalServer = null;
if (flags.get('minimal')) {
  const first = tabs[0].page;
  const wid = wpath.split('/')[2];
  const bytes = Buffer.from(await first.evaluate(async (w) => Array.from(new Uint8Array(await (await fetch(`/w/${w}/map`)).arrayBuffer())), wid));
  const size = await first.evaluate(() => {
    const c = [...document.querySelectorAll('canvas')].sort((a, b) => b.width * b.height - a.width * a.height)[0];
    const r = c.getBoundingClientRect();
    return { w: Math.round(r.width), h: Math.round(r.height) };
  });
  const pages = join(HERE, 'dist');
  minimalServer = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/maps/m.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' }).end(bytes);
      return;
    }
    const f = resolve(pages, `.${u.pathname}`);
    if (!f.startsWith(pages + sep) || !existsSync(f)) {
      res.writeHead(404).end();
      return;
    }
    // Persistent profile: its hashed scripts cached as Orbit's are (see bench.mjs).
    const cached = PROFILE === 'persistent' && u.pathname.startsWith('/assets/');
    res.writeHead(200, { 'content-type': TYPES[extname(f)] ?? 'application/octet-stream', 'cache-control': cached ? 'public, max-age=31536000, immutable' : 'no-store' }).end(readFileSync(f));
  });
  await new Promise((r) => minimalServer.listen(0, '127.0.0.1', r));
  const context = await handle.newContext();
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${minimalServer.address().port}/minimal.html?map=/maps/m.bin&w=${size.w}&h=${size.h}`, { waitUntil: 'commit' });
  await firstFrame(page);
  tabs.push({ name: 'minimal', page, times: [], gpu: [], errors: [] });
}

/** Frames the GPU process drew and swapped between navigation start and the mark, from a trace. */
function framesBeforeMark(file) {
  const events = JSON.parse(readFileSync(file, 'utf8'));
  const list = Array.isArray(events) ? events : events.traceEvents;
  const nav = list.filter((e) => e.name === 'navigationStart').at(-1);
  const mark = list.filter((e) => e.name === MARK && e.ph !== 'M').at(-1);
  if (!nav || !mark) return null;
  const draws = list.filter((e) => e.name === 'Display::DrawAndSwap' && e.ph === 'X' && e.ts >= nav.ts && e.ts <= mark.ts);
  return { frames: draws.length, ms: draws.reduce((s, e) => s + (e.dur ?? 0), 0) / 1000, markMs: (mark.ts - nav.ts) / 1000 };
}

const load0 = loadavg()[0];
const traced = [];
for (let i = 0; i < LOADS; i += 1) {
  for (const [n, tab] of tabs.entries()) {
    await tab.page.bringToFront();
    const trace = tracePrefix && i === LOADS - 1 ? `${tracePrefix}-${n}.json` : null;
    // A persistent context has no `Browser`: its trace is started from the tab's own session.
    let tracing = null;
    if (trace && browser) await browser.startTracing(tab.page, { path: trace, categories: CATEGORIES });
    else if (trace) tracing = await startTrace(tab.page, CATEGORIES);
    if (BACK_TO_BACK) {
      await tab.page.reload({ waitUntil: 'commit' });
      await firstFrame(tab.page);
    }
    const g0 = gpuTicks();
    await tab.page.reload({ waitUntil: 'commit' });
    const got = await firstFrame(tab.page);
    tab.times.push(got.at);
    (tab.net ??= []).push(got);
    tab.gpu.push(gpuTicks() - g0);
    if (trace) {
      await sleep(300);
      if (tracing) await tracing.stop(trace);
      else await browser.stopTracing();
      traced.push([tab.name, framesBeforeMark(trace)]);
    }
    await sleep(SETTLE_MS);
  }
}
const load1 = loadavg()[0];
const ref = median(tabs.at(-1).times);
for (const tab of tabs) {
  const m = median(tab.times);
  console.log(`${tab.name.padEnd(36)} first frame median ${m.toFixed(1)} ms  x${(m / ref).toFixed(3)}  GPU process ${(median(tab.gpu) * 10).toFixed(0)} ms CPU/reload  [${tab.times.map((t) => t.toFixed(0)).join(' ')}]${tab.errors.length ? `  ERRORS ${tab.errors.join('; ')}` : ''}`);
}
for (const tab of tabs) {
  const col = (f) => median(tab.net.map(f).filter((v) => Number.isFinite(v))).toFixed(0);
  console.log(`${tab.name.slice(-36).padEnd(36)} medians (ms from navigation start): HTML requested ${col((n) => n.html?.[0])}, received ${col((n) => n.html?.[1])}; map asked ${col((n) => n.map?.[0])}, sent ${col((n) => n.map?.[1])}, first byte ${col((n) => n.map?.[2])}, received ${col((n) => n.map?.[3])}`);
}
for (const [name, t] of traced) {
  console.log(`traced ${name}: ${t ? `${t.frames} frames drawn and swapped before the mark (${t.ms.toFixed(1)} ms), mark at ${t.markMs.toFixed(0)} ms` : 'no mark in the trace'}`);
}
console.log(`load average ${load0.toFixed(2)} -> ${load1.toFixed(2)}; ${LOADS} reloads per tab, interleaved; browser profile ${PROFILE}`);
await handle.close();
for (const tab of tabs) tab.server?.close();
minimalServer?.close();
child.kill('SIGTERM');
await sleep(500);
rmSync(config, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
process.exit(0);
