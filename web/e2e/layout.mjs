// What a user's pass in Chromium found in the page's layout (the ux pass of
// issues 15 and 16), checked where only a real browser lays the page out: a
// scenario for web/e2e/run.mjs, given run.mjs's helpers (`kit`). The Rust
// test (crates/orbit/tests/it/page_e2e.rs, `layout_keeps_everything_in_view`)
// scripts a long reply, then a question; the mock host (mock-all.mjs) floods
// the conversation instead (ORBIT_FLOOD_URL) and asks on "question".
//
// - An open panel keeps its room beside a long conversation (the log's
//   content squeezed it to nothing).
// - A question card scrolls within its part of the column: the prompt box
//   and Send stay on the page (a tall card pushed them off it).
// - The conversation search bar has the column's margins (its close button
//   was cut at the window's edge); the words it finds are highlighted, the
//   first in view (a long reply was shown at its middle, the word nowhere).
// - In the stacked layout (800 px wide) the Keypad button covers no button
//   of the drawer (it sat on Stop).
// - The map changes colours with the page's colour scheme while open.
// - The selected file's status and the caption have a background of their own.
// - The map's focus ring is seen, and its keys are shown while it has the focus
//   (until a key is used).
// - Nothing moves as the page loads: the panels' buttons and the prompt's
//   attachments row come after the first frame, in room kept for them.

import { inflateSync } from 'node:zlib';

const disjoint = (a, b) => a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;

/** The colour of one screen pixel, [r, g, b], from a 1 x 1 screenshot (each row of a PNG is a filter byte, then the pixel; unfiltered for one pixel). */
async function pixel(page, x, y) {
  const png = await page.screenshot({ clip: { x: Math.floor(x), y: Math.floor(y), width: 1, height: 1 } });
  const data = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('ascii', at + 4, at + 8) === 'IDAT') data.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  return [raw[1], raw[2], raw[3]];
}

/**
 * The layout shifts of the page's load (the browser's `layout-shift` entries, none after an input),
 * read once the parts that come after the first frame are there: the panels' buttons and the
 * prompt's attachments row (Skills) arrive in room kept for them, so nothing moves.
 */
async function loadShifts(page) {
  await page.getByRole('toolbar', { name: 'Panels' }).getByRole('button', { name: 'History', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Skills', exact: true }).waitFor();
  return page.evaluate(() => new Promise((resolve) => {
    const seen = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.hadRecentInput) continue;
        seen.push({ at: Math.round(e.startTime), value: e.value, moved: (e.sources ?? []).map((s) => `${s.node?.className || s.node?.nodeName || '?'} ${Math.round(s.previousRect.y)}->${Math.round(s.currentRect.y)}`) });
      }
    }).observe({ type: 'layout-shift', buffered: true });
    // Buffered entries come in the observer's first callback.
    setTimeout(() => resolve({ total: seen.reduce((sum, e) => sum + e.value, 0), shifts: seen }), 200);
  }));
}

async function layout(kit, page) {
  const out = {};
  await kit.mapReady(page);

  // Nothing moves at the start: the panels' buttons and the Skills row (~1.5 s after the load on the real
  // server) pushed the conversation and the drawer down (a layout shift of 0.04).
  out.loadShifts = await loadShifts(page);
  if (out.loadShifts.total > 0.001) throw new Error(`the page moved as it loaded: ${JSON.stringify(out.loadShifts)}`);

  // The map's colours follow a change of the colour scheme (run.mjs opens the page dark).
  const view = await page.getByRole('application', { name: 'Map view' }).boundingBox();
  const mapPixel = () => pixel(page, view.x + view.width - 4, view.y + view.height / 2);
  const dark = await mapPixel();
  await page.emulateMedia({ colorScheme: 'light' });
  let light = dark;
  for (let i = 0; i < 40 && light.join() === dark.join(); i += 1) {
    await kit.sleep(100);
    light = await mapPixel();
  }
  await kit.shot(page, 'light-scheme');
  if (light.join() === dark.join() || light.some((c) => c < 200)) throw new Error(`the map kept its colours when the scheme turned light: ${dark} then ${light}`);
  await page.emulateMedia({ colorScheme: 'dark' });
  out.mapPixels = { dark, light };

  // The map's focus ring is seen (it was under the canvas), and its keys are shown while it has the focus.
  const edge = () => pixel(page, view.x + 1, view.y + view.height / 2);
  const unfocused = await edge();
  await page.getByRole('combobox', { name: 'Search files' }).focus();
  await page.keyboard.press('Shift+Tab');
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
  if (focused !== 'Map view') throw new Error(`Shift+Tab from the search box went to ${focused}, not the map`);
  await kit.sleep(200);
  const ring = await edge();
  const keys = await page.locator('#map-keys').boundingBox();
  await kit.shot(page, 'map-focused');
  out.focus = { unfocused, ring, keys };
  if (ring.join() === unfocused.join()) throw new Error(`the map's focus ring is not seen: its edge is ${ring} with and without the focus`);
  if (!keys || keys.width < 100 || keys.height < 10) throw new Error(`the map's keys are not shown while it has the focus: ${JSON.stringify(keys)}`);
  // Once a key is used they go (they covered part of a short map).
  await page.keyboard.press('ArrowUp');
  const afterKey = await page.locator('#map-keys').boundingBox();
  if (afterKey && afterKey.width > 10) throw new Error(`the map's keys stayed after a key was used: ${JSON.stringify(afterKey)}`);
  await page.keyboard.press('0');
  await kit.untilScene(page, 'the map fitted again', (sc) => sc.loop === 'asleep');

  // The selected file's status and the caption sit on a plate (over the map's lines they were unreadable).
  await page.getByRole('application', { name: 'Map view' }).focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.querySelector('.map-status')?.textContent?.startsWith('Selected'));
  const plates = await page.evaluate(() => ['.map-status', '.scene-caption'].map((s) => getComputedStyle(document.querySelector(s)).backgroundColor));
  out.plates = plates;
  if (plates.some((c) => c === 'rgba(0, 0, 0, 0)' || c === 'transparent')) throw new Error(`the map's status or caption has no background: ${plates}`);

  // The stacked layout: the Keypad button (mounted once the page settled) covers none of the drawer's buttons.
  await page.setViewportSize({ width: 800, height: 800 });
  const keypad = page.getByRole('button', { name: 'Keypad', exact: true });
  await keypad.waitFor();
  await kit.sleep(200);
  const keypadBox = await keypad.boundingBox();
  for (const name of ['Stop', 'Stop all', 'Send', 'New conversation']) {
    const box = await page.getByRole('button', { name, exact: true }).boundingBox();
    if (box && !disjoint(keypadBox, box)) {
      await kit.shot(page, 'narrow-overlap');
      throw new Error(`in the stacked layout the Keypad button covers ${name}: ${JSON.stringify(keypadBox)} over ${JSON.stringify(box)}`);
    }
  }
  await kit.shot(page, 'narrow');

  // A page zoomed to 200% (640x400 CSS px: a 120 px map): the legend, the search box, the Keypad button and
  // the caption cover none of each other.
  await page.setViewportSize({ width: 640, height: 400 });
  await kit.sleep(200);
  const zoomed = await page.evaluate(() => Object.fromEntries(['.map-legend', '.map-search-box', '.keypad-toggle', '.scene-caption'].map((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return [s, r ? { x: r.x, y: r.y, width: r.width, height: r.height } : null];
  })));
  out.zoomed = zoomed;
  const parts = Object.entries(zoomed);
  for (const [i, [a, boxA]] of parts.entries()) {
    for (const [b, boxB] of parts.slice(i + 1)) {
      if (boxA && boxB && !disjoint(boxA, boxB)) {
        await kit.shot(page, 'zoomed-overlap');
        throw new Error(`at 640x400 ${a} covers ${b}: ${JSON.stringify(boxA)} over ${JSON.stringify(boxB)}`);
      }
    }
  }
  await kit.shot(page, 'zoomed-200');

  // A short window with a long conversation.
  await page.setViewportSize({ width: 1280, height: 600 });
  await kit.ask(page, 'Tell me a long story');
  await kit.until(page, 'the reply', (s) => s.sessions?.[s.shown]?.phase === 'idle' && (s.transcripts?.[s.shown]?.kinds ?? []).includes('turnEnd'));
  if (process.env.ORBIT_FLOOD_URL) {
    const url = new URL(process.env.ORBIT_FLOOD_URL);
    url.searchParams.set('n', '60');
    await fetch(url);
  }
  const log = page.getByRole('log', { name: 'Conversation' });
  await kit.sleep(300);
  const long = await log.evaluate((el) => el.scrollHeight > el.clientHeight * 1.5);
  if (!long) throw new Error('the conversation is not long enough for the check');

  // An open panel keeps its room.
  await page.getByRole('button', { name: 'History', exact: true }).click();
  const panel = page.locator('.panel:not([hidden])').first();
  await panel.waitFor();
  await kit.sleep(300);
  const room = await panel.evaluate((el) => ({ height: el.getBoundingClientRect().height, content: el.scrollHeight }));
  await kit.shot(page, 'panel-beside-long-log');
  out.panel = room;
  if (room.height < Math.min(room.content, 120) - 1) throw new Error(`the open History panel was squeezed to ${room.height} px (its content ${room.content} px)`);
  await page.getByRole('button', { name: 'History', exact: true }).click();

  // The conversation search's bar, inside the column's margins.
  await log.focus();
  await page.keyboard.press('Control+f');
  const close = page.getByRole('button', { name: 'Close search' });
  await close.waitFor();
  const side = await page.locator('aside.side').boundingBox();
  const closeBox = await close.boundingBox();
  const inputBox = await page.getByRole('searchbox', { name: 'Find in conversation' }).boundingBox();
  out.searchBar = { side, close: closeBox, input: inputBox };
  if (closeBox.x + closeBox.width > side.x + side.width - 8 || inputBox.x < side.x + 8) {
    await kit.shot(page, 'search-bar');
    throw new Error(`the search bar touches the column's edges: ${JSON.stringify(out.searchBar)}`);
  }
  // The words found are highlighted, and the first is in view (a long reply was shown at its middle).
  const word = process.env.ORBIT_FLOOD_URL ? 'Entry 5:' : 'Paragraph 37 of';
  await page.getByRole('searchbox', { name: 'Find in conversation' }).fill(word);
  await kit.sleep(300);
  await kit.shot(page, 'search-highlight');
  const found = await page.evaluate(() => {
    const marks = CSS.highlights.get('orbit-search');
    const first = marks ? [...marks][0]?.getBoundingClientRect() : null;
    const log = document.querySelector('[role="log"]').getBoundingClientRect();
    return { marks: marks?.size ?? 0, first: first && { top: first.top, bottom: first.bottom }, log: { top: log.top, bottom: log.bottom } };
  });
  out.searchHighlight = found;
  if (found.marks < 1 || !found.first || found.first.top < found.log.top || found.first.bottom > found.log.bottom) {
    throw new Error(`the word found is not highlighted in view: ${JSON.stringify(found)}`);
  }
  await close.click();
  const cleared = await page.evaluate(() => CSS.highlights.has('orbit-search'));
  if (cleared) throw new Error('the highlight stayed after the search closed');

  // A question card: the prompt box and Send stay on the page.
  await kit.ask(page, 'Ask me a question');
  const send = page.getByRole('button', { name: 'Send answers' });
  await send.waitFor();
  await kit.sleep(300);
  await kit.shot(page, 'question-in-short-window');
  const fits = await page.evaluate(() => {
    const box = document.querySelector('textarea.prompt-box')?.getBoundingClientRect();
    return { scroll: document.scrollingElement.scrollHeight, inner: window.innerHeight, boxBottom: box?.bottom ?? Infinity };
  });
  out.question = fits;
  if (fits.scroll > fits.inner || fits.boxBottom > fits.inner) throw new Error(`the question card pushed the prompt box off the page: ${JSON.stringify(fits)}`);
  await page.getByRole('button', { name: 'Skip', exact: true }).click();
  await kit.until(page, 'the card answered', (s) => (s.sessions?.[s.shown]?.pending ?? []).length === 0);
  return out;
}

export const LAYOUT_SCENARIOS = { layout };
