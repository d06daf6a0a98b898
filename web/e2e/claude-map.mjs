// Claude on the map, end to end (issue 17): scenarios for web/e2e/run.mjs,
// each given run.mjs's helpers (`kit`) and a page of a real `orbit open`
// whose `claude` talks to the fake Messages API (the Rust test scripts the
// replies). They read the effects through `window.orbitInspect.scene()`
// (`lit`, `stars`, `stations`, `heldActivity`) and the accessibility
// contract, and take a screenshot of each effect.

const litOf = (scene, effect) => scene.lit.filter((l) => l.effect === effect).map((l) => l.path).sort();
const starOf = (scene, key, subagent = null) => scene.stars.find((s) => s.key === key && s.subagent === subagent);

/** Allows every permission card that shows (the scripts' tools are harmless), so a turn runs on. */
async function allowCards(kit, page) {
  const s = await kit.inspect(page);
  for (const [, session] of Object.entries(s.sessions ?? {})) {
    for (const card of session.pending ?? []) {
      if (card.kind !== 'permission') continue;
      const group = page.getByRole('group', { name: card.title });
      const allow = group.getByRole('button', { name: 'Allow', exact: true });
      // A card answered meanwhile is gone: the click gives up at once rather
      // than waiting (with the page's long default) for a button that will not come back.
      if (await allow.isVisible().catch(() => false)) await allow.click({ timeout: 2000 }).catch(() => {});
    }
  }
}

/** Polls the scene (allowing cards meanwhile) until `predicate` holds. */
async function untilLit(kit, page, what, predicate, timeout = 60000) {
  const deadline = Date.now() + timeout;
  let last;
  // What the effects showed meanwhile (each change once), for the failure's message.
  const seen = [];
  for (;;) {
    last = await kit.sceneOf(page).catch(() => null);
    if (last && predicate(last)) return last;
    const now = last && JSON.stringify({ lit: last.lit, stars: last.stars, stations: last.stations, held: last.heldActivity, hash: last.graphHash });
    if (now && seen[seen.length - 1] !== now) seen.push(now);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the scene went through: ${seen.slice(-12).join(' | ')}`);
    await allowCards(kit, page);
    await kit.sleep(25);
  }
}

/**
 * Records in the page, every ~16 ms until `stopRecording`, what the
 * effects show: `scene()`'s flash and comets, the flash canvas's and the
 * flow canvases' opacity as the browser computes it, and where the first
 * conversation's star button is on screen.
 */
async function startRecording(page) {
  await page.evaluate(() => {
    const log = [];
    window.__orbitEffectsLog = log;
    window.__orbitEffectsRecording = true;
    const opacities = (selector) => Array.from(document.querySelectorAll(selector), (e) => Number(getComputedStyle(e).opacity));
    const tick = () => {
      const s = window.orbitInspect.scene();
      const star = document.querySelector('.map-star:not(.map-star-sub)');
      const r = star && !star.hidden ? star.getBoundingClientRect() : null;
      log.push({
        flash: s.flash,
        flashOpacity: opacities('.map-flash')[0] ?? 0,
        flowShown: opacities('.map-flow').filter((o) => o > 0).length,
        comets: s.comets,
        cometElements: document.querySelectorAll('.map-comet').length,
        star: r ? [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)] : null,
        starPath: s.stars.find((x) => x.subagent === null)?.path ?? null,
        camera: s.camera ? `${s.camera.x}:${s.camera.y}:${s.camera.zoom}` : null,
        reads: s.lit.filter((l) => l.effect === 'read').map((l) => l.path),
        bubbleLit: document.querySelectorAll('.bubble[data-lit="read"]').length,
      });
      if (window.__orbitEffectsRecording && log.length < 6000) setTimeout(tick, 16);
    };
    tick();
  });
}

async function stopRecording(page) {
  return page.evaluate(() => {
    window.__orbitEffectsRecording = false;
    return window.__orbitEffectsLog ?? [];
  });
}

/** Waits for every conversation's turn to end; then how long until the loop slept, and what stays lit. */
async function endAndSleep(kit, page) {
  await kit.until(page, 'the turns to end', (s) => Object.values(s.sessions).every((x) => x.turns > 0 && (x.phase === 'idle' || x.phase === 'failed')));
  const ended = Date.now();
  const scene = await kit.untilScene(page, 'the loop to sleep after the turn', (s) => s.loop === 'asleep', 5000);
  return { asleepAfterMs: Date.now() - ended, litAfter: scene.lit.length, starsAfter: scene.stars };
}

/** A Read of an absolute and of a relative path lights exactly those files (after the comet); Bash, Grep and a path outside the graph light nothing. */
async function claudeRead(kit, page) {
  await kit.mapReady(page);
  await startRecording(page);
  // The effects' frames of their own during the turn (the frame budget on a software GPU: hud/ridealong.ts).
  const own0 = await kit.sceneOf(page);
  const t0 = Date.now();
  await kit.ask(page, 'Read the files');
  // The reply's thinking block fires the violet flash over the import lines.
  await untilLit(kit, page, 'the thinking flash', (sc) => sc.flash, 30000);
  await kit.shot(page, 'thinking');
  const s = await untilLit(kit, page, 'both reads to light', (sc) => litOf(sc, 'read').length >= 2);
  const key = (await kit.inspect(page)).shown;
  const reads = litOf(s, 'read');
  const others = s.lit.filter((l) => l.effect !== 'read');
  await kit.shot(page, 'read');
  const star = starOf(s, key);
  // The bubble lights cyan once a comet has landed (for a moment: seen by
  // the recorder, or now).
  const bubbleNow = await page.locator('.bubble[data-lit="read"]').count();
  const during = await kit.sceneOf(page);
  // Still in the turn (its closing text streams for seconds): the flow alone moves now.
  await kit.sleep(1500);
  const own1 = await kit.sceneOf(page);
  const turnMs = Date.now() - t0;
  // With the frame budget, the composer's caret is lit, not blinking (a blink is a presented frame).
  const caret = await page.getByRole('textbox', { name: 'Ask Claude' }).evaluate((el) => ({
    budget: document.documentElement.hasAttribute('data-frame-budget'),
    animation: getComputedStyle(el).getPropertyValue('caret-animation'),
  }));
  const after = await endAndSleep(kit, page);
  await kit.shot(page, 'read-ended');
  const log = await stopRecording(page);
  const flashing = log.filter((e) => e.flash);
  const bubbleLit = Math.max(bubbleNow, ...log.map((e) => e.bubbleLit ?? 0));
  return {
    key, reads, others: others.length, star, loopDuring: during.loop, loopLater: own1.loop, bubbleLit, ...after,
    effectOwnFrameMs: own1.effectOwnFrameMs,
    effectFramesInTurn: own1.effectFrames - own0.effectFrames,
    effectOwnFramesInTurn: own1.effectOwnFrames - own0.effectOwnFrames,
    turnMs,
    caret,
    // The flash as drawn: its canvas's opacity while `flash` held, and after.
    flashSamples: flashing.length,
    flashOpacityMax: Math.max(0, ...flashing.map((e) => e.flashOpacity)),
    flashOpacityAfter: log.length ? log[log.length - 1].flashOpacity : null,
    flowShownDuring: Math.max(0, ...log.map((e) => e.flowShown)),
    cometsSeen: Math.max(0, ...log.map((e) => e.comets)),
  };
}

/** An Edit pulses the file, its neighbours at half strength, rings its importers (the blast radius, with a toggle); a new file lights nothing until the (delayed) live update adds it. */
async function claudeEdit(kit, page) {
  await kit.mapReady(page);
  await kit.ask(page, 'Edit util, then write a new file');
  const edited = await untilLit(kit, page, 'the edit to light', (sc) => litOf(sc, 'edit').length > 0);
  await kit.shot(page, 'edit');
  const blastStatus = await page.locator('.map-blast-text').textContent();
  const toggle = page.getByRole('checkbox', { name: 'Blast radius' });
  await toggle.uncheck();
  const untoggled = await kit.sceneOf(page);
  await kit.shot(page, 'blast-off');
  await toggle.check();
  // The Write of a new file: its activity waits for the map's delta (delayed by the test switch).
  const held = await untilLit(kit, page, 'the create to be held', (sc) => sc.heldActivity > 0, 30000);
  const createdPath = process.env.ORBIT_NEW_FILE ?? 'src/extra.rs';
  const onMapWhileHeld = (await kit.nodeAt(page, createdPath)) !== null;
  const litWhileHeld = held.lit.filter((l) => l.path === createdPath).length;
  await kit.shot(page, 'create-held');
  const created = await untilLit(kit, page, 'the created file to glow', (sc) => litOf(sc, 'create').includes(createdPath), 30000);
  await kit.shot(page, 'create');
  const key = (await kit.inspect(page)).shown;
  const after = await endAndSleep(kit, page);
  return {
    key,
    edit: litOf(edited, 'edit'),
    neighbour: litOf(edited, 'neighbour'),
    blast: litOf(edited, 'blast'),
    blastStatus,
    blastWhenOff: litOf(untoggled, 'blast'),
    heldActivity: held.heldActivity,
    onMapWhileHeld,
    litWhileHeld,
    create: litOf(created, 'create'),
    star: starOf(created, key),
    ...after,
  };
}

/** A subagent's Read moves the subagent's own star and lights only its file; its star's popup shows it. */
async function claudeSubagent(kit, page) {
  await kit.mapReady(page);
  await kit.ask(page, 'Use a subagent');
  const s = await untilLit(kit, page, "the subagent's read", (sc) => sc.lit.some((l) => l.effect === 'read' && l.subagent !== null));
  const key = (await kit.inspect(page)).shown;
  const sub = s.stars.find((st) => st.subagent !== null);
  await kit.shot(page, 'subagent');
  const button = page.getByRole('button', { name: /^Subagent / });
  await button.first().click();
  const dialog = page.getByRole('dialog', { name: /^Subagent / });
  await dialog.waitFor();
  const popup = await dialog.textContent();
  await kit.shot(page, 'subagent-popup');
  await dialog.getByRole('button', { name: 'Close' }).click();
  const after = await endAndSleep(kit, page);
  return { key, lit: s.lit, stars: s.stars, subStar: sub ?? null, main: starOf(s, key), popup, ...after };
}

/** Two conversations at once keep their own stars, each over its own file. */
async function claudeTwo(kit, page) {
  await kit.mapReady(page);
  await kit.ask(page, 'First conversation');
  await untilLit(kit, page, 'the first star on its file', (sc) => sc.stars.some((st) => st.subagent === null && st.path !== null));
  await kit.ask(page, 'Second conversation');
  const s = await untilLit(kit, page, 'two stars on two files', (sc) => {
    const on = sc.stars.filter((st) => st.subagent === null && st.path !== null);
    return on.length >= 2;
  });
  await kit.shot(page, 'two-stars');
  const colours = await page.locator('.map-star:not(.map-star-sub)').count();
  const after = await endAndSleep(kit, page);
  return { stars: s.stars, lit: s.lit, starButtons: colours, ...after };
}

/** An MCP call brings its server's station out beside the star, back on the answer, red on an error. */
async function claudeMcp(kit, page) {
  await kit.mapReady(page);
  await kit.ask(page, 'Ask the echo server');
  const station = (sc) => sc.stations.find((st) => st.server === 'echo');
  const back = await untilLit(kit, page, 'the station with its answer', (sc) => station(sc)?.state === 'back');
  await kit.shot(page, 'mcp');
  const failed = await untilLit(kit, page, 'the station red', (sc) => station(sc)?.state === 'error');
  await kit.shot(page, 'mcp-error');
  const after = await endAndSleep(kit, page);
  const stationsAfter = (await kit.sceneOf(page)).stations.length;
  return { back: back.stations, failed: failed.stations, lit: failed.lit.length, stationsAfter, ...after };
}

/**
 * `prefers-reduced-motion: reduce` (the page's media emulated): the reads
 * light at once and stay, the star jumps from place to place (no position
 * between), no comet flies and the flow does not run.
 */
async function claudeReduced(kit, page) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await kit.mapReady(page);
  await startRecording(page);
  await kit.ask(page, 'Read the files, calmly');
  const s = await untilLit(kit, page, 'both reads to light', (sc) => litOf(sc, 'read').length >= 2);
  await kit.shot(page, 'reduced-motion');
  const after = await endAndSleep(kit, page);
  const log = await stopRecording(page);
  // Where the star was seen: at home, or over a file; each place held, none
  // between. A move of the camera (the map refitted) moves every place: the
  // places are counted within each camera.
  const places = [];
  let moves = 0;
  let last = null;
  for (const e of log) {
    if (!e.star) continue;
    const at = { camera: e.camera, star: e.star };
    if (last && last.camera === at.camera && (last.star[0] !== at.star[0] || last.star[1] !== at.star[1])) moves += 1;
    if (!last || last.star[0] !== at.star[0] || last.star[1] !== at.star[1]) places.push(e.star);
    last = at;
  }
  return {
    reads: litOf(s, 'read'),
    starPaths: [...new Set(log.map((e) => e.starPath))],
    places,
    moves,
    cometsSeen: Math.max(0, ...log.map((e) => Math.max(e.comets, e.cometElements))),
    flowShown: Math.max(0, ...log.map((e) => e.flowShown)),
    samples: log.length,
    ...after,
  };
}

/**
 * The hash rule's "passed through" case: the Read's activity (resolved
 * against the graph before the Write) is held by the server's test switch
 * (`ORBIT_TEST_DELAY_ACTIVITY_MS`) while the Write's live update moves the
 * map to a newer graph; arriving then, it still lights the file it named.
 */
async function claudePassed(kit, page) {
  const { scene: scene0 } = await kit.mapReady(page);
  const before = scene0.graphHash;
  await kit.ask(page, 'Read the readme, then write a file');
  const createdPath = process.env.ORBIT_NEW_FILE ?? 'src/extra.rs';
  // The Write's live update reaches the map first: a new hash, and still nothing lit.
  const moved = await untilLit(kit, page, 'the map to move on', (sc) => sc.graphHash !== before && sc.nodes > scene0.nodes, 30000);
  const onMapFirst = (await kit.nodeAt(page, createdPath)) !== null;
  const litBefore = moved.lit.length;
  await kit.shot(page, 'passed-before');
  const s = await untilLit(kit, page, 'the late read to light', (sc) => litOf(sc, 'read').length > 0, 30000);
  await kit.shot(page, 'passed-lit');
  const after = await endAndSleep(kit, page);
  return {
    hashBefore: before,
    hashMoved: moved.graphHash,
    hashWhenLit: s.graphHash,
    onMapFirst,
    litBefore,
    reads: litOf(s, 'read'),
    heldWhenLit: s.heldActivity,
    ...after,
  };
}

export const CLAUDE_MAP_SCENARIOS = {
  'claude-mcp': claudeMcp,
  'claude-read': claudeRead,
  'claude-edit': claudeEdit,
  'claude-subagent': claudeSubagent,
  'claude-two': claudeTwo,
  'claude-reduced': claudeReduced,
  'claude-passed': claudePassed,
};
