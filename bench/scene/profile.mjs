// The benches' browser profile (`--profile otr|persistent`), shared by the
// page's benchmark (bench/page/) and the map's (bench/scene/):
//
//   otr         (the default) Playwright's `browser.newContext()`: an
//               off-the-record context, as the benches always ran. Chromium
//               keeps no V8 code cache there: every load compiles the page's
//               scripts from source.
//   persistent  `chromium.launchPersistentContext(<fresh 0700 temp dir>)`:
//               a normal (temporary) profile, as a user's browser or plain
//               `chromium --headless`; every page of the run in its one
//               context; the folder removed at the end. After a script has
//               been seen, V8's code cache comes with it on the next loads
//               (for a script served cacheable: from the HTTP cache, with
//               the response time its cache entry was made for).
//
// Every page of a run (the page, its baselines, `--before`) gets the same
// kind, so a comparison stays fair.
//
// ORBIT_CHROMIUM_DISABLE_FEATURES=A,B (for a diagnosis) turns Chromium
// features off, added to Playwright's own `--disable-features` list (Chromium
// keeps only the last such switch, so a second one would turn Playwright's
// back on): e.g. `BackgroundResourceFetch`, without which Chromium 156 gives
// module scripts their code cache (bench/README.md, branch `cc`). Playwright's `chromium` object is passed
// in: the page's bench resolves it from web/node_modules, the scene's from
// its own.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROFILES = ['otr', 'persistent'];

/** `value` if it names a profile; throws otherwise (what the flag was given is in the message). */
export function profileOf(value) {
  if (!PROFILES.includes(value)) throw new Error(`--profile takes ${PROFILES.join(' or ')}, not ${value === undefined ? 'nothing' : JSON.stringify(value)}`);
  return value;
}

/**
 * The profile `argv` asks for with `--profile otr|persistent` (the last one
 * given wins), `otr` without one. With `bare: true` (`trace-load.mjs`, whose
 * bare `--profile` has meant V8's CPU profiler since before this flag), a
 * `--profile` not followed by a profile's name is not this flag.
 */
export function parseProfile(argv, { bare = false } = {}) {
  for (let i = argv.length - 1; i >= 0; i -= 1) {
    if (argv[i] !== '--profile') continue;
    if (bare && !PROFILES.includes(argv[i + 1])) continue;
    return profileOf(argv[i + 1]);
  }
  return 'otr';
}

/** The pid of the Chromium whose command line holds `--user-data-dir=<dir>` (its browser process: no `--type=`), or null. */
export function browserPidOf(dir) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (args.includes(`--user-data-dir=${dir}`) && !args.some((a) => a.startsWith('--type='))) return Number(entry);
  }
  return null;
}

/**
 * Opens Chromium with `launch` (executablePath, headless, args) in `profile`.
 * `context` holds the contexts' options (viewport, deviceScaleFactor).
 * `server: true` (the scene's benches) starts an `otr` browser with
 * `launchServer` so its process is known for the CPU sampler; a persistent
 * one's is found by its profile folder.
 *
 * Returns `{ profile, browser, pid, newContext(), release(context), close() }`:
 * `newContext()` is a fresh off-the-record context (otr) or the one
 * persistent context; `release(context)` closes the former and leaves the
 * latter (close the pages instead); `browser` is null when persistent
 * (Playwright gives a persistent context no `Browser`).
 */
export async function openBrowser(chromium, { profile, launch: given, context = {}, server = false }) {
  const launch = await withFeaturesOff(chromium, given, (process.env.ORBIT_CHROMIUM_DISABLE_FEATURES ?? '').split(',').filter(Boolean));
  if (profileOf(profile) === 'otr') {
    const browserServer = server ? await chromium.launchServer(launch) : null;
    const browser = browserServer ? await chromium.connect(browserServer.wsEndpoint()) : await chromium.launch(launch);
    return {
      profile,
      browser,
      pid: browserServer?.process().pid ?? null,
      newContext: (extra = {}) => browser.newContext({ ...context, ...extra }),
      release: (ctx) => ctx.close(),
      async close() {
        await browser.close();
        await browserServer?.close();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'orbit-bench-profile-'));
  chmodSync(dir, 0o700);
  let persistent;
  try {
    persistent = await chromium.launchPersistentContext(dir, { ...launch, ...context });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // The tab a persistent context opens with: not one of the bench's.
  for (const page of persistent.pages()) await page.close();
  return {
    profile,
    browser: null,
    pid: browserPidOf(dir),
    dir,
    newContext: async () => persistent,
    release: async () => {},
    async close() {
      await persistent.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Playwright's `--disable-features=` switch for `launch`, read from a Chromium launched once for it (Playwright does not export it). */
async function playwrightDisabledFeatures(chromium, launch) {
  const probe = await chromium.launchServer(launch);
  try {
    const args = readFileSync(`/proc/${probe.process().pid}/cmdline`, 'utf8').split('\0');
    return args.find((a) => a.startsWith('--disable-features=')) ?? null;
  } finally {
    await probe.close();
  }
}

/** `launch` with `features` turned off as well as Playwright's own list (one `--disable-features` switch). */
async function withFeaturesOff(chromium, launch, features) {
  if (features.length === 0) return launch;
  const own = await playwrightDisabledFeatures(chromium, launch);
  const list = [...(own ? own.slice('--disable-features='.length).split(',') : []), ...features].filter(Boolean);
  return { ...launch, ignoreDefaultArgs: own ? [own] : [], args: [...(launch.args ?? []), `--disable-features=${list.join(',')}`] };
}

/**
 * Starts Chromium's trace (whole browser) with `categories` from `page`'s
 * own DevTools session (works in both profiles; a persistent context has no
 * `Browser` for `browser.startTracing`); `stop(path)` ends it and writes
 * `{ traceEvents }` to `path`, returning the events.
 */
export async function startTrace(page, categories) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => { events.push(...value); });
  const complete = new Promise((resolve) => { cdp.once('Tracing.tracingComplete', resolve); });
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: categories, recordMode: 'recordAsMuchAsPossible' }, transferMode: 'ReportEvents' });
  return {
    async stop(path) {
      await cdp.send('Tracing.end');
      await complete;
      await cdp.detach().catch(() => {});
      if (path) writeFileSync(path, JSON.stringify({ traceEvents: events }));
      return events;
    },
  };
}

/**
 * V8's compiles of the scripts whose URL matches `url` in a trace's events:
 * per compile, its event name, thread, duration and what the trace says of
 * a code cache (`consumedCacheSize`, `cacheConsumeOptions`, `cacheRejected`,
 * `producedCacheSize`, `notCachedReason`, ...), for showing whether a load's
 * compile took V8's cached code.
 */
export function compilesOf(events, url) {
  const threads = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args?.name);
  const out = [];
  for (const e of events) {
    if (!/compile|Cache|deserialize/i.test(e.name) || e.ph === 'M') continue;
    const data = e.args?.data ?? e.args ?? {};
    const at = String(data.url ?? data.fileName ?? e.args?.fileName ?? '');
    if (!url.test(at)) continue;
    const cache = Object.fromEntries(Object.entries(data).filter(([k]) => /cache|Cache|consume|produce|eager|streamed|notStreamedReason/.test(k)));
    out.push({ name: e.name, thread: threads.get(`${e.pid}:${e.tid}`) ?? `${e.pid}:${e.tid}`, ms: (e.dur ?? 0) / 1000, url: at.replace(/^.*\//, ''), ts: e.ts, ...cache });
  }
  return out.sort((a, b) => a.ts - b.ts);
}
