#!/usr/bin/env node
// The page's end-to-end scenarios in real Chromium, driven through
// accessible roles and names and `window.orbitInspect`.
//
//   ORBIT_LOGIN_URL=http://127.0.0.1:PORT/login?token=… \
//   ORBIT_ARTIFACTS=target/artifacts/page \
//   node web/e2e/run.mjs <scenario>
//
// Prints one JSON line (`{"scenario", "ok", ...what it saw}`) and exits
// non-zero on failure. Screenshots, one per state, go to ORBIT_ARTIFACTS.
// Optional: ORBIT_CHROMIUM (default /usr/bin/chromium), ORBIT_PROMPT (the
// prompt to type; the fake Messages API's script decides the reply),
// ORBIT_TIMEOUT_MS (per wait, default 30000), ORBIT_DROP_URL (for `drop`:
// a URL whose GET makes the server drop the page's socket; without it the
// scenario writes `<ORBIT_ARTIFACTS>/drop.ready` and waits for the harness
// to drop the socket), ORBIT_WORKSPACE (for `scene-live`: the workspace's
// folder, where it creates and deletes a file; for `file-panel-live`, where it
// edits the file the panel shows).
import { chromium } from 'playwright-core';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { CLAUDE_MAP_SCENARIOS } from './claude-map.mjs';
import { PANEL_SCENARIOS, panelScenarios } from './panels.mjs';
import { WATCHED_SCENARIOS } from './watched.mjs';
import { LAYOUT_SCENARIOS } from './layout.mjs';

const SCENARIOS = {
  prompt,
  allow,
  always,
  deny,
  'questions-answer': questionsAnswer,
  'questions-skip': questionsSkip,
  stop,
  'reload-pending': reloadPending,
  drop,
  trust,
  security,
  keypad,
  notify,
  'two-tabs': twoTabs,
  'notify-tabs-close': notifyTabsClose,
  'answer-through-drops': answerThroughDrops,
  'restart-outbox': restartOutbox,
  'open-card': openCard,
  search,
  'long-session': longSession,
  'scene-map': sceneMap,
  'scene-live': sceneLive,
  'scene-search': sceneSearch,
  'scene-context': sceneContext,
  'file-panel-live': filePanelLive,
  // Claude on the map (e2e/claude-map.mjs), given this file's helpers.
  ...Object.fromEntries(Object.entries(CLAUDE_MAP_SCENARIOS).map(([n, f]) => [n, (page, context) => f(kit(), page, context)])),
  // Terminal sessions watched through Orbit's hooks (e2e/watched.mjs).
  ...Object.fromEntries(Object.entries(WATCHED_SCENARIOS).map(([n, f]) => [n, (page, context) => f(kit(), page, context)])),
  // The layout a user's pass found wanting (e2e/layout.mjs).
  ...Object.fromEntries(Object.entries(LAYOUT_SCENARIOS).map(([n, f]) => [n, (page, context) => f(kit(), page, context)])),
  // The panels (issue 20), in panels.mjs.
  ...Object.fromEntries(PANEL_SCENARIOS.map((scenario) => [
    scenario,
    (page, context) => panelScenarios({ until, shot, ask, origin, timeout: TIMEOUT })[scenario](page, context),
  ])),
};

const name = process.argv[2];
const loginUrl = process.env.ORBIT_LOGIN_URL;
const artifacts = process.env.ORBIT_ARTIFACTS ?? 'e2e/artifacts';
const TIMEOUT = Number(process.env.ORBIT_TIMEOUT_MS ?? 30000);

function finish(result, code) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(code);
}

if (!name || !(name in SCENARIOS)) {
  finish({ scenario: name ?? null, ok: false, error: `unknown scenario; one of: ${Object.keys(SCENARIOS).join(', ')}` }, 2);
}
if (!loginUrl) finish({ scenario: name, ok: false, error: 'ORBIT_LOGIN_URL is not set' }, 2);

const origin = new URL(loginUrl).origin;
const port = new URL(loginUrl).port;

const browser = await chromium.launch({
  executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--headless=new',
    // WebGL2 for the map, on the CPU (SwiftShader) as on a machine without a GPU.
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
    // For the DNS-rebinding check: another name for the loopback address.
    '--host-resolver-rules=MAP rebind.test 127.0.0.1',
  ],
}).catch((error) => finish({ scenario: name, ok: false, error: `Chromium did not start: ${String(error?.message ?? error).split('\n')[0]}` }, 1));

let shotCount = 0;
const problems = [];

async function newPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return page;
}

async function shot(page, state) {
  shotCount += 1;
  await mkdir(artifacts, { recursive: true });
  const file = join(artifacts, `${name}-${String(shotCount).padStart(2, '0')}-${state}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

const inspect = (page) => page.evaluate(() => window.orbitInspect.state());

/** Polls the page's state until `predicate` holds; returns that state. */
async function until(page, what, predicate, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await inspect(page).catch(() => null);
    if (last && predicate(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; state: ${JSON.stringify(summary(last))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function summary(state) {
  if (!state) return null;
  return {
    connection: state.connection,
    connects: state.connects,
    lastSeq: state.lastSeq,
    ready: state.ready,
    current: state.current,
    shown: state.shown,
    phases: Object.fromEntries(Object.entries(state.sessions ?? {}).map(([k, s]) => [k, s.phase])),
    transcripts: Object.fromEntries(Object.entries(state.transcripts ?? {}).map(([k, t]) => [k, t.kinds])),
    pending: state.pending,
    notices: state.notices,
  };
}

const shownSession = (s) => (s.shown ? s.sessions[s.shown] : undefined);
const shownKinds = (s) => (s.shown ? (s.transcripts[s.shown]?.kinds ?? []) : []);
const turnEnded = (s) => {
  const session = shownSession(s);
  return session !== undefined && session.turns > 0 && (session.phase === 'idle' || session.phase === 'failed') && shownKinds(s).includes('turnEnd');
};
const pendingCards = (s) => shownSession(s)?.pending ?? [];

async function open(context) {
  // Counts the page's requests for permission to notify (issue 15: asked at a moment that makes sense, never on load).
  await context.addInitScript(() => {
    window.__orbitPermissionAsks = 0;
    if (typeof Notification === 'undefined') return;
    const real = Notification.requestPermission.bind(Notification);
    Notification.requestPermission = (...args) => {
      window.__orbitPermissionAsks += 1;
      return real(...args);
    };
  });
  const page = await newPage(context);
  const response = await page.goto(loginUrl);
  if (!response || response.status() >= 400) throw new Error(`the login address answered ${response?.status()}`);
  await until(page, 'the page to be connected and whole', (s) => s.connection === 'open' && s.ready && s.workspace !== null);
  return page;
}

async function ask(page, text) {
  const box = page.getByRole('textbox', { name: 'Ask Claude' });
  await box.click();
  await box.fill(text);
  await box.press('Enter');
}

async function promptAndCard(page, text) {
  await ask(page, process.env.ORBIT_PROMPT ?? text);
  const s = await until(page, 'a card', (st) => pendingCards(st).length > 0);
  const card = pendingCards(s)[0];
  return { s, card };
}

function cardGroup(page, card) {
  const title = card.kind === 'permission' ? card.title : /question/i;
  return page.getByRole('group', { name: title });
}

// --- Scenarios.

async function prompt(page) {
  const text = process.env.ORBIT_PROMPT ?? 'Say hello';
  await ask(page, text);
  await page.getByRole('region', { name: 'Turns in progress' }).getByRole('button').first().waitFor();
  await shot(page, 'bubble');
  const s = await until(page, 'the turn to end with a reply', (st) => turnEnded(st) && shownKinds(st).includes('reply'));
  const log = page.getByRole('log');
  await log.getByText(text, { exact: false }).first().waitFor();
  await shot(page, 'reply');
  // Loaded and a whole turn seen, visible: permission to notify was never asked; the button asks, once.
  const asksOnLoad = await page.evaluate(() => window.__orbitPermissionAsks);
  if (asksOnLoad !== 0) throw new Error(`the page asked for permission to notify ${asksOnLoad} time(s) unasked`);
  const notifyMe = page.getByRole('button', { name: 'Notify me of cards' });
  await notifyMe.click();
  await page.waitForFunction(() => Notification.permission !== 'default' || window.__orbitPermissionAsks > 0);
  await notifyMe.waitFor({ state: 'hidden' });
  const asksAfterButton = await page.evaluate(() => window.__orbitPermissionAsks);
  if (asksAfterButton !== 1) throw new Error(`Notify me asked ${asksAfterButton} time(s)`);
  const permission = await page.evaluate(() => Notification.permission);
  // Headless Chromium refuses unasked-for prompts: the page says notifications are blocked.
  if (permission === 'denied') await page.getByRole('status').filter({ hasText: 'Notifications are blocked for this page in the browser.' }).waitFor();
  return { key: s.shown, kinds: shownKinds(s), turnCostUsd: shownSession(s).turnCostUsd, asksOnLoad, asksAfterButton, permission };
}

async function answerPermission(page, choice) {
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  if (card.kind !== 'permission') throw new Error(`expected a permission card, got ${card.kind}`);
  const group = cardGroup(page, card);
  await group.waitFor();
  await shot(page, 'card');
  const seen = new Set([card.requestId]);
  if (choice === 'allow') await group.getByRole('button', { name: 'Allow', exact: true }).click();
  else if (choice === 'always') {
    if (!card.always) throw new Error('the card offers no always choice');
    await group.getByRole('button', { name: card.always, exact: true }).click();
  } else {
    await group.getByRole('textbox').fill('Not this file, please.');
    await group.getByRole('button', { name: 'Deny', exact: true }).click();
  }
  // Until the turn ends, note every card that shows up.
  const s = await until(page, 'the turn to end', (st) => {
    for (const c of pendingCards(st)) seen.add(c.requestId);
    return turnEnded(st);
  });
  await shot(page, choice === 'deny' ? 'denied' : 'answered');
  return { key: s.shown, card: { title: card.title, always: card.always }, cardsSeen: seen.size, kinds: shownKinds(s), s };
}

async function allow(page) {
  const { s: _s, ...out } = await answerPermission(page, 'allow');
  if (!out.kinds.includes('tool')) throw new Error('no tool entry after allowing');
  return out;
}

async function always(page) {
  const { s: _s, ...out } = await answerPermission(page, 'always');
  if (out.cardsSeen !== 1) throw new Error(`always should stop the next card, but ${out.cardsSeen} cards showed`);
  // With ORBIT_SECOND_PROMPT, a second turn (which asks for the same tool) must show no card either.
  const second = process.env.ORBIT_SECOND_PROMPT;
  if (second) {
    const turns = (await inspect(page)).sessions[out.key]?.turns ?? 0;
    await ask(page, second);
    let cards = 0;
    await until(page, 'the second turn to end', (st) => {
      cards += pendingCards(st).length;
      return cards > 0 || (shownSession(st)?.turns > turns && turnEnded(st));
    });
    if (cards > 0) throw new Error('a card showed in the second turn, after always');
    await shot(page, 'second-turn');
    out.secondTurnCards = 0;
  }
  return out;
}

async function deny(page) {
  const { s: _s, ...out } = await answerPermission(page, 'deny');
  if (!out.kinds.includes('denied')) throw new Error('no denied entry');
  await page.getByRole('log').getByText(/Denied/).first().waitFor();
  return out;
}

async function questionsAnswer(page) {
  const { card } = await promptAndCard(page, 'Ask me a question');
  if (card.kind !== 'questions') throw new Error(`expected a question card, got ${card.kind}`);
  const group = cardGroup(page, card);
  await group.waitFor();
  const send = group.getByRole('button', { name: 'Send answers' });
  if (await send.isEnabled()) throw new Error('Send answers is enabled before any answer');
  await shot(page, 'questions');
  const full = (await inspect(page)).sessions[(await inspect(page)).shown].pending[0];
  const chosen = [];
  for (const [i, question] of full.questions.entries()) {
    const fieldset = group.locator('fieldset').nth(i);
    const option = question.options[0];
    if (option) {
      await fieldset.getByRole(question.multiSelect ? 'checkbox' : 'radio', { name: option.label }).check();
      chosen.push(option.label);
    } else {
      await fieldset.getByRole('textbox').fill('My own answer');
      chosen.push('My own answer');
    }
  }
  await shot(page, 'answered');
  await send.click();
  const s = await until(page, 'the turn to end', turnEnded);
  await shot(page, 'done');
  return { questions: full.questions.length, chosen, kinds: shownKinds(s) };
}

async function questionsSkip(page) {
  const { card } = await promptAndCard(page, 'Ask me a question');
  if (card.kind !== 'questions') throw new Error(`expected a question card, got ${card.kind}`);
  const group = cardGroup(page, card);
  await group.waitFor();
  await shot(page, 'questions');
  await group.getByRole('button', { name: 'Skip' }).click();
  const s = await until(page, 'the turn to end', turnEnded);
  await shot(page, 'skipped');
  return { kinds: shownKinds(s) };
}

async function stop(page) {
  await ask(page, process.env.ORBIT_PROMPT ?? 'Write a long story (slow)');
  // stream-json sends a text block whole, once it is complete: while the
  // model streams, the bubble says Thinking (Writing a reply with
  // --include-partial-messages). Either is a reply under way.
  await until(page, 'a reply under way', (s) => ['thinking', 'writing'].includes(shownSession(s)?.phase) && shownSession(s).turns > 0);
  await new Promise((r) => setTimeout(r, 700));
  await shot(page, 'streaming');
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  const s = await until(page, 'the turn to stop', (st) => turnEnded(st) && shownSession(st).lastOutcome === 'interrupted');
  await shot(page, 'stopped');
  return { lastOutcome: shownSession(s).lastOutcome, kinds: shownKinds(s) };
}

async function reloadPending(page) {
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  await cardGroup(page, card).waitFor();
  await shot(page, 'card');
  // The reload's socket is held by the test and answers nothing: what the page shows then
  // came with its HTML (the snapshot in the page).
  let holding = true;
  const held = [];
  const resumes = [];
  await page.routeWebSocket(/\/ws\?/, (ws) => {
    if (!holding) {
      ws.connectToServer();
      return;
    }
    held.push(ws);
    ws.onMessage((message) => { resumes.push(JSON.parse(String(message))); });
  });
  await page.reload();
  const preloaded = await until(page, 'the card from the page itself', (st) => st.ready && pendingCards(st).some((c) => c.requestId === card.requestId));
  await cardGroup(page, card).waitFor();
  await shot(page, 'card-from-the-html');
  await until(page, 'the held socket to get its resume', () => resumes.length > 0);
  const resume = resumes[0];
  if (resume.type !== 'resume' || resume.instanceId !== preloaded.instanceId || resume.lastSeq !== preloaded.lastSeq || resume.lastSeq === null) {
    throw new Error(`the socket did not resume from the page's snapshot: ${JSON.stringify(resume)} after ${JSON.stringify(summary(preloaded))}`);
  }
  // Let the socket through: the page reconnects to Orbit and resumes.
  holding = false;
  for (const ws of held) await ws.close();
  const s = await until(page, 'the card after the reload', (st) => st.connection === 'open' && st.connects >= 2 && st.ready && pendingCards(st).some((c) => c.requestId === card.requestId));
  const group = cardGroup(page, card);
  await group.waitFor();
  await shot(page, 'card-after-reload');
  await group.getByRole('button', { name: 'Allow', exact: true }).click();
  const done = await until(page, 'the turn to end', turnEnded);
  await shot(page, 'answered');
  return { requestId: card.requestId, reloadedInstance: s.instanceId, preloaded: { instanceId: preloaded.instanceId, head: preloaded.lastSeq, cards: pendingCards(preloaded).length }, resume, kinds: shownKinds(done) };
}

async function drop(page) {
  await ask(page, process.env.ORBIT_PROMPT ?? 'Write a long story (slow)');
  const before = await until(page, 'the turn under way', (s) => {
    const phase = shownSession(s)?.phase;
    return phase !== undefined && phase !== 'idle' && shownKinds(s).length >= 2;
  });
  if (process.env.ORBIT_DROP_URL) await fetch(process.env.ORBIT_DROP_URL);
  else {
    await mkdir(artifacts, { recursive: true });
    await writeFile(join(artifacts, 'drop.ready'), `${before.lastSeq}\n`);
  }
  // The page counts its connections: a drop and a reconnect between two polls is seen too.
  const dropped = await until(page, 'the socket to drop', (s) => s.connection !== 'open' || s.connects > before.connects);
  if (dropped.connection !== 'open') await shot(page, 'reconnecting');
  await until(page, 'the page to reconnect', (s) => s.connection === 'open' && s.ready && s.connects > before.connects);
  const live = await until(page, 'the turn to end', turnEnded, TIMEOUT * 4);
  await shot(page, 'after-drop');
  const key = live.shown;
  const liveSeqs = live.transcripts[key].seqs;
  // A fresh snapshot of the same conversation must hold exactly what the page held.
  await page.reload();
  const fresh = await until(page, 'a fresh snapshot', (s) => s.connection === 'open' && s.ready && s.transcripts[key] !== undefined);
  const freshSeqs = fresh.transcripts[key].seqs;
  const duplicates = liveSeqs.length - new Set(liveSeqs).size;
  if (duplicates > 0) throw new Error(`${duplicates} entries twice`);
  // The host keeps the last 400 entries; the page may hold more, never fewer.
  const tail = liveSeqs.slice(Math.max(0, liveSeqs.length - freshSeqs.length));
  if (freshSeqs.length === 0 || JSON.stringify(tail) !== JSON.stringify(freshSeqs)) {
    throw new Error(`the page's entries differ from the host's: held ${liveSeqs.join(',')}, host ${freshSeqs.join(',')}`);
  }
  return { key, entries: liveSeqs.length, duplicatesIgnored: live.duplicates, dropAtSeq: before.lastSeq };
}

async function trust(page) {
  const s = await inspect(page);
  if (s.workspace.trusted) throw new Error('the workspace is trusted already; start the harness in an untrusted folder');
  const button = page.getByRole('button', { name: 'Trust this folder' });
  await button.waitFor();
  if (await page.getByRole('textbox', { name: 'Ask Claude' }).isEnabled()) throw new Error('the prompt box is enabled while untrusted');
  await shot(page, 'untrusted');
  await button.click();
  await until(page, 'the workspace to be trusted', (st) => st.workspace.trusted === true);
  await button.waitFor({ state: 'hidden' });
  await page.getByRole('textbox', { name: 'Ask Claude' }).waitFor();
  await shot(page, 'trusted');
  const text = process.env.ORBIT_PROMPT ?? 'Say hello';
  await ask(page, text);
  const done = await until(page, 'a reply', (st) => turnEnded(st) && shownKinds(st).includes('reply'));
  await shot(page, 'reply');
  return { trusted: true, kinds: shownKinds(done) };
}

/** Opens the workspace's WebSocket from `page`: 'message', 'refused' or 'timeout'. */
function socketFrom(page, pageUrl) {
  return page.evaluate(
    (url) => new Promise((resolve) => {
      const ws = new WebSocket(url);
      ws.onmessage = () => resolve('message');
      ws.onerror = () => resolve('refused');
      ws.onclose = () => resolve('refused');
      setTimeout(() => resolve('timeout'), 5000);
    }),
    `${origin.replace(/^http/, 'ws')}/ws?w=${new URL(pageUrl).pathname.split('/')[2]}`,
  );
}

async function security(page, context) {
  const checks = {};
  const pageUrl = page.url();
  // Headers of the page itself.
  const response = await page.request.get(pageUrl);
  const csp = response.headers()['content-security-policy'] ?? '';
  checks.csp = /script-src[^;]*'self'/.test(csp) && !/unsafe-inline|unsafe-eval/.test(csp) && /frame-ancestors 'none'/.test(csp) && /img-src 'self' data:/.test(csp);
  checks.referrerPolicy = response.headers()['referrer-policy'] === 'no-referrer';
  checks.nosniff = response.headers()['x-content-type-options'] === 'nosniff';
  // An inline script added to the page does not run.
  checks.inlineScriptBlocked = await page.evaluate(async () => {
    const el = document.createElement('script');
    el.textContent = 'window.__orbitInline = true;';
    document.body.appendChild(el);
    await new Promise((r) => setTimeout(r, 100));
    return window.__orbitInline !== true;
  });
  // The reused login address is refused, and sets no cookie.
  const other = await browser.newContext();
  const otherPage = await newPage(other);
  const reused = await otherPage.goto(loginUrl);
  checks.reusedLoginRefused = (reused?.status() ?? 0) >= 400 && (await other.cookies()).length === 0;
  await shot(otherPage, 'reused-login');
  // No cookie: the page and the socket are refused.
  const noCookie = await otherPage.goto(pageUrl);
  checks.noCookieRefused = (noCookie?.status() ?? 0) >= 400;
  const socketWithoutCookie = await socketFrom(otherPage, pageUrl);
  checks.socketWithoutCookieRefused = socketWithoutCookie === 'refused';
  await other.close();
  // A wrong Host (DNS rebinding: another name for 127.0.0.1) is refused.
  const rebind = await newPage(context);
  const rebound = await rebind.goto(pageUrl.replace(/\/\/[^/]+/, `//rebind.test:${port}`)).catch(() => null);
  checks.wrongHostRefused = rebound === null || rebound.status() >= 400;
  await rebind.close();
  // The same, with the page's cookie: the Host alone must be enough to refuse.
  const withCookie = await context.request.get(pageUrl, { headers: { Host: `rebind.test:${port}` }, failOnStatusCode: false, maxRedirects: 0 }).catch(() => null);
  checks.wrongHostWithCookieRefused = withCookie === null || withCookie.status() >= 400;
  const rightHost = await context.request.get(pageUrl, { failOnStatusCode: false, maxRedirects: 0 });
  checks.rightHostServed = rightHost.status() === 200;
  // A foreign Origin's WebSocket gets nothing (the cookie is the page's own).
  const foreign = await newPage(context);
  await foreign.route('http://foreign.test/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>foreign</title>' }));
  await foreign.goto('http://foreign.test/');
  const foreignSocket = await socketFrom(foreign, pageUrl);
  checks.foreignOriginRefused = foreignSocket === 'refused';
  await foreign.close();
  // With ORBIT_SECURITY_PROMPT (the fake API answering with HTML such as
  // `<img src=x onerror="window.__orbitXss=1">`), the reply shows as text.
  if (process.env.ORBIT_SECURITY_PROMPT) {
    await ask(page, process.env.ORBIT_SECURITY_PROMPT);
    await until(page, 'the reply', (st) => turnEnded(st) && shownKinds(st).includes('reply'));
    checks.htmlReplyIsText = await page.evaluate(() => {
      const log = document.querySelector('[role="log"]');
      return window.__orbitXss === undefined && log !== null && /<img|<script/i.test(log.textContent ?? '');
    });
  }
  // Nothing in the page came from HTML: no img element in the conversation view.
  checks.noImagesInLog = await page.evaluate(() => document.querySelectorAll('[role="log"] img, [role="log"] script').length === 0);
  await shot(page, 'page');
  const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([k]) => k);
  if (failed.length) throw new Error(`security checks failed: ${failed.join(', ')}`);
  return { checks };
}

/** `window.orbitInspect.keypad()`: the keypad panel's last state. */
const keypadView = (page) => page.evaluate(() => window.orbitInspect.keypad());
const ownKey = (view) => view?.keypad?.keys?.find((k) => k.adapterId === 'claude-code');

async function untilKeypad(page, what, predicate, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await keypadView(page).catch(() => null);
    if (last && predicate(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; keypad: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function keypad(page) {
  const panel = page.getByRole('region', { name: 'Keypad' });
  await page.getByRole('button', { name: 'Keypad', exact: true }).click();
  await panel.waitFor();
  await ask(page, process.env.ORBIT_PROMPT ?? 'Please make the edit (permission)');
  // The key follows the turn until the card waits.
  const seen = new Set();
  const waiting = await untilKeypad(page, 'a waiting claude-code key', (v) => {
    const key = ownKey(v);
    if (key) seen.add(key.activity);
    return key?.activity === 'waitingPermission' && key.request !== undefined;
  });
  const key = ownKey(waiting);
  const s = await until(page, 'the card on the page', (st) => pendingCards(st).length > 0);
  const card = pendingCards(s)[0];
  await shot(page, 'keypad-waiting');
  // The keys are drawn again at every poll (250 ms): a key with the keyboard's focus keeps it.
  const keyButton = panel.getByRole('button', { name: `${key.adapterShortName}: ${key.title}, Needs permission` });
  await keyButton.focus();
  await page.waitForTimeout(700);
  const focusedUid = await page.evaluate(() => document.activeElement?.getAttribute('data-uid') ?? null);
  if (focusedUid !== key.uid) throw new Error(`the focused key lost the focus at a poll: ${focusedUid}`);
  // The key's tap shows the whole request before Allow or Deny.
  await keyButton.click();
  const dialog = panel.getByRole('dialog', { name: 'Permission request' });
  await dialog.waitFor();
  const shownText = await dialog.locator('pre').textContent();
  const whole = typeof card.input?.new_string === 'string' && shownText.includes(card.input.new_string)
    && typeof card.input?.file_path === 'string' && shownText.includes(card.input.file_path);
  if (!whole) throw new Error(`the request is not shown whole: ${shownText}`);
  const allowButton = dialog.getByRole('button', { name: 'Allow', exact: true });
  const armedAtOnce = await allowButton.isEnabled();
  await shot(page, 'keypad-request');
  await allowButton.click();
  // The review goes and the focus goes back to its key, not to the page's start.
  const backOn = await page.evaluate(() => document.activeElement?.closest('.keypad-panel') ? document.activeElement.getAttribute('data-uid') ?? 'the panel' : document.activeElement?.tagName ?? null);
  if (backOn !== key.uid) throw new Error(`after Allow the focus is on ${backOn}, not the key`);
  // The card goes from the page; the key's turn ends.
  const ended = await until(page, 'the turn to end', (st) => turnEnded(st) && pendingCards(st).length === 0);
  const done = await untilKeypad(page, 'the key done', (v) => ownKey(v)?.activity === 'done' && ownKey(v)?.request === undefined);
  await shot(page, 'keypad-done');
  // Settings › Agents: the user's base hue recolours the key.
  const settings = page.getByRole('region', { name: 'Settings › Agents' });
  const before = ownKey(done).colors.working;
  await settings.getByRole('spinbutton', { name: 'Base hue for Claude Code' }).fill('200');
  await settings.getByRole('button', { name: 'Set the base hue for Claude Code', exact: true }).click();
  const recoloured = await untilKeypad(page, 'the key recoloured', (v) => ownKey(v) && ownKey(v).colors.working !== before);
  // What the key is drawn with now (keys are redrawn on every poll).
  const borderColor = await page.evaluate(() => {
    const el = document.querySelector('.keypad-key[data-adapter="claude-code"]');
    return el ? getComputedStyle(el).getPropertyValue('--key-working').trim() : null;
  });
  // The Adapter API switch: on, a new token, then off.
  const apiSwitch = settings.getByRole('switch', { name: 'Adapter API' });
  const apiAtFirst = (await keypadView(page)).keypad.adapterApi;
  await apiSwitch.click();
  await untilKeypad(page, 'the API on', (v) => v.keypad.adapterApi === !apiAtFirst);
  if (!apiAtFirst) {
    await settings.getByRole('button', { name: 'Regenerate token' }).click();
    await page.getByText('Token regenerated', { exact: false }).waitFor();
    await apiSwitch.click();
    await untilKeypad(page, 'the API off', (v) => v.keypad.adapterApi === false);
  }
  await shot(page, 'keypad-settings');
  return {
    key: ended.shown,
    seen: [...seen],
    sessionIdLike: key.uid,
    armedAtOnce,
    colorBefore: before,
    colorAfter: ownKey(recoloured).colors.working,
    borderColor,
    apiAtFirst,
    apiAtEnd: (await keypadView(page)).keypad.adapterApi,
  };
}

// --- Every question reaches the user (issue 15).

/** Makes the page hidden as a browser does when its tab is in the background. */
async function hide(page) {
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

const notifications = (page) => page.evaluate(() => window.orbitInspect.notifications());

/** Polls the page's notifications until `predicate` holds. */
async function untilNotifications(page, what, predicate) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const list = await notifications(page);
    if (predicate(list)) return list;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; notifications: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits for a file the harness writes; returns its text. */
async function waitForFile(path, what) {
  const { readFile } = await import('node:fs/promises');
  const deadline = Date.now() + TIMEOUT * 2;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text !== null && text.trim()) return text.trim();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function notify(page, context) {
  await context.grantPermissions(['notifications'], { origin });
  await hide(page);
  // A permission card: one notification, tagged by its request id; the title counts it.
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  if (card.kind !== 'permission') throw new Error(`expected a permission card, got ${card.kind}`);
  const first = await untilNotifications(page, 'the permission notification', (l) => l.some((n) => n.tag === card.requestId));
  if (first.length !== 1) throw new Error(`one card, ${first.length} notifications: ${JSON.stringify(first)}`);
  const title = await page.title();
  if (!title.startsWith('(1) ')) throw new Error(`the title does not count the waiting card: ${title}`);
  if (JSON.stringify(first[0].actions) !== '["open"]') throw new Error(`a permission offers to open Orbit: ${JSON.stringify(first[0].actions)}`);
  await shot(page, 'permission-notified');
  // Its address opens Orbit on the card (a second tab, the card in view and focused).
  const other = await newPage(context);
  await other.goto(new URL(first[0].url, origin).toString());
  await until(other, 'the second tab on the card', (s) => s.ready && pendingCards(s).some((c) => c.requestId === card.requestId));
  await other.waitForFunction((id) => document.activeElement?.getAttribute('data-request-id') === id, card.requestId);
  await shot(other, 'opened-on-card');
  // Answered in the other tab: gone from the first at once, and the notification closes.
  await cardGroup(other, card).getByRole('button', { name: 'Allow', exact: true }).click();
  await cardGroup(page, card).waitFor({ state: 'detached' });
  await untilNotifications(page, 'the permission notification to close', (l) => !l.some((n) => n.tag === card.requestId));
  await until(page, 'the turn to end', turnEnded);
  await other.close();
  // A question card: open or skip; the skip goes through the controller.
  await ask(page, 'Ask me a question');
  const s = await until(page, 'a question card', (st) => pendingCards(st).some((c) => c.kind === 'questions'));
  const qcard = pendingCards(s).find((c) => c.kind === 'questions');
  const second = await untilNotifications(page, 'the question notification', (l) => l.some((n) => n.tag === qcard.requestId));
  if (second.length !== 1) throw new Error(`one card, ${second.length} notifications: ${JSON.stringify(second)}`);
  if (JSON.stringify(second[0].actions) !== '["open","skip"]') throw new Error(`a question offers open and skip: ${JSON.stringify(second[0].actions)}`);
  await shot(page, 'question-notified');
  const outcome = await page.evaluate((tag) => window.orbitInspect.notificationAction(tag, 'skip'), qcard.requestId);
  const done = await until(page, 'the skipped turn to end', (st) => turnEnded(st) && shownKinds(st).includes('denied'));
  await untilNotifications(page, 'no notification left', (l) => l.length === 0);
  const finalTitle = await page.title();
  if (finalTitle.startsWith('(')) throw new Error(`the title still counts cards: ${finalTitle}`);
  await shot(page, 'skipped');
  return { permissionTag: card.requestId, questionTag: qcard.requestId, skipOutcome: outcome, title, kinds: shownKinds(done) };
}

/** How many of the worker's notifications carry `tag` (asked of the worker itself: no tab may be left to ask). */
async function workerNotifications(context, tag) {
  const [worker] = context.serviceWorkers();
  if (!worker) throw new Error('no service worker');
  return worker.evaluate(async (t) => (await self.registration.getNotifications({ tag: t })).length, tag);
}

/**
 * Two hidden tabs, one card, one notification. One tab closes: the other still relies on the
 * notification, which stays. The last one goes (navigates away): its notification closes, before
 * Orbit (no page for 2 s) raises its own desktop one (ORBIT_E2E_CLOSED: the file it writes when it
 * saw the close); once ORBIT_E2E_ANSWER_AFTER exists it comes back and answers the card.
 */
async function notifyTabsClose(page, context) {
  await context.grantPermissions(['notifications'], { origin });
  const address = page.url();
  const other = await newPage(context);
  await other.goto(address);
  await until(other, 'the second tab', (s) => s.connection === 'open' && s.ready);
  await hide(page);
  await hide(other);
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  await untilNotifications(other, 'the notification', (l) => l.some((n) => n.tag === card.requestId));
  if ((await notifications(page)).length !== 1) throw new Error('two tabs, one card: not one notification');
  await other.close();
  // Past the worker's look for other tabs (half a second): the hidden tab left keeps it.
  await sleep(1500);
  if (!(await notifications(page)).some((n) => n.tag === card.requestId)) throw new Error('the notification closed while a tab was left');
  await shot(page, 'one-tab-left');
  const t0 = Date.now();
  await page.goto('about:blank');
  while ((await workerNotifications(context, card.requestId)) > 0) {
    if (Date.now() - t0 > TIMEOUT) throw new Error('the notification outlived the last tab');
    await sleep(20);
  }
  const closedMs = Date.now() - t0;
  if (process.env.ORBIT_E2E_CLOSED) await writeFile(process.env.ORBIT_E2E_CLOSED, `${closedMs}\n`);
  const gate = process.env.ORBIT_E2E_ANSWER_AFTER;
  if (gate) {
    while (!existsSync(gate)) {
      if (Date.now() - t0 > TIMEOUT) throw new Error(`${gate} was never made`);
      await sleep(50);
    }
  }
  // Back: the card is still there to answer.
  await page.goto(address);
  await until(page, 'the card again', (s) => s.ready && pendingCards(s).some((c) => c.requestId === card.requestId));
  await cardGroup(page, card).getByRole('button', { name: 'Allow', exact: true }).click();
  const done = await until(page, 'the turn to end', turnEnded);
  await shot(page, 'answered');
  return { requestId: card.requestId, closedMs, kinds: shownKinds(done) };
}

async function twoTabs(page, context) {
  const other = await newPage(context);
  await other.goto(page.url());
  await until(other, 'the second tab', (s) => s.connection === 'open' && s.ready);
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  // The same card in both tabs.
  await cardGroup(page, card).waitFor();
  await cardGroup(other, card).waitFor();
  await shot(other, 'both-tabs');
  await cardGroup(page, card).getByRole('button', { name: 'Allow', exact: true }).click();
  await cardGroup(other, card).waitFor({ state: 'detached', timeout: 5000 });
  const s = await until(other, 'the turn to end in the other tab', turnEnded);
  await shot(other, 'gone-from-other');
  const a = await until(page, 'the turn to end', turnEnded);
  if (JSON.stringify(a.transcripts[a.shown].seqs) !== JSON.stringify(s.transcripts[s.shown].seqs)) throw new Error('the two tabs show different transcripts');
  await other.close();
  return { requestId: card.requestId, kinds: shownKinds(s) };
}

/** Routes the page's socket through the test: each connection that carries `drop(frame)` is closed after forwarding it. */
async function routeSocket(page, onPageFrame) {
  const log = [];
  await page.routeWebSocket(/\/ws\?w=/, (ws) => {
    const server = ws.connectToServer();
    const connection = log.length;
    log.push([]);
    ws.onMessage((message) => {
      let frame = null;
      try { frame = JSON.parse(String(message)); } catch { /* forwarded as is */ }
      log[connection].push(frame);
      const verdict = onPageFrame(frame, connection);
      if (verdict !== 'swallow') server.send(message);
      if (verdict === 'drop') {
        ws.close({ code: 4000, reason: 'dropped by the test' });
        server.close();
      }
    });
    server.onMessage((message) => ws.send(message));
  });
  return log;
}

async function answerThroughDrops(page) {
  let drops = 0;
  const DROPS = 3;
  const log = await routeSocket(page, (frame) => {
    if (frame?.type === 'action' && frame.request?.type === 'answerPermission' && drops < DROPS) {
      drops += 1;
      return 'drop';
    }
    return 'forward';
  });
  await page.reload();
  await until(page, 'the page through the route', (s) => s.connection === 'open' && s.ready);
  const { card } = await promptAndCard(page, 'Please make the edit (permission)');
  await cardGroup(page, card).getByRole('button', { name: 'Allow', exact: true }).click();
  // After the first drop the page is reloaded: the outbox survives it.
  const deadline = Date.now() + TIMEOUT;
  while (drops < 1) {
    if (Date.now() > deadline) throw new Error('the answer was never sent');
    await new Promise((r) => setTimeout(r, 20));
  }
  const reloadedAt = log.length;
  await page.reload();
  // The answer was applied when the first copy reached Orbit; the copies sent
  // again after the drops are acknowledged (not applied) and may come in after
  // the turn has ended: the outbox empties once the last acknowledgement lands.
  await until(page, 'the turn to end', turnEnded, TIMEOUT * 2);
  const s = await until(page, 'the outbox to empty', (st) => turnEnded(st) && st.outbox.length === 0, TIMEOUT);
  await shot(page, 'applied-once');
  const sends = log.map((frames) => frames.filter((f) => f?.type === 'action' && f.request?.type === 'answerPermission').map((f) => f.id));
  const ids = new Set(sends.flat());
  const sentAfterReload = sends.slice(reloadedAt).some((list) => list.length > 0);
  if (ids.size !== 1) throw new Error(`the answer went with ${ids.size} ids: ${JSON.stringify(sends)}`);
  if (!sentAfterReload) throw new Error(`the answer was not sent again after the reload: ${JSON.stringify(sends)}`);
  const refused = s.notices.filter((n) => /refused/i.test(n));
  if (refused.length) throw new Error(`refused: ${refused.join(' | ')}`);
  if (s.outbox.length) throw new Error(`the outbox still holds ${s.outbox.join(',')}`);
  return { drops, connections: log.length, sends: sends.filter((l) => l.length).length, toolUseId: card.toolUseId, kinds: shownKinds(s) };
}

async function restartOutbox(page) {
  // Actions reach no Orbit: they stay in the outbox, unacknowledged.
  await routeSocket(page, (frame) => (frame?.type === 'action' ? 'swallow' : 'forward'));
  await page.reload();
  await until(page, 'the page through the route', (s) => s.connection === 'open' && s.ready);
  await page.getByRole('button', { name: 'New conversation' }).click();
  const held = await until(page, 'an action in the outbox', (s) => s.outbox.length === 1);
  await mkdir(artifacts, { recursive: true });
  const urlFile = join(artifacts, 'restart.url');
  await writeFile(join(artifacts, 'restart.ready'), `${held.instanceId}\n`);
  // The harness restarts Orbit on the same port and writes its new login address.
  const disconnected = await until(page, 'the disconnection', (s) => s.connection !== 'open', TIMEOUT * 2);
  await page.getByRole('alert').filter({ hasText: 'Disconnected from Orbit' }).waitFor();
  if (!(await page.getByRole('button', { name: 'New conversation' }).isDisabled())) throw new Error('New conversation is enabled while disconnected');
  await shot(page, 'disconnected');
  const next = await waitForFile(urlFile, 'the restarted Orbit');
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.goto(next);
  const s = await until(page, 'the restarted Orbit', (st) => st.connection === 'open' && st.ready && st.instanceId !== held.instanceId);
  if (s.outbox.length) throw new Error(`the old action is still in the outbox: ${s.outbox.join(',')}`);
  const said = s.notices.find((n) => /Orbit restarted/.test(n));
  if (!said) throw new Error(`the page did not say the action was dropped: ${JSON.stringify(s.notices)}`);
  await page.getByRole('alert', { name: 'Errors' }).getByText(/Orbit restarted/).waitFor();
  await shot(page, 'dropped-and-said');
  return { before: held.instanceId, after: s.instanceId, notice: said, disconnectedState: disconnected.connection };
}

/** The page opened from a card's address (a desktop notification's action): on the card, focused; then allowed. */
async function openCard(page) {
  const s = await until(page, 'the card', (st) => pendingCards(st).length > 0);
  const card = pendingCards(s)[0];
  await cardGroup(page, card).waitFor();
  await page.waitForFunction((id) => document.activeElement?.getAttribute('data-request-id') === id, card.requestId);
  await shot(page, 'opened-on-card');
  // ORBIT_E2E_ANSWER_AFTER=<file>: the card is answered only once the test has made that file
  // (it checks what must hold while the page shows the card unanswered).
  const gate = process.env.ORBIT_E2E_ANSWER_AFTER;
  if (gate) {
    const until = Date.now() + TIMEOUT;
    while (!existsSync(gate)) {
      if (Date.now() > until) throw new Error(`${gate} was never made`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await cardGroup(page, card).getByRole('button', { name: 'Allow', exact: true }).click();
  const done = await until(page, 'the turn to end', turnEnded);
  await shot(page, 'answered');
  return { requestId: card.requestId, key: s.shown, kinds: shownKinds(done) };
}

/** Whether the entry `seq` of the log is within the log's visible box. */
function entryInView(page, seq) {
  return page.evaluate((s) => {
    const log = document.querySelector('[role="log"]');
    const node = log?.querySelector(`[data-seq="${s}"]`);
    if (!log || !node) return false;
    const a = log.getBoundingClientRect();
    const b = node.getBoundingClientRect();
    return b.bottom > a.top && b.top < a.bottom;
  }, seq);
}

async function search(page) {
  await ask(page, 'What is the secret word? (zanzibar)');
  await until(page, 'the first turn', (st) => turnEnded(st) && shownKinds(st).includes('reply'));
  const turns = (await inspect(page)).sessions[(await inspect(page)).shown].turns;
  await ask(page, 'Now tell me a long story');
  const s = await until(page, 'the long reply', (st) => shownSession(st)?.turns > turns && turnEnded(st));
  const seqs = s.transcripts[s.shown].seqs;
  const kinds = s.transcripts[s.shown].kinds;
  // The first prompt and its reply both hold the word; the long reply pushed them out of view.
  const prompt = seqs[kinds.indexOf('prompt')];
  const reply = seqs[kinds.indexOf('reply')];
  if (await entryInView(page, reply)) throw new Error('the first reply is still in view; the story is too short');
  await shot(page, 'scrolled-away');
  await page.getByRole('log').focus();
  await page.keyboard.press('Control+f');
  const box = page.getByRole('search', { name: 'Search the conversation' }).getByRole('searchbox', { name: 'Find in conversation' });
  await box.waitFor();
  await box.fill('ZANZIBAR');
  let found = await page.evaluate(() => window.orbitInspect.search());
  if (JSON.stringify(found.matches) !== JSON.stringify([prompt, reply])) throw new Error(`matches ${JSON.stringify(found.matches)}, expected ${prompt},${reply}`);
  if (found.current !== prompt) throw new Error(`the first match is ${found.current}`);
  await page.getByRole('button', { name: 'Next' }).click();
  found = await page.evaluate(() => window.orbitInspect.search());
  if (found.current !== reply) throw new Error(`Next went to ${found.current}`);
  await page.waitForFunction((seq) => document.querySelector(`[data-seq="${seq}"]`)?.getAttribute('aria-current') === 'true', reply);
  if (!(await entryInView(page, reply))) throw new Error('the match was not brought into view');
  const status = await page.getByRole('search').getByRole('status').textContent();
  await shot(page, 'found');
  await page.getByRole('button', { name: 'Previous' }).click();
  found = await page.evaluate(() => window.orbitInspect.search());
  if (found.current !== prompt) throw new Error(`Previous went to ${found.current}`);
  await box.press('Escape');
  await page.getByRole('search').waitFor({ state: 'hidden' });
  return { matches: found.matches, status, kinds };
}

/** The page's JS heap after a full garbage collection, in bytes. */
async function heapAfterGc(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}

/** Sends `n` entries (and a reply of `bytes`) through the mock host; waits until the page holds the last. */
async function flood(page, n, bytes = 0, word = '') {
  const url = new URL(process.env.ORBIT_FLOOD_URL);
  url.searchParams.set('n', String(n));
  url.searchParams.set('bytes', String(bytes));
  if (word) url.searchParams.set('word', word);
  const last = Number(await (await fetch(url)).text());
  return until(page, `entry ${last}`, (s) => s.shown !== null && (s.transcripts[s.shown]?.seqs ?? []).includes(last), TIMEOUT * 2);
}

/**
 * A long session (needs ORBIT_FLOOD_URL, the mock host's `/mock/flood`):
 * the page's heap at 5,000 entries is within 20 % of its heap at 400, the
 * view renders a window (not every entry), search finds a word in an entry
 * that is not rendered, and the longest main-thread task while a 1 MB reply
 * arrives is reported (a figure, not asserted).
 */
/**
 * The layout with a full log, as in a user's long session: the conversation's title keeps its
 * whole line above the log (no part of the column shrinks under a long log), and the keypad's
 * button covers nothing of the map's legend.
 */
async function fullLogLayout(page) {
  const heading = page.getByRole('heading', { name: 'Conversation', exact: true });
  const title = await heading.boundingBox();
  const clipped = await heading.evaluate((el) => el.scrollHeight > el.clientHeight + 1);
  const log = await page.getByRole('log').boundingBox();
  if (!title || !log) throw new Error('no conversation title or log on the page');
  if (clipped || title.height < 16) throw new Error(`the conversation's title is squeezed (${title.height.toFixed(1)} px high) under the log`);
  if (log.y < title.y + title.height - 1) throw new Error(`the log (top ${log.y}) overlaps the conversation's title (bottom ${title.y + title.height})`);
  const keypad = page.getByRole('button', { name: 'Keypad' });
  await keypad.waitFor();
  const legend = page.getByRole('list', { name: 'Languages' });
  if (await legend.isVisible()) {
    const a = await keypad.boundingBox();
    const b = await legend.boundingBox();
    if (a && b && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
      throw new Error(`the Keypad button ${JSON.stringify(a)} covers the map's legend ${JSON.stringify(b)}`);
    }
  }
}

async function longSession(page) {
  if (!process.env.ORBIT_FLOOD_URL) throw new Error('long-session needs ORBIT_FLOOD_URL (the mock host)');
  await flood(page, 400);
  await new Promise((r) => setTimeout(r, 300));
  // (Before the heap at 400 entries: the keypad's code is loaded in both measures.)
  await fullLogLayout(page);
  const heap400 = await heapAfterGc(page);
  const rendered400 = await page.evaluate(() => window.orbitInspect.rendered());
  await shot(page, 'at-400');
  const s = await flood(page, 4600, 0, 'quetzalcoatl');
  await new Promise((r) => setTimeout(r, 300));
  const heap5000 = await heapAfterGc(page);
  const rendered = await page.evaluate(() => window.orbitInspect.rendered());
  const held = s.transcripts[s.shown].length;
  if (held > 400) throw new Error(`the page holds ${held} entries, more than the host's ring`);
  if (heap5000 > heap400 * 1.2) throw new Error(`the heap grew from ${heap400} to ${heap5000} bytes (over 20 %)`);
  if (rendered >= held) throw new Error(`the view renders all ${held} entries: not virtualised`);
  // Search finds a word in an entry that is not in the DOM.
  const target = await page.evaluate(() => window.orbitInspect.state());
  await page.getByRole('log').focus();
  await page.keyboard.press('Control+f');
  const box = page.getByRole('searchbox', { name: 'Find in conversation' });
  await box.fill('quetzalcoatl');
  const found = await page.evaluate(() => window.orbitInspect.search());
  if (found.matches.length !== 1) throw new Error(`search found ${JSON.stringify(found.matches)}`);
  await page.waitForFunction((seq) => document.querySelector(`[data-seq="${seq}"]`)?.getAttribute('aria-current') === 'true', found.current);
  await shot(page, 'found-unrendered');
  await box.press('Escape');
  // The longest task while a 1 MB reply arrives.
  await page.getByRole('log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
  await page.evaluate(() => {
    window.__orbitLongest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__orbitLongest = Math.max(window.__orbitLongest, e.duration);
    }).observe({ type: 'longtask', buffered: false });
  });
  await flood(page, 0, 1_000_000);
  await new Promise((r) => setTimeout(r, 500));
  const longestTaskMs = await page.evaluate(() => window.__orbitLongest);
  await shot(page, 'big-reply');
  // A Task whose subagent sent 400 entries (the host's ring): its history opens whole, and follows
  // the subagent while open (the ring dropping the oldest).
  const sub = new URL(process.env.ORBIT_FLOOD_URL);
  sub.searchParams.set('n', '0');
  sub.searchParams.set('subagent', '400');
  const lastSub = Number(await (await fetch(sub)).text());
  await until(page, 'the Task entry', (st) => (st.transcripts[st.shown]?.seqs ?? []).includes(lastSub - 400));
  const showWork = page.getByRole('button', { name: "Show the subagent's work" }).last();
  await page.getByRole('log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
  await showWork.waitFor();
  await showWork.click();
  const subRows = (want, lastSeq) => page.waitForFunction(([n, seq]) => {
    const rows = document.querySelectorAll('[role="region"][aria-label="The subagent\'s work"] [data-seq]');
    return rows.length === n && rows[rows.length - 1]?.getAttribute('data-seq') === String(seq);
  }, [want, lastSeq]);
  await subRows(400, lastSub);
  sub.searchParams.set('subagent', '5');
  sub.searchParams.set('task', `task${lastSub - 400}`);
  const lastMore = Number(await (await fetch(sub)).text());
  await subRows(400, lastMore);
  await shot(page, 'subagent-work');
  return { heap400, heap5000, heapRatio: heap5000 / heap400, rendered400, rendered, held, longestTaskMs, lastSeq: target.lastSeq, subagentRows: 400 };
}

// --- The map (scene/).

const sceneOf = (page) => page.evaluate(() => window.orbitInspect.scene());
const nodeAt = (page, path) => page.evaluate((p) => window.orbitInspect.scene.nodeAt(p), path);
const positionsOf = (page) => page.evaluate(() => window.orbitInspect.scene.positions());
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls the map's inspection until `predicate` holds; returns it. */
async function untilScene(page, what, predicate, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await sceneOf(page).catch(() => null);
    if (last && predicate(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; scene: ${JSON.stringify(last)}`);
    await sleep(25);
  }
}

/** The map drawn whole: its first frame, and as many nodes as the graph has files. */
async function mapReady(page) {
  const state = await inspect(page);
  const scene = await untilScene(page, 'the first frame', (s) => s.firstFrame && s.nodes > 0 && s.loop === 'asleep');
  return { state, scene };
}

/** Nodes in `before` whose place differs in `after` (absent ones excepted). */
function moved(before, after, except = []) {
  return Object.entries(before)
    .filter(([path]) => !except.includes(path))
    .filter(([path, [x, y]]) => {
      const now = after[path];
      return !now || now[0] !== x || now[1] !== y;
    })
    .map(([path]) => path);
}

/** Waits until the loop sleeps; returns how long after `since` (ms) it was first seen asleep. */
async function asleepAfter(page, since) {
  await untilScene(page, 'the loop to sleep', (s) => s.loop === 'asleep', 5000);
  return Date.now() - since;
}

async function sceneMap(page) {
  const { state, scene } = await mapReady(page);
  const files = state.workspace.graph.files;
  if (scene.nodes !== files) throw new Error(`the map has ${scene.nodes} nodes, the graph ${files} files`);
  const marks = await page.evaluate(() => performance.getEntriesByName('orbit:first-frame').length);
  if (marks < 1) throw new Error('no orbit:first-frame mark');
  await shot(page, 'map');
  // Asleep a second after the last change, and it stays so (no frame drawn).
  await sleep(1000);
  const idle = await sceneOf(page);
  await sleep(500);
  const later = await sceneOf(page);
  if (idle.loop !== 'asleep' || later.draws !== idle.draws) throw new Error(`the loop is not asleep: ${JSON.stringify({ idle, later })}`);
  // The legend names the languages.
  const legend = await page.getByRole('list', { name: 'Languages' }).getByRole('listitem').allTextContents();
  if (legend.length === 0) throw new Error('no legend');
  // Hover a file: its path and import counts.
  const target = process.env.ORBIT_MAP_FILE ?? 'src/main.rs';
  const at = await nodeAt(page, target);
  if (!at) throw new Error(`${target} is not on the map`);
  await page.mouse.move(at.screenX + 30, at.screenY + 30);
  await page.mouse.move(at.screenX, at.screenY);
  const tooltip = page.getByRole('tooltip');
  await tooltip.getByText(target).waitFor();
  const tip = await tooltip.textContent();
  if (!/imports \d+ · imported by \d+/.test(tip)) throw new Error(`the tooltip says ${tip}`);
  const hovered = (await sceneOf(page)).hovered;
  await shot(page, 'hover');
  // Click: the file panel.
  await page.mouse.click(at.screenX, at.screenY);
  const dialog = page.getByRole('dialog', { name: target });
  await dialog.waitFor();
  await shot(page, 'file-panel');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const selected = (await sceneOf(page)).selected;
  // Re-arrange: the page fetches the map again; every file is still on it.
  const fetches = (await sceneOf(page)).fetches;
  await page.getByRole('button', { name: 'Re-arrange' }).click();
  await page.getByRole('group', { name: 'Re-arrange the map' }).getByRole('button', { name: 'Move every file' }).click();
  const after = await untilScene(page, 'the map after Re-arrange', (s) => s.fetches > fetches && s.loop === 'asleep' && s.nodes === files);
  await shot(page, 'rearranged');
  const start = await freshStart(page);
  return { nodes: scene.nodes, files, edges: scene.edges, legend, tooltip: tip, hovered, selected, fetchesAfterRearrange: after.fetches, lod: scene.lod, start };
}

/**
 * A fresh open (no conversation entries) starts with its map (`web/src/hud/hold.ts`, `mapFirst`):
 * reloaded, the page opens its socket only after the map's first frame is marked, and its side
 * column (the prompt box) comes after it.
 */
async function freshStart(page) {
  await page.addInitScript(() => {
    const opened = [];
    window.__orbitSocketsOpened = opened;
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
      constructor(...args) {
        opened.push(performance.now());
        super(...args);
      }
    };
  });
  await page.reload();
  await mapReady(page);
  await until(page, 'the reloaded page to be connected', (s) => s.connection === 'open' && s.ready);
  await page.getByRole('textbox', { name: 'Ask Claude' }).waitFor();
  const { mark, sockets } = await page.evaluate(() => ({
    mark: performance.getEntriesByName('orbit:first-frame')[0]?.startTime ?? null,
    sockets: window.__orbitSocketsOpened,
  }));
  if (mark === null) throw new Error('no orbit:first-frame mark after the reload');
  if (!Array.isArray(sockets) || sockets.length === 0) throw new Error('the reloaded page opened no socket');
  if (sockets[0] < mark) throw new Error(`the socket was opened at ${sockets[0]} ms, before the map's first frame at ${mark} ms`);
  return { mark, socket: sockets[0] };
}

async function sceneLive(page) {
  const workspace = process.env.ORBIT_WORKSPACE;
  if (!workspace) throw new Error('ORBIT_WORKSPACE is not set');
  await mapReady(page);
  const before = await positionsOf(page);
  const created = process.env.ORBIT_MAP_NEW ?? 'src/extra.rs';
  // A file created on disk appears within a second; nobody else moves.
  const t0 = Date.now();
  await writeFile(join(workspace, created), 'pub fn extra() {}\n');
  let appeared = null;
  while (Date.now() - t0 < 10000) {
    appeared = await nodeAt(page, created);
    if (appeared) break;
    await sleep(20);
  }
  const appearMs = Date.now() - t0;
  if (!appeared) throw new Error(`${created} did not appear`);
  await shot(page, 'created');
  const afterAdd = await positionsOf(page);
  const movedByAdd = moved(before, afterAdd);
  const asleepAfterAdd = await asleepAfter(page, Date.now());
  // A deleted file goes; nobody else moves.
  const deleted = process.env.ORBIT_MAP_DELETE ?? 'src/util.rs';
  const t1 = Date.now();
  await rm(join(workspace, deleted));
  while (Date.now() - t1 < 10000 && (await nodeAt(page, deleted))) await sleep(20);
  const goneMs = Date.now() - t1;
  if (await nodeAt(page, deleted)) throw new Error(`${deleted} did not go`);
  const lastChange = Date.now();
  const afterDelete = await positionsOf(page);
  const movedByDelete = moved(afterAdd, afterDelete, [deleted]);
  const sleptMs = await asleepAfter(page, lastChange);
  await shot(page, 'deleted');
  // The place it took is the place a fresh page gets.
  const live = await positionsOf(page);
  await page.reload();
  await until(page, 'the page after the reload', (s) => s.connection === 'open' && s.ready);
  await mapReady(page);
  const fresh = await positionsOf(page);
  const differs = moved(live, fresh).concat(moved(fresh, live));
  if (movedByAdd.length || movedByDelete.length) throw new Error(`files moved: ${[...movedByAdd, ...movedByDelete].join(', ')}`);
  if (differs.length) throw new Error(`the live map differs from a fresh one at: ${differs.join(', ')}`);
  if (appearMs > 1000) throw new Error(`${created} took ${appearMs} ms to appear`);
  if (sleptMs > 1000 || asleepAfterAdd > 1000) throw new Error(`the loop slept ${Math.max(sleptMs, asleepAfterAdd)} ms after the last change`);
  return { created, at: [appeared.x, appeared.y], appearMs, deleted, goneMs, asleepAfterMs: sleptMs, nodes: Object.keys(fresh).length };
}

/**
 * The file panel open on a file that changes on disk in place (as Claude's Edit writes it): the
 * panel shows the new text where the reader was (the focus stays in it) and says that it changed.
 */
async function filePanelLive(page) {
  const workspace = process.env.ORBIT_WORKSPACE;
  if (!workspace) throw new Error('ORBIT_WORKSPACE is not set');
  await mapReady(page);
  const target = process.env.ORBIT_MAP_FILE ?? 'src/main.rs';
  const at = await nodeAt(page, target);
  if (!at) throw new Error(`${target} is not on the map`);
  await page.mouse.click(at.screenX, at.screenY);
  const dialog = page.getByRole('dialog', { name: target });
  await dialog.waitFor();
  await dialog.locator('li').first().waitFor();
  const focusedBefore = await page.evaluate(() => document.activeElement?.className ?? null);
  const { readFile } = await import('node:fs/promises');
  const old = await readFile(join(workspace, target), 'utf8');
  const added = '// edited in place while the panel was open';
  const t0 = Date.now();
  await writeFile(join(workspace, target), `${old}${added}\n`);
  await dialog.getByText(added).waitFor();
  const shownMs = Date.now() - t0;
  const said = await dialog.getByRole('status').textContent();
  if (!said?.startsWith(`${target} changed on disk at `)) throw new Error(`the panel says ${said}`);
  const focusedAfter = await page.evaluate(() => document.activeElement?.className ?? null);
  if (focusedAfter !== focusedBefore) throw new Error(`the focus moved from ${focusedBefore} to ${focusedAfter}`);
  const lines = await dialog.locator('li').count();
  await shot(page, 'file-changed');
  return { target, shownMs, said, focused: focusedAfter, lines };
}

async function sceneSearch(page) {
  await mapReady(page);
  const target = process.env.ORBIT_MAP_FILE ?? 'src/util.rs';
  const before = (await sceneOf(page)).camera;
  const box = page.getByRole('combobox', { name: 'Search files' });
  await box.click();
  await box.fill(process.env.ORBIT_MAP_QUERY ?? target);
  const option = page.getByRole('option', { name: target });
  await option.waitFor();
  await shot(page, 'matches');
  await box.press('Enter');
  const after = await untilScene(page, 'the flight to the file', (s) => s.selected === target && s.loop === 'asleep');
  if (before.x === after.camera.x && before.y === after.camera.y && before.zoom === after.camera.zoom) throw new Error('the camera did not move');
  const at = await nodeAt(page, target);
  const view = await page.getByRole('application', { name: 'Map view' }).boundingBox();
  const off = Math.hypot(at.screenX - (view.x + view.width / 2), at.screenY - (view.y + view.height / 2));
  if (off > 2) throw new Error(`the file is ${off.toFixed(1)} px off the view's centre`);
  await shot(page, 'flown');
  // The keyboard: / focuses the search; in the map, arrows pan, + zooms, Escape clears.
  const mapView = page.getByRole('application', { name: 'Map view' });
  await mapView.focus();
  await page.keyboard.press('/');
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
  if (focused !== 'Search files') throw new Error(`/ focused ${focused}`);
  await mapView.focus();
  const c0 = (await sceneOf(page)).camera;
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('+');
  const c1 = (await untilScene(page, 'the camera to settle', (s) => s.loop === 'asleep')).camera;
  if (!(c1.x < c0.x) || !(c1.zoom > c0.zoom)) throw new Error(`the keys did not pan and zoom: ${JSON.stringify({ c0, c1 })}`);
  await page.keyboard.press('Escape');
  const cleared = await sceneOf(page);
  if (cleared.selected !== null) throw new Error('Escape did not clear the selection');
  return { target, before, after: after.camera, offCentrePx: off };
}

async function sceneContext(page) {
  const { scene } = await mapReady(page);
  await page.evaluate(() => {
    const canvas = document.querySelector('canvas');
    window.__orbitLose = canvas.getContext('webgl2').getExtension('WEBGL_lose_context');
    window.__orbitLose.loseContext();
  });
  await untilScene(page, 'the context to be lost', (s) => s.contextLost);
  await page.evaluate(() => window.__orbitLose.restoreContext());
  const back = await untilScene(page, 'the context to come back and draw', (s) => !s.contextLost && s.draws > scene.draws && s.loop === 'asleep');
  const ms = await page.evaluate(() => window.orbitInspect.sceneRedraw());
  if (typeof ms !== 'number') throw new Error('sceneRedraw gave no time after the restore');
  // The page did not reload: the same page load still holds the first mark.
  const marks = await page.evaluate(() => performance.getEntriesByName('orbit:first-frame').length);
  await shot(page, 'restored');
  return { drawsBefore: scene.draws, drawsAfter: back.draws, redrawMs: ms, marks };
}

/** The helpers e2e/claude-map.mjs's scenarios use. */
function kit() {
  return { shot, inspect, until, untilScene, sceneOf, nodeAt, sleep, ask, mapReady };
}

// --- Run.

const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' });
let page;
try {
  page = await open(context);
  await shot(page, 'opened');
  const result = await SCENARIOS[name](page, context);
  const errors = await page.evaluate(() => window.orbitInspect.errors());
  const cspProblems = problems.filter((p) => /Content Security Policy|Refused to/i.test(p) && !/__orbitInline/.test(p));
  if (errors.length) throw new Error(`the page refused frames: ${errors.join(' | ')}`);
  const relevant = name === 'security' ? [] : cspProblems;
  if (relevant.length) throw new Error(`the browser reported: ${relevant.join(' | ')}`);
  await browser.close();
  finish({ scenario: name, ok: true, ...result, frames: undefined, screenshots: shotCount }, 0);
} catch (error) {
  if (page) await shot(page, 'failure').catch(() => {});
  const state = page ? await inspect(page).catch(() => null) : null;
  await browser.close().catch(() => {});
  finish({ scenario: name, ok: false, error: String(error?.message ?? error), state: summary(state), problems }, 1);
}
