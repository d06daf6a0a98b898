// node --test bench/scene/test/: the benches' browser profile (profile.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserPidOf, compilesOf, openBrowser, parseProfile, profileOf } from '../profile.mjs';

test('--profile: otr without it, the value given, the last one winning', () => {
  assert.equal(parseProfile([]), 'otr');
  assert.equal(parseProfile(['--runs', '9']), 'otr');
  assert.equal(parseProfile(['--profile', 'persistent']), 'persistent');
  assert.equal(parseProfile(['--runs', '9', '--profile', 'otr']), 'otr');
  assert.equal(parseProfile(['--profile', 'otr', '--sizes', '1000', '--profile', 'persistent']), 'persistent');
});

test('--profile with anything but otr or persistent is refused, naming what it got', () => {
  assert.throws(() => parseProfile(['--profile']), /otr or persistent, not nothing/);
  assert.throws(() => parseProfile(['--profile', 'incognito']), /not "incognito"/);
  assert.throws(() => parseProfile(['--profile', '--runs', '9']), /not "--runs"/);
  assert.throws(() => profileOf(undefined), /not nothing/);
  assert.equal(profileOf('persistent'), 'persistent');
});

test("bare: a --profile not followed by a profile's name is another flag (trace-load.mjs's CPU profiler)", () => {
  assert.equal(parseProfile(['--profile'], { bare: true }), 'otr');
  assert.equal(parseProfile(['--profile', '--warm', '3'], { bare: true }), 'otr');
  assert.equal(parseProfile(['--profile', '--profile', 'persistent'], { bare: true }), 'persistent');
  assert.equal(parseProfile(['--profile', 'persistent', '--profile'], { bare: true }), 'persistent');
});

test("the browser process is found by its profile folder, not a child's (--type=) nor another folder's", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-test-'));
  const sleeper = (...extra) => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)', '--', `--user-data-dir=${dir}`, ...extra]);
  const child = sleeper('--type=renderer');
  const browser = sleeper();
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)', '--', `--user-data-dir=${dir}-other`]);
  try {
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(browserPidOf(dir), browser.pid);
    assert.equal(browserPidOf(join(dir, 'none')), null);
  } finally {
    for (const p of [child, browser, other]) p.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a trace's compiles of one script, with what they say of V8's code cache", () => {
  const events = [
    { ph: 'M', name: 'thread_name', pid: 1, tid: 2, args: { name: 'CrRendererMain' } },
    { ph: 'X', name: 'v8.compile', pid: 1, tid: 2, ts: 20, dur: 300, args: { data: { url: 'http://127.0.0.1:5/assets/index-x.js', consumedCacheSize: 647448, cacheRejected: false, cacheKind: 'normal', notStreamedReason: 'script has code-cache available (background)', lineNumber: 1 } } },
    { ph: 'X', name: 'v8.compileModule', pid: 1, tid: 2, ts: 10, dur: 100, args: { data: { url: 'http://127.0.0.1:5/assets/index-x.js', streamed: true } } },
    { ph: 'X', name: 'v8.compile', pid: 1, tid: 2, ts: 30, dur: 100, args: { data: { url: 'http://127.0.0.1:6/other.js' } } },
    { ph: 'X', name: 'Layout', pid: 1, tid: 2, ts: 40, dur: 100, args: { data: { url: 'http://127.0.0.1:5/assets/index-x.js' } } },
  ];
  const got = compilesOf(events, /\/assets\/.*\.js$/);
  assert.deepEqual(got.map((c) => c.name), ['v8.compileModule', 'v8.compile']);
  assert.equal(got[0].streamed, true);
  assert.equal(got[0].thread, 'CrRendererMain');
  assert.equal(got[1].consumedCacheSize, 647448);
  assert.equal(got[1].cacheRejected, false);
  assert.equal(got[1].url, 'index-x.js');
  assert.equal(got[1].ms, 0.3);
  assert.equal(got[1].lineNumber, undefined);
});

// A real Chromium (Debian's, as the benches use), when there is one.
const CHROMIUM = process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium';
test('persistent: one context in a fresh 0700 folder, its browser process known, the folder gone at the end', { skip: !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}` }, async () => {
  const { chromium } = await import('playwright-core');
  const handle = await openBrowser(chromium, {
    profile: 'persistent',
    launch: { executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'] },
    context: { viewport: { width: 640, height: 480 } },
  });
  try {
    assert.equal(handle.browser, null);
    assert.equal(statSync(handle.dir).mode & 0o777, 0o700);
    assert.ok(handle.pid > 0, 'the browser process is found');
    const a = await handle.newContext();
    const b = await handle.newContext();
    assert.equal(a, b, 'every page in the one context');
    assert.equal(a.pages().length, 0, 'the opening tab is closed');
    const page = await a.newPage();
    assert.deepEqual(await page.evaluate(() => [innerWidth, innerHeight]), [640, 480]);
    await page.close();
    await handle.release(a);
    assert.equal(a.pages().length, 0);
  } finally {
    await handle.close();
  }
  assert.ok(!existsSync(handle.dir), 'the profile folder is removed');
});

test('otr: a fresh off-the-record context each time', { skip: !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}` }, async () => {
  const { chromium } = await import('playwright-core');
  const handle = await openBrowser(chromium, {
    profile: 'otr',
    server: true,
    launch: { executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'] },
  });
  try {
    assert.ok(handle.browser);
    assert.ok(handle.pid > 0);
    const a = await handle.newContext();
    const b = await handle.newContext();
    assert.notEqual(a, b);
    await handle.release(a);
    await handle.release(b);
    assert.equal(handle.browser.contexts().length, 0);
  } finally {
    await handle.close();
  }
});

test("ORBIT_CHROMIUM_DISABLE_FEATURES: added to Playwright's own --disable-features, in one switch", { skip: !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}` }, async () => {
  const { chromium } = await import('playwright-core');
  process.env.ORBIT_CHROMIUM_DISABLE_FEATURES = 'BackgroundResourceFetch';
  let handle;
  try {
    handle = await openBrowser(chromium, { profile: 'otr', server: true, launch: { executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--headless=new', '--disable-gpu'] } });
  } finally {
    delete process.env.ORBIT_CHROMIUM_DISABLE_FEATURES;
  }
  try {
    const { readFileSync } = await import('node:fs');
    const args = readFileSync(`/proc/${handle.pid}/cmdline`, 'utf8').split('\0');
    const switches = args.filter((a) => a.startsWith('--disable-features='));
    assert.equal(switches.length, 1, switches.join(' '));
    const features = switches[0].slice('--disable-features='.length).split(',');
    assert.ok(features.includes('BackgroundResourceFetch'));
    assert.ok(features.includes('PaintHolding'), "Playwright's own list is kept");
  } finally {
    await handle.close();
  }
});
