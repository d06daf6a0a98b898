// A/B: opening a Task's subagent history of 400 entries, then 10 messages of 5 more while it is open.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
const dists = { before: process.argv[2], after: process.argv[3] };
const rounds = Number(process.argv[4] ?? 3);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
async function one(dist) {
  const mock = spawn(process.execPath, ['/work/wt/rev/web/e2e/mock-server.mjs'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, MOCK_DIST: dist } });
  const [login] = await once(createInterface({ input: mock.stdout }), 'line');
  const origin = new URL(login).origin;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(login);
  for (let i = 0; i < 100; i++) { const s = await page.evaluate(() => window.orbitInspect.state()).catch(() => null); if (s && s.ready) break; await page.waitForTimeout(100); }
  await fetch(`${origin}/mock/flood?n=400`);
  const last = Number(await (await fetch(`${origin}/mock/flood?n=0&subagent=400`)).text());
  const task = `task${last - 400}`;
  await page.waitForTimeout(1500);
  // The longest gap between two animation frames (a task that held the main thread shows as one).
  await page.evaluate(() => { window.__long = []; let last = performance.now(); const tick = (now) => { window.__long.push(now - last); last = now; requestAnimationFrame(tick); }; requestAnimationFrame(tick); });
  const show = page.getByRole('button', { name: "Show the subagent's work" }).last();
  await show.scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const busy = async () => { const { metrics } = await cdp.send('Performance.getMetrics'); const m = Object.fromEntries(metrics.map((x) => [x.name, x.value])); return (m.TaskDuration ?? 0) * 1000; };
  await page.evaluate(() => { window.__long = []; });
  const t0 = await busy();
  await show.click();
  await page.waitForFunction(() => document.querySelectorAll('.subagent [data-seq]').length >= 400);
  await page.waitForTimeout(500);
  const open = await page.evaluate(() => window.__long.slice());
  const t1 = await busy();
  await page.evaluate(() => { window.__long = []; });
  for (let i = 0; i < 10; i++) { await fetch(`${origin}/mock/flood?n=0&subagent=5&task=${task}`); await page.waitForTimeout(150); }
  await page.waitForTimeout(500);
  const updates = await page.evaluate(() => window.__long.slice());
  const t2 = await busy();
  await context.close();
  mock.kill();
  return { openTaskMs: Math.round(t1 - t0), updTaskMs: Math.round(t2 - t1), openMaxGap: Math.round(Math.max(0, ...open)), updMaxGap: Math.round(Math.max(0, ...updates)), updOver50: updates.filter((g) => g > 50).length };
}
const out = { before: [], after: [] };
for (let r = 0; r < rounds; r++) for (const k of ['before', 'after']) out[k].push(await one(dists[k]));
for (const k of ['before', 'after']) console.log(k, JSON.stringify(out[k]));
await browser.close();
