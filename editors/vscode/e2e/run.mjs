#!/usr/bin/env node
// Orbit Code in a real VS Code workbench (code-server) and real Chromium,
// driven through the command palette and the webview's accessibility
// contract and `window.orbitInspect`.
//
//   ORBIT_CODE_URL=http://127.0.0.1:PORT/?folder=/path \
//   ORBIT_ARTIFACTS=target/artifacts/vscode \
//   node editors/vscode/e2e/run.mjs <scenario>
//
// Prints one JSON line (`{"scenario", "ok", ...what it saw}`) and exits
// non-zero on failure. Optional: ORBIT_CHROMIUM, ORBIT_PROMPT,
// ORBIT_EXPECT (text the reply shows), ORBIT_TIMEOUT_MS; for `ask`,
// ORBIT_EDIT_PROMPT (then a second prompt whose permission card is
// answered in the webview) and ORBIT_EDIT_EXPECT (its reply's text).
import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

// playwright-core comes with the page's packages (scripts/setup-web).
const require = createRequire(new URL('../../../web/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const SCENARIOS = { ask, untrusted, stop };
const name = process.argv[2];
const url = process.env.ORBIT_CODE_URL;
const artifacts = process.env.ORBIT_ARTIFACTS ?? 'target/artifacts/vscode';
const TIMEOUT = Number(process.env.ORBIT_TIMEOUT_MS ?? 60000);

function finish(result, code) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(code);
}
if (!name || !(name in SCENARIOS)) finish({ scenario: name ?? null, ok: false, error: `one of: ${Object.keys(SCENARIOS).join(', ')}` }, 2);
if (!url) finish({ scenario: name, ok: false, error: 'ORBIT_CODE_URL is not set' }, 2);

await mkdir(artifacts, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--headless=new', '--disable-dev-shm-usage', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const seen = { scenario: name };

async function shot(label) {
  await page.screenshot({ path: join(artifacts, `${name}-${label}.png`) }).catch(() => undefined);
}

async function workbench() {
  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  await page.locator('.statusbar').waitFor({ timeout: TIMEOUT });
}

/** Runs a command by its title through the command palette. */
async function command(title) {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  const deadline = Date.now() + TIMEOUT;
  // The palette lists the commands known when it opened: until the
  // extension's are registered, it is closed and opened again.
  for (;;) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: TIMEOUT });
    await input.fill('>');
    // Typed as a user types: the palette filters on key presses.
    await page.keyboard.type(title.replace(/\u2026$/, ''), { delay: 20 });
    const found = await row.waitFor({ timeout: 5000 }).then(() => true, () => false);
    if (found) break;
    if (Date.now() > deadline) throw new Error(`the palette never listed ${title}`);
    await page.keyboard.press('Escape');
  }
  seen.commands = [...(seen.commands ?? []), (await row.innerText()).split('\n')[0]];
  await page.keyboard.press('Enter');
}

/** Answers Ask Claude…'s input box (its own, not the palette's). */
async function prompt(text) {
  await page.locator('.quick-input-widget .quick-input-message', { hasText: 'Continues the current conversation' }).waitFor({ timeout: TIMEOUT });
  const box = page.locator('.quick-input-widget input');
  await box.click();
  await box.pressSequentially(text, { delay: 10 });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
}

/** The webview's frame with the page in it. */
async function pageFrame() {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const has = await frame.evaluate(() => typeof window.orbitInspect === 'object').catch(() => false);
      if (has) return frame;
    }
    await page.waitForTimeout(250);
  }
  throw new Error('no webview frame with the page');
}

async function until(check, what) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(250);
  }
}

async function ask() {
  await workbench();
  await shot('workbench');
  await command('Orbit Code: Ask Claude\u2026');
  await prompt(process.env.ORBIT_PROMPT ?? 'Hello?');
  await command('Orbit Code: Open');
  const frame = await pageFrame();
  const expected = process.env.ORBIT_EXPECT ?? '';
  seen.reply = await until(async () => {
    const text = await frame.locator('[role="log"]').innerText();
    return text.includes(expected) ? text : null;
  }, 'the reply in the webview');
  seen.trustButtons = await frame.getByRole('button', { name: 'Trust this folder' }).count();
  // The map, its snapshot relayed by the extension (orbit.page.map): drawn
  // once, at the graph's hash, with as many files as the graph.
  const map = await until(async () => {
    const scene = await frame.evaluate(() => window.orbitInspect.scene());
    const graph = await frame.evaluate(() => window.orbitInspect.state().workspace?.graph ?? null);
    return scene.firstFrame && graph && scene.graphHash === graph.hash ? { scene, graph } : null;
  }, 'the map drawn in the webview at the graph\'s hash');
  seen.mapNodes = map.scene.nodes;
  seen.graphFiles = map.graph.files;
  seen.mapError = map.scene.error;
  await shot('map');
  seen.errors = await frame.evaluate(() => window.orbitInspect.errors());
  seen.status = await page.locator('.statusbar-item', { hasText: 'Claude:' }).first().innerText();
  await shot('reply');
  // In the same workbench: a prompt whose edit waits for a permission card,
  // answered in the webview (the test then finds the file changed on disk).
  const editPrompt = process.env.ORBIT_EDIT_PROMPT;
  if (!editPrompt) return;
  await command('Orbit Code: Ask Claude\u2026');
  await prompt(editPrompt);
  const allow = frame.getByRole('region', { name: 'Waiting for you' }).getByRole('button', { name: 'Allow', exact: true });
  await allow.first().waitFor({ timeout: TIMEOUT });
  seen.waitingStatus = await until(async () => {
    const text = await page.locator('.statusbar-item', { hasText: 'Claude:' }).first().innerText();
    return /1 waiting/.test(text) ? text : null;
  }, 'the waiting card in the status bar');
  await shot('card');
  await allow.first().click();
  const edited = process.env.ORBIT_EDIT_EXPECT ?? '';
  seen.editReply = await until(async () => {
    const text = await frame.locator('[role="log"]').innerText();
    return text.includes(edited) ? text : null;
  }, 'the reply after the edit');
  seen.errorsAfterEdit = await frame.evaluate(() => window.orbitInspect.errors());
  await shot('edited');
}

async function stop() {
  await workbench();
  await command('Orbit Code: Ask Claude\u2026');
  await prompt(process.env.ORBIT_PROMPT ?? 'Talk slowly.');
  await until(async () => {
    const text = await page.locator('.statusbar-item', { hasText: 'Claude:' }).first().innerText();
    return /Writing|Thinking/.test(text) ? text : null;
  }, 'a running turn in the status bar');
  await shot('streaming');
  await command('Orbit Code: Stop Claude');
  seen.status = await until(async () => {
    const text = await page.locator('.statusbar-item', { hasText: 'Claude:' }).first().innerText();
    return /Idle/.test(text) ? text : null;
  }, 'the turn to stop');
  await shot('stopped');
}

async function untrusted() {
  await workbench();
  // The workbench asks first; the folder stays untrusted.
  const dont = page.getByRole('button', { name: /No, I don.t trust the authors/ });
  if (await dont.isVisible().catch(() => false)) await dont.click();
  seen.restricted = await until(async () => (await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).count()) > 0, 'Restricted Mode in the status bar');
  await command('Orbit Code: Open');
  const frame = await pageFrame();
  seen.banner = await until(async () => {
    const banner = frame.locator('.banner-trust');
    return (await banner.isVisible()) ? banner.innerText() : null;
  }, 'the trust banner');
  seen.trustButtons = await frame.getByRole('button', { name: 'Trust this folder' }).count();
  await shot('untrusted');
}

try {
  await SCENARIOS[name]();
  await browser.close();
  finish({ ...seen, ok: true }, 0);
} catch (error) {
  await shot('failure');
  await browser.close();
  finish({ ...seen, ok: false, error: String(error?.message ?? error) }, 1);
}
