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
  await kit.ask(page, 'Read the files');
  const s = await untilLit(kit, page, 'both reads to light', (sc) => litOf(sc, 'read').length >= 2);
  const key = (await kit.inspect(page)).shown;
  const reads = litOf(s, 'read');
  const others = s.lit.filter((l) => l.effect !== 'read');
  await kit.shot(page, 'read');
  const star = starOf(s, key);
  // The bubble lights cyan once a comet has landed.
  const bubbleLit = await page.locator('.bubble[data-lit="read"]').count();
  const during = await kit.sceneOf(page);
  const after = await endAndSleep(kit, page);
  await kit.shot(page, 'read-ended');
  return { key, reads, others: others.length, star, loopDuring: during.loop, bubbleLit, ...after };
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

export const CLAUDE_MAP_SCENARIOS = {
  'claude-mcp': claudeMcp,
  'claude-read': claudeRead,
  'claude-edit': claudeEdit,
  'claude-subagent': claudeSubagent,
  'claude-two': claudeTwo,
};
