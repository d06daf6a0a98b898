#!/usr/bin/env node
// The page in a VS Code webview against the same page in a plain Chromium
// tab, in the same run, against the same running Orbit:
//
//   webview  **Orbit Code: Open** run in a real workbench (code-server from
//            npm, `scripts/setup-vscode`, with the packaged `.vsix`) until
//            the webview's page has painted and shows the workspace,
//            connected through the extension host's relay
//   tab      the page's own address opened in a new Chromium tab (the
//            login, the redirect, the WebSocket) until the same
//
// "Painted and shows the workspace": the page's first contentful paint has
// happened and `window.orbitInspect.state()` holds the workspace with the
// connection open. Each figure is a median of N runs; a run of the webview
// closes the panel first (the extension is active by then: the clock starts
// at the command, as the panel opens on activation with `orbit.openOnStartup`).
// Goal: webview at most 1.5x the tab.
//
//   npm --prefix editors/vscode run package && node bench/vscode/paint.mjs [--runs N]
//   (ORBIT_BIN: the orbit to run; default target/release/orbit, else target/debug/orbit)
//
// Prints a table to stderr and one JSON line to stdout.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] ?? 0) || 5;
const TIMEOUT = 90000;

const orbitBin =
  process.env.ORBIT_BIN ??
  [join(repo, 'target/release/orbit'), join(repo, 'target/debug/orbit')].find((p) => existsSync(p));
const vsix = join(repo, 'target/artifacts/vscode/orbit-code.vsix');
if (!orbitBin || !existsSync(vsix)) {
  console.error('paint bench: needs an orbit binary (ORBIT_BIN) and the .vsix (npm --prefix editors/vscode run package)');
  process.exit(1);
}
const codeServer = execFileSync(join(repo, 'scripts/setup-vscode'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
const { chromium } = createRequire(join(repo, 'web/package.json'))('playwright-core');

const scratch = mkdtempSync(join(tmpdir(), 'orbit-paint-bench-'));
const config = join(scratch, 'config');
const ws = join(scratch, 'ws');
const user = join(scratch, 'user');
for (const dir of [config, ws, join(ws, 'src'), join(user, 'User')]) mkdirSync(dir, { recursive: true });
chmodSync(config, 0o700);
for (let i = 0; i < 40; i += 1) writeFileSync(join(ws, 'src', `m${i}.py`), `import os\nfrom . import m${(i + 1) % 40}\n`);
writeFileSync(
  join(user, 'User/settings.json'),
  JSON.stringify({
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  }),
);
const env = { ...process.env, ORBIT_CONFIG_DIR: config, HOME: scratch };
delete env.XDG_RUNTIME_DIR;
delete env.ORBIT_LOG;
const children = [];
const cleanup = () => {
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
  }
  rmSync(scratch, { recursive: true, force: true });
};

const orbit = spawn(orbitBin, ['open', '--no-browser', ws], { env, cwd: ws, stdio: ['ignore', 'pipe', 'ignore'], detached: true });
children.push(orbit);
// Its first line is a login address (not used: each tab run gets a fresh one).
await new Promise((resolve) => createInterface({ input: orbit.stdout }).once('line', resolve));

const bin = join(codeServer, 'node_modules/.bin');
const codeEnv = { ...env, PATH: `${bin}:${dirname(orbitBin)}:${process.env.PATH ?? ''}` };
const codeArgs = ['--user-data-dir', user, '--extensions-dir', join(scratch, 'extensions')];
execFileSync(join(bin, 'code-server'), [...codeArgs, '--install-extension', vsix], { env: codeEnv, stdio: 'ignore' });
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = probe.address();
    probe.close(() => resolve(p));
  });
});
const code = spawn(
  join(bin, 'code-server'),
  [...codeArgs, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', ws],
  { env: codeEnv, stdio: 'ignore', detached: true },
);
children.push(code);

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--disable-dev-shm-usage', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});

/** In a frame: waits until the page painted and shows the workspace, connected; the time then (epoch ms). */
function shown(frame) {
  return frame.evaluate(
    (timeout) =>
      new Promise((resolve, reject) => {
        const deadline = performance.now() + timeout;
        const check = () => {
          const st = window.orbitInspect?.state();
          const painted = performance.getEntriesByName('first-contentful-paint').length > 0;
          if (painted && st?.connection === 'open' && st.workspace) {
            resolve({ at: performance.timeOrigin + performance.now(), fcp: performance.timeOrigin + performance.getEntriesByName('first-contentful-paint')[0].startTime });
          } else if (performance.now() > deadline) reject(new Error('never shown'));
          else requestAnimationFrame(check);
        };
        check();
      }),
    TIMEOUT,
  );
}

/** A fresh one-time login address (`orbit.open` on the control socket). */
function freshLogin() {
  return new Promise((resolve, reject) => {
    const socket = connect(join(config, 'run', 'control.sock'));
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      socket.destroy();
      const answer = JSON.parse(buffer.slice(0, nl));
      if (answer.result?.url) resolve(answer.result.url);
      else reject(new Error(`orbit.open: ${JSON.stringify(answer)}`));
    });
    socket.on('error', reject);
    socket.write(`${JSON.stringify({ id: 1, method: 'orbit.open', params: { dir: ws } })}\n`);
  });
}

async function tabRun() {
  // A new browser context each time: no cookie, the login as a user's first.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const address = await freshLogin();
  const t0 = await page.evaluate(() => performance.timeOrigin + performance.now());
  await page.goto(address);
  const done = await shown(page.mainFrame());
  await context.close();
  return { total: done.at - t0, fcp: done.fcp - t0 };
}

async function pageFrame(page) {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (await frame.evaluate(() => typeof window.orbitInspect === 'object').catch(() => false)) return frame;
    }
    await page.waitForTimeout(5);
  }
  throw new Error('no webview frame with the page');
}

async function command(page, title) {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  for (;;) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: TIMEOUT });
    await input.fill('>');
    // Typed as a user types: the palette filters on key presses.
    await page.keyboard.type(title, { delay: 5 });
    if (await row.waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
    await page.keyboard.press('Escape');
  }
  return row;
}

async function webviewRun(page) {
  const open = await command(page, 'Orbit Code: Open');
  const t0 = await page.evaluate(() => performance.timeOrigin + performance.now());
  await open.click();
  const frame = await pageFrame(page);
  const done = await shown(frame);
  // Closes the panel for the next run.
  await (await command(page, 'View: Close All Editors')).click();
  await page.waitForFunction(() => !document.querySelector('iframe.webview'), null, { timeout: TIMEOUT }).catch(() => undefined);
  return { total: done.at - t0, fcp: done.fcp - t0 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  const workbench = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const ok = await workbench.goto(`http://127.0.0.1:${port}/?folder=${ws}`).then(() => true, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('code-server never answered');
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await workbench.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  await workbench.locator('.statusbar-item', { hasText: 'Claude:' }).first().waitFor({ timeout: TIMEOUT });
  // One of each first, not counted (the caches of both warm alike).
  await webviewRun(workbench);
  await tabRun();
  const times = { webview: [], tab: [], webviewFcp: [], tabFcp: [] };
  for (let i = 0; i < RUNS; i += 1) {
    const w = await webviewRun(workbench);
    const t = await tabRun();
    times.webview.push(w.total);
    times.webviewFcp.push(w.fcp);
    times.tab.push(t.total);
    times.tabFcp.push(t.fcp);
  }
  const result = {
    runs: RUNS,
    orbit: orbitBin,
    webviewMs: median(times.webview),
    tabMs: median(times.tab),
    webviewFcpMs: median(times.webviewFcp),
    tabFcpMs: median(times.tabFcp),
  };
  result.ratio = result.webviewMs / result.tabMs;
  result.goalMet = result.ratio <= 1.5;
  const ms = (x) => `${x.toFixed(0)} ms`;
  console.error(`open to painted and connected (median of ${RUNS})`);
  console.error(`  plain Chromium tab  ${ms(result.tabMs)} (first paint ${ms(result.tabFcpMs)})`);
  console.error(`  VS Code webview     ${ms(result.webviewMs)} (first paint ${ms(result.webviewFcpMs)})`);
  console.error(`  ratio               ${result.ratio.toFixed(2)}x (goal at most 1.5x: ${result.goalMet ? 'met' : 'NOT met'})`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await browser.close();
} catch (error) {
  console.error(`paint bench: ${error?.message ?? error}`);
  for (const page of browser.contexts().flatMap((c) => c.pages())) {
    const notes = await page.locator('.notification-list-item').allInnerTexts().catch(() => []);
    if (notes.length) console.error(`notifications: ${notes.join(' | ')}`);
  }
  if (process.env.ORBIT_ARTIFACTS) {
    for (const [i, page] of browser.contexts().flatMap((c) => c.pages()).entries()) {
      await page.screenshot({ path: join(process.env.ORBIT_ARTIFACTS, `paint-failure-${i}.png`) }).catch(() => undefined);
    }
  }
  await browser.close();
  cleanup();
  process.exit(1);
}
cleanup();
