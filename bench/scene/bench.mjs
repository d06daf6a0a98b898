#!/usr/bin/env node
// The map's benchmark (issue 16): Orbit's page beside sigma.js v4 and a
// minimal WebGL2 page, in one headless Chromium on SwiftShader, on
// workspaces of about 1k, 10k, 50k and 100k files. bench/scene/run sets
// everything up and calls this; see bench/README.md ("Scene").
//
//   node bench/scene/bench.mjs --orbit BIN --workspaces FILE.json [--quick]
//        [--sizes 1000,10000] [--targets orbit,sigma,minimal] [--loads N]
//        [--redraws N] [--idle-seconds S] [--pan-seconds S] [--out DIR]
//        [--before BIN]   another orbit (an earlier build) measured in the same
//                         run, on the same workspace, as the "before" column
//        [--profile otr|persistent]  the browser profile of every page
//                         (profile.mjs): otr (default) a fresh off-the-record
//                         context per page; persistent one normal temporary
//                         profile for all, as a user's browser (V8's code
//                         cache kept), and the baselines' hashed scripts
//                         served cacheable for a year as Orbit serves its own
//
// The table goes to stdout, progress to stderr, everything to
// OUT/results.json (and results-<time>.json).
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { chmodSync, cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as netServer } from 'node:net';
import { tmpdir, loadavg, cpus } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startCpu } from './cpu.mjs';
import { turnPhase } from './turn.mjs';
import { openBrowser, parseProfile } from './profile.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const VIEWPORT = { width: 1280, height: 800 };
const MARK = 'orbit:first-frame';

// ------------------------------------------------------------------ options
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.lastIndexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const quick = argv.includes('--quick');
const options = {
  orbit: opt('orbit', process.env.ORBIT_BIN),
  before: opt('before', process.env.ORBIT_BEFORE_BIN),
  workspaces: opt('workspaces'),
  out: resolve(opt('out', join(HERE, 'out'))),
  sizes: opt('sizes', quick ? '1000,10000' : '1000,10000,50000,100000').split(',').map(Number),
  targets: opt('targets', 'orbit,sigma,minimal').split(','),
  // sigma.js only where the issue compares with it (it takes seconds a frame beyond).
  sigmaSizes: opt('sigma-sizes', '1000,10000').split(',').map(Number),
  loads: Number(opt('loads', quick ? 3 : 4)),
  redraws: Number(opt('redraws', quick ? 5 : 11)),
  idleSeconds: Number(opt('idle-seconds', quick ? 3 : 5)),
  panSeconds: Number(opt('pan-seconds', quick ? 3 : 5)),
  turnSeconds: Number(opt('turn-seconds', quick ? 4 : 8)),
  chromium: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  timeoutMs: Number(opt('timeout-ms', 180000)),
  // Issue 17 adds "turn" (frame times and CPU while a scripted turn animates).
  phases: opt('phases', 'first-frame,redraw,pan,idle,turn').split(','),
  profile: parseProfile(argv),
};
if (!options.orbit || !options.workspaces) {
  console.error('usage: bench.mjs --orbit BIN --workspaces FILE.json (bench/scene/run does both)');
  process.exit(2);
}
for (const phase of options.phases) {
  if (!['first-frame', 'redraw', 'pan', 'idle', 'turn'].includes(phase)) {
    console.error(`unknown phase ${phase}: first-frame, redraw, pan, idle (turn: issue 17)`);
    process.exit(2);
  }
}
const say = (...words) => console.error(`[scene ${new Date().toISOString().slice(11, 19)}]`, ...words);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ the baseline pages' server
const maps = mkdtempSync(join(tmpdir(), 'orbit-scene-maps-'));
const dist = join(HERE, 'dist');
if (!existsSync(join(dist, 'minimal.html'))) {
  console.error(`${dist} has no pages: build them (bench/scene/run does: npx vite build)`);
  process.exit(2);
}
const decoderNote = JSON.parse(readFileSync(join(dist, 'decoder.json'), 'utf8'));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const [base, rel] = url.pathname.startsWith('/maps/') ? [maps, url.pathname.slice(6)] : [dist, url.pathname.slice(1)];
  const file = resolve(base, decodeURIComponent(rel));
  if (req.method !== 'GET' || !file.startsWith(base + sep) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  // Persistent profile: the baselines' hashed scripts and styles cached as Orbit serves its own
  // (`/assets/`, a year, immutable), so each page's scripts may come from the HTTP cache with V8's
  // code cache (whose entry must match the response's time: a `no-store` script never has one).
  const cached = options.profile === 'persistent' && rel.startsWith('assets/');
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': cached ? 'public, max-age=31536000, immutable' : 'no-store' });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const pagesOrigin = `http://127.0.0.1:${server.address().port}`;

async function freePort() {
  const probe = netServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  return port;
}

// ------------------------------------------------------------------ orbit open
/** A real `orbit open DIR --no-browser --port P` with a private 0700 config folder; its login address. */
async function startOrbit(dir, logFile, keepLogs, binary = options.orbit) {
  const config = mkdtempSync(join(tmpdir(), 'orbit-scene-config-'));
  chmodSync(config, 0o700);
  const home = mkdtempSync(join(tmpdir(), 'orbit-scene-home-'));
  const port = await freePort();
  const env = { ...process.env, ORBIT_CONFIG_DIR: config, HOME: home };
  delete env.ORBIT_LOG;
  delete env.XDG_RUNTIME_DIR;
  delete env.XDG_STATE_HOME;
  const child = spawn(binary, ['open', dir, '--no-browser', '--port', String(port)], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.pipe(createWriteStream(logFile));
  const started = performance.now();
  // The first line on stdout is the one-time login address (as open_support.rs reads it).
  const url = await new Promise((resolveUrl, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`orbit open printed no login address in ${options.timeoutMs / 1000} s (see ${logFile})`));
    }, options.timeoutMs);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const nl = buffered.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolveUrl(buffered.slice(0, nl).trim());
      }
    });
    child.on('exit', (code) => reject(new Error(`orbit open exited (${code}) before its login address (see ${logFile})`)));
  });
  if (!url.startsWith(`http://127.0.0.1:${port}/`) || !url.includes('/login?token=')) {
    child.kill('SIGTERM');
    throw new Error(`the first line is not a login address: ${JSON.stringify(url)}`);
  }
  return {
    url,
    startMs: performance.now() - started,
    async stop() {
      child.kill('SIGTERM');
      const ended = await Promise.race([new Promise((r) => child.once('exit', () => r(true))), sleep(15000).then(() => false)]);
      if (!ended) child.kill('SIGKILL');
      // Orbit's own log (tracing) is in its state folder: kept beside the bench's.
      if (existsSync(join(config, 'state', 'logs'))) cpSync(join(config, 'state', 'logs'), keepLogs, { recursive: true });
      rmSync(config, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------ phases
/** Waits for the first-frame mark (or a page's reported failure); its time from navigation start. */
async function firstFrame(page) {
  await page.waitForFunction(
    (mark) => performance.getEntriesByName(mark).length > 0 || window.benchError !== undefined,
    MARK,
    { timeout: options.timeoutMs, polling: 50 },
  );
  const { error, at } = await page.evaluate((mark) => ({ error: window.benchError, at: performance.getEntriesByName(mark)[0]?.startTime }), MARK);
  if (error) throw new Error(error);
  return at;
}

/** `load` navigations (the first given, the others reloads): the first-frame time of each. */
async function firstFrames(page, navigate) {
  const times = [];
  for (let i = 0; i < options.loads; i += 1) {
    if (i === 0) await navigate();
    else await page.reload({ waitUntil: 'commit' });
    times.push(await firstFrame(page));
  }
  return times;
}

async function redraws(page) {
  return page.evaluate(async (n) => {
    const inspect = window.orbitInspect;
    if (!inspect || typeof inspect.sceneRedraw !== 'function') throw new Error('the page has no orbitInspect.sceneRedraw()');
    const times = [];
    // Two warm-up redraws (shader and buffer caches), then n.
    for (let i = 0; i < n + 2; i += 1) {
      const ms = await inspect.sceneRedraw();
      if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new Error(`sceneRedraw() answered ${String(ms)}: no map drawn`);
      times.push(ms);
    }
    return times.slice(2);
  }, options.redraws);
}

/** The map's canvas: the largest one on the page (Orbit's, sigma's stage, the minimal page's). */
async function mapBox(page) {
  const boxes = await page.locator('canvas').evaluateAll((all) =>
    all.map((c) => {
      const r = c.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
  const box = boxes.sort((a, b) => b.width * b.height - a.width * a.height)[0];
  if (!box || box.width < 100) throw new Error('no map canvas on the page');
  return box;
}

/** Scripted drags over the map for `panSeconds`: CPU of every Chromium process meanwhile. */
async function pan(page, browserPid) {
  const box = await mapBox(page);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const r = Math.min(box.width, box.height) / 5;
  const cpu = startCpu(browserPid);
  const end = performance.now() + options.panSeconds * 1000;
  let drags = 0;
  let moves = 0;
  while (performance.now() < end) {
    // One drag: 0.8 s around a circle (a pointer move every ~16 ms), then let go for 0.2 s.
    await page.mouse.move(cx + r, cy);
    await page.mouse.down();
    // Around the circle from where the pointer went down: the map ends each
    // drag about where it started, so it stays in view (drawn, not culled).
    const dragStart = performance.now();
    const dragEnd = Math.min(end, dragStart + 800);
    while (performance.now() < dragEnd) {
      const a = (2 * Math.PI * (performance.now() - dragStart)) / 800;
      await page.mouse.move(cx + r * Math.cos(a), cy + r * Math.sin(a));
      moves += 1;
      await sleep(16);
    }
    // Back to where it went down (a slow page answers few moves a drag).
    await page.mouse.move(cx + r, cy);
    await page.mouse.up();
    drags += 1;
    await sleep(200);
  }
  return { ...cpu.stop(), drags, moves };
}

/**
 * Waits until the page is quiet: two animation frames in a row come within
 * 100 ms (a page still drawing the frames a drag queued, or an inertia
 * animation, does not answer that fast). Returns how long that took.
 */
async function settle(page) {
  const t0 = performance.now();
  for (;;) {
    const frameMs = await page.evaluate(
      () => new Promise((r) => {
        const start = performance.now();
        requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - start)));
      }),
    );
    if (frameMs < 100 || performance.now() - t0 > options.timeoutMs) return performance.now() - t0;
  }
}

/**
 * From one second after the last change (the page quiet after the drags),
 * `idleSeconds` of CPU of every Chromium process.
 */
async function idle(page, browserPid, inspectLoop) {
  const settleMs = await settle(page);
  await sleep(1000);
  const loopBefore = inspectLoop ? await inspectLoop(page) : null;
  const cpu = startCpu(browserPid);
  await sleep(options.idleSeconds * 1000);
  const out = cpu.stop();
  const loopAfter = inspectLoop ? await inspectLoop(page) : null;
  return { ...out, settleMs, loopBefore, loopAfter };
}

/** Issue 17's phase (turn.mjs): effects frame time p50/p95 and CPU while a scripted turn animates, then idle again. */
async function turn(page, browserPid) {
  await settle(page);
  const result = await turnPhase(page, browserPid, { seconds: options.turnSeconds });
  say(`turn: ${result.percent.toFixed(1)}% CPU (${Object.entries(result.byType ?? {}).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}), ${result.frames} effect frames (${result.fps.toFixed(1)}/s), draw p50 ${result.drawP50Ms?.toFixed(1)} p95 ${result.drawP95Ms?.toFixed(1)} ms, asleep ${result.asleepAfterMs} ms after`);
  return result;
}

/** Every phase on one page; `navigate` loads it. */
async function measure(label, page, navigate, browserPid, inspectLoop) {
  const result = {};
  if (options.phases.includes('first-frame')) {
    result.firstFrames = await firstFrames(page, navigate);
    // The first load is apart (Orbit's builds the graph and the layout; a
    // baseline's compiles its scripts): the first frame is the reloads' median.
    // The reloads are in the same tab, whose renderer keeps the scripts and
    // their V8 code cache in its memory cache (any profile, for a script not
    // served `no-store`): seen consumed on the fifth load, the one traced
    // (bench/scene/ab.mjs; bench/README.md, branch `cc`).
    result.coldFirstFrameMs = result.firstFrames[0];
    result.firstFrameMs = median(result.firstFrames.slice(1)) ?? result.coldFirstFrameMs;
    say(`${label}: first frame ${result.firstFrames.map((t) => t.toFixed(0)).join(', ')} ms`);
  } else {
    await navigate();
    await firstFrame(page);
  }
  if (options.phases.includes('redraw')) {
    result.redraws = await redraws(page);
    result.redrawMs = median(result.redraws);
    say(`${label}: full redraw median ${result.redrawMs.toFixed(1)} ms of ${result.redraws.length}`);
  }
  if (options.phases.includes('pan')) {
    result.pan = await pan(page, browserPid);
    say(`${label}: panning ${result.pan.percent.toFixed(1)}% CPU (${result.pan.drags} drags)`);
  }
  if (options.phases.includes('idle')) {
    result.idle = await idle(page, browserPid, inspectLoop);
    say(`${label}: quiet ${result.idle.settleMs.toFixed(0)} ms after the drags, then idle ${result.idle.percent.toFixed(2)}% CPU over ${result.idle.seconds.toFixed(1)} s`);
  }
  if (options.phases.includes('turn') && label.startsWith('orbit')) result.turn = await turn(page, browserPid);
  await page.screenshot({ path: join(options.out, 'shots', `${label.replace(/[^a-z0-9-]+/gi, '-')}.png`) });
  return result;
}

// ------------------------------------------------------------------ the run
mkdirSync(join(options.out, 'shots'), { recursive: true });
mkdirSync(join(options.out, 'logs'), { recursive: true });
const workspaces = JSON.parse(readFileSync(options.workspaces, 'utf8'));
// launchServer (otr) or the persistent profile's browser: its process is the root of the tree the
// CPU sampler sums.
const launch = {
  executablePath: options.chromium,
  headless: true,
  args: [
    '--no-sandbox',
    '--use-angle=swiftshader',
    '--enable-unsafe-swiftshader',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
  ],
};
const handle = await openBrowser(chromium, { profile: options.profile, server: true, launch, context: { viewport: VIEWPORT, deviceScaleFactor: 1 } });
const browserPid = handle.pid;
if (!browserPid) throw new Error('no Chromium process to measure');
const context0 = await handle.newContext();
const probe = await context0.newPage();
const renderer = await probe.evaluate(() => {
  const gl = document.createElement('canvas').getContext('webgl2');
  if (!gl) return null;
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  return gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
});
// A persistent context has no `Browser` to ask.
const version = handle.browser ? handle.browser.version() : (await (await context0.newCDPSession(probe)).send('Browser.getVersion')).product.replace(/^.*\//, '');
await probe.close();
await handle.release(context0);
if (!renderer) throw new Error('Chromium has no WebGL2 here');
say(`Chromium ${version}, WebGL2 on ${renderer}, browser profile ${options.profile}`);

const results = {
  when: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, loadStart: loadavg() },
  chromium: version,
  renderer,
  viewport: VIEWPORT,
  decoder: decoderNote.decoder,
  options: { ...options, orbit: options.orbit },
  sizes: {},
};

/** A page in a fresh off-the-record context (otr) or the one persistent context; `done()` closes it (and an otr context). */
async function newPage() {
  const context = await handle.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(options.timeoutMs);
  const problems = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  const done = async () => {
    await page.close();
    await handle.release(context);
  };
  return { context, page, problems, done };
}

for (const size of options.sizes) {
  try {
    await measureSize(size);
  } catch (error) {
    say(`${size}: FAILED: ${error.message}`);
    results.sizes[size] = { ...(results.sizes[size] ?? {}), error: error.message };
  }
}

async function measureSize(size) {
  const ws = workspaces[String(size)];
  if (!ws) throw new Error(`no workspace of ${size} files in ${options.workspaces}`);
  const row = { workspace: ws, targets: {} };
  results.sizes[size] = row;
  const mapFile = join(maps, `${size}.bin`);
  say(`--- ${size}: ${ws.dir} (${ws.files} files by the corpus count)`);

  // Orbit first: it serves the /map bytes the baselines draw.
  const orbit = await startOrbit(ws.dir, join(options.out, 'logs', `orbit-${size}.stderr`), join(options.out, 'logs', `orbit-${size}`));
  try {
    const { context, page, problems, done } = await newPage();
    const navigate = async () => {
      await page.goto(orbit.url, { waitUntil: 'commit' });
      await firstFrame(page).catch((error) => {
        throw new Error(`Orbit's page drew no first frame: ${error.message}`);
      });
    };
    let wid = null;
    const origin = new URL(orbit.url).origin;
    const fetchMap = async () => {
      wid = new URL(page.url()).pathname.split('/')[2];
      const t0 = performance.now();
      const response = await context.request.get(`${origin}/w/${wid}/map`, { headers: { 'Sec-Fetch-Site': 'same-origin' } });
      const ms = performance.now() - t0;
      return { response, ms };
    };
    if (options.targets.includes('orbit')) {
      let fetched;
      const result = await measure(`orbit-${size}`, page, async () => {
        await navigate();
        fetched = await fetchMap();
      }, browserPid, (p) => p.evaluate(() => window.orbitInspect?.scene?.().loop ?? null));
      result.loginAddressMs = orbit.startMs;
      result.canvas = await mapBox(page);
      row.canvas = { width: Math.round(result.canvas.width), height: Math.round(result.canvas.height) };
      result.scene = await page.evaluate(() => window.orbitInspect?.scene?.() ?? null);
      result.problems = problems;
      row.targets.orbit = result;
      row.map = await saveMap(fetched, mapFile, ws.dir);
    } else {
      await page.goto(orbit.url, { waitUntil: 'load' });
      row.map = await saveMap(await fetchMap(), mapFile, ws.dir);
    }
    await done();
  } finally {
    await orbit.stop();
  }
  say(`${size}: map ${row.map.nodes} nodes, ${row.map.edges} edges, ${(row.map.bytes / 1024).toFixed(0)} KiB (${row.map.source})`);

  // The earlier build (`--before`), on the same workspace, measured the same way.
  if (options.before && options.targets.includes('orbit')) {
    const before = await startOrbit(ws.dir, join(options.out, 'logs', `before-${size}.stderr`), join(options.out, 'logs', `before-${size}`), options.before);
    try {
      const { page, problems, done } = await newPage();
      const result = await measure(`before-${size}`, page, async () => {
        await page.goto(before.url, { waitUntil: 'commit' });
        await firstFrame(page);
      }, browserPid, (p) => p.evaluate(() => window.orbitInspect?.scene?.().loop ?? null));
      result.loginAddressMs = before.startMs;
      result.problems = problems;
      row.targets.before = result;
      await done();
    } finally {
      await before.stop();
    }
  }

  for (const target of ['sigma', 'minimal']) {
    if (!options.targets.includes(target)) continue;
    if (target === 'sigma' && !options.sigmaSizes.includes(size)) continue;
    const { page, problems, done } = await newPage();
    // The same map size as Orbit's canvas (its page shares the window with the HUD).
    const dims = row.canvas ? `&w=${row.canvas.width}&h=${row.canvas.height}` : '';
    const url = `${pagesOrigin}/${target}.html?map=/maps/${size}.bin${dims}`;
    const result = await measure(`${target}-${size}`, page, () => page.goto(url, { waitUntil: 'commit' }), browserPid, null);
    result.problems = problems;
    row.targets[target] = result;
    await done();
  }
}


/** Keeps the /map bytes Orbit served (or, when it has no /map, the stand-in encoder's). */
async function saveMap(fetched, file, dir) {
  const { response, ms } = fetched;
  let bytes = response.status() === 200 ? await response.body() : null;
  let source;
  if (bytes && bytes.length >= 32 && bytes.toString('latin1', 0, 4) === 'ORBM') {
    source = 'orbit';
  } else if (response.status() === 404 || response.status() === 200) {
    say(`orbit answered ${response.status()} without a map to /map: the baselines draw the stand-in encoder's map`);
    execFileSync('python3', [join(HERE, 'encode_map.py'), '--orbit', options.orbit, dir, file], { stdio: 'inherit' });
    bytes = readFileSync(file);
    source = 'stand-in';
  } else {
    throw new Error(`GET /map answered ${response.status()}: ${(await response.text()).slice(0, 200)}`);
  }
  writeFileSync(file, bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { source, bytes: bytes.length, getMs: ms, nodes: view.getUint32(8, true), edges: view.getUint32(12, true), folders: view.getUint32(16, true) };
}

await handle.close();
server.close();
rmSync(maps, { recursive: true, force: true });
results.machine.loadEnd = loadavg();

// ------------------------------------------------------------------ table and goals
const fmt = (v, digits = 0) => (v === null || v === undefined || Number.isNaN(v) ? '-' : Number(v).toFixed(digits));
const ratio = (a, b) => (a === null || a === undefined || !b ? null : a / b);
const METRICS = [
  ['first load (ms, cold)', (t) => t?.coldFirstFrameMs, 0],
  ['first frame (ms, reloads)', (t) => t?.firstFrameMs, 0],
  ['full redraw (ms, median)', (t) => t?.redrawMs, 1],
  ['CPU panning (% of a core)', (t) => t?.pan?.percent, 1],
  ['quiet after drags (ms)', (t) => t?.idle?.settleMs, 0],
  ['CPU idle (% of a core)', (t) => t?.idle?.percent, 2],
  ['CPU Claude turn (% core)', (t) => t?.turn?.percent, 1],
  ['effect frame p50 (ms)', (t) => t?.turn?.drawP50Ms, 2],
  ['effect frame p95 (ms)', (t) => t?.turn?.drawP95Ms, 2],
  ['effect frames per s', (t) => t?.turn?.fps, 1],
];
const lines = [];
const goals = [];
const goal = (what, value, limit, pass) => goals.push({ what, value, limit, pass: value === null || value === undefined ? null : pass });
for (const [size, row] of Object.entries(results.sizes)) {
  if (row.error) {
    lines.push('', `${size} files: FAILED: ${row.error}`);
  }
  if (!row.map) continue;
  const { orbit, sigma, minimal, before } = row.targets;
  lines.push('');
  lines.push(`${size} files (map: ${row.map.nodes} nodes, ${row.map.edges} edges, ${(row.map.bytes / 1048576).toFixed(2)} MiB from ${row.map.source}, GET /map ${fmt(row.map.getMs)} ms; map canvas ${row.canvas ? `${row.canvas.width}x${row.canvas.height}` : 'the window'})`);
  const beforeHead = before ? `${'before'.padStart(10)}${'B/min'.padStart(10)}` : '';
  lines.push(`${'metric'.padEnd(28)}${'Orbit'.padStart(10)}${'sigma'.padStart(10)}${'minimal'.padStart(10)}${'O/sigma'.padStart(10)}${'O/min'.padStart(10)}${beforeHead}`);
  for (const [name, get, digits] of METRICS) {
    const o = get(orbit);
    const s = get(sigma);
    const m = get(minimal);
    const b = before ? `${fmt(get(before), digits).padStart(10)}${fmt(ratio(get(before), m), 3).padStart(10)}` : '';
    lines.push(`${name.padEnd(28)}${fmt(o, digits).padStart(10)}${fmt(s, digits).padStart(10)}${fmt(m, digits).padStart(10)}${fmt(ratio(o, s), 3).padStart(10)}${fmt(ratio(o, m), 3).padStart(10)}${b}`);
  }
  const n = Number(size);
  if (sigma) {
    goal(`${size}: first frame <= 1/5 of sigma's`, ratio(orbit?.firstFrameMs, sigma.firstFrameMs), 0.2, ratio(orbit?.firstFrameMs, sigma.firstFrameMs) <= 0.2);
    goal(`${size}: full redraw <= 1/5 of sigma's`, ratio(orbit?.redrawMs, sigma.redrawMs), 0.2, ratio(orbit?.redrawMs, sigma.redrawMs) <= 0.2);
  }
  if (minimal) {
    goal(`${size}: first frame no slower than minimal`, ratio(orbit?.firstFrameMs, minimal.firstFrameMs), 1, ratio(orbit?.firstFrameMs, minimal.firstFrameMs) <= 1);
    goal(`${size}: full redraw no slower than minimal`, ratio(orbit?.redrawMs, minimal.redrawMs), 1, ratio(orbit?.redrawMs, minimal.redrawMs) <= 1);
  }
  if (n === 10000) {
    goal(`${size}: first frame <= 1000 ms`, orbit?.firstFrameMs, 1000, orbit?.firstFrameMs <= 1000);
    goal(`${size}: full redraw <= 25 ms`, orbit?.redrawMs, 25, orbit?.redrawMs <= 25);
  }
  if (n === 100000) {
    goal(`${size}: first frame <= 3000 ms`, orbit?.firstFrameMs, 3000, orbit?.firstFrameMs <= 3000);
    goal(`${size}: full redraw <= 150 ms`, orbit?.redrawMs, 150, orbit?.redrawMs <= 150);
  }
  goal(`${size}: idle CPU < 1% from 1 s after the last change`, orbit?.idle?.percent, 1, orbit?.idle?.percent < 1);
  if (orbit?.turn) {
    // Issue 17: against the idle map of the same run.
    lines.push(`Claude turn: CPU ${fmt(orbit.turn.percent, 1)}% vs idle ${fmt(orbit.idle?.percent, 2)}% (ratio ${fmt(ratio(orbit.turn.percent, orbit.idle?.percent), 1)}), effect frame p50 ${fmt(orbit.turn.drawP50Ms, 2)} / p95 ${fmt(orbit.turn.drawP95Ms, 2)} ms, ${fmt(orbit.turn.fps, 1)} frames/s, asleep ${fmt(orbit.turn.asleepAfterMs)} ms after`);
    if (n === 100000) goal(`${size}: CPU < 25% while a turn animates`, orbit.turn.percent, 25, orbit.turn.percent < 25);
    goal(`${size}: effect frame p95 < 33 ms`, orbit.turn.drawP95Ms, 33, orbit.turn.drawP95Ms < 33);
  }
}
lines.push('');
lines.push('goals (Orbit)');
for (const g of goals) {
  const verdict = g.pass === null ? 'NOT MEASURED' : g.pass ? 'PASS' : 'FAIL';
  lines.push(`  ${g.what.padEnd(56)}${fmt(g.value, g.limit < 5 ? 3 : 1).padStart(10)}  (limit ${g.limit})  ${verdict}`);
}
results.goals = goals;
results.table = lines;
const stamp = results.when.replace(/[:.]/g, '-');
writeFileSync(join(options.out, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
writeFileSync(join(options.out, `results-${stamp}.json`), `${JSON.stringify(results, null, 1)}\n`);
process.stdout.write(`map benchmark: Chromium ${results.chromium} (${renderer}), ${VIEWPORT.width}x${VIEWPORT.height}, decoder: ${results.decoder}, browser profile: ${options.profile}\n`);
process.stdout.write(`${lines.join('\n')}\n`);
say(`results in ${join(options.out, 'results.json')}`);
