// A Claude Code session started in a terminal (issue 19), watched on the
// page: a scenario for web/e2e/run.mjs, given run.mjs's helpers (`kit`).
// The Rust test (crates/orbit/tests/it/watched_e2e.rs) starts the pinned
// `claude -p` with Orbit's hooks installed beside a real `orbit open`; the
// page must list it as `w1`, show its transcript read-only (the prompt box
// disabled, saying why), and light the file its Read named on the map
// (`window.orbitInspect.scene().lit`).

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The watched session shows as `w1`, read-only, its Read lit on the map. */
async function watchedSession(kit, page) {
  await kit.mapReady(page);
  // The harness starts the terminal's claude now.
  await writeFile(join(process.env.ORBIT_ARTIFACTS ?? 'e2e/artifacts', 'watched.ready'), 'ready\n');
  const listed = await kit.until(page, 'the terminal session in the list', (s) => s.conversations.some((c) => c.key === 'w1'));
  const tab = page.getByRole('tab', { name: /Terminal/ });
  await tab.click();
  await kit.until(page, 'w1 shown', (s) => s.shown === 'w1');
  // Its Read lights the file while its turn runs.
  const lit = await kit.untilScene(page, 'the Read to light README.md', (sc) => sc.lit.some((l) => l.path === 'README.md' && l.key === 'w1'), 60000);
  await kit.shot(page, 'watched-read');
  // Its transcript: the prompt typed in the terminal, the tool call.
  const log = page.getByRole('log', { name: 'Conversation' });
  const prompt = log.getByRole('article', { name: 'You' }).first();
  await prompt.waitFor({ timeout: 30000 });
  const promptText = (await prompt.textContent()) ?? '';
  const state = await kit.until(page, 'the Read in the transcript', (s) => (s.transcripts.w1?.kinds ?? []).includes('tool'));
  // Read-only: the box and Send are disabled, and the drawer says why.
  const box = page.getByRole('textbox', { name: 'Ask Claude' });
  const send = page.getByRole('button', { name: 'Send', exact: true });
  const hint = await page.getByRole('status').filter({ hasText: 'Read-only' }).first().textContent();
  await kit.shot(page, 'watched-read-only');
  return {
    listed: listed.conversations.map((c) => c.key),
    sessionId: state.conversations.find((c) => c.key === 'w1')?.sessionId ?? null,
    lit: lit.lit.filter((l) => l.key === 'w1').map((l) => ({ path: l.path, effect: l.effect })),
    promptText,
    kinds: state.transcripts.w1.kinds,
    boxDisabled: await box.isDisabled(),
    sendDisabled: await send.isDisabled(),
    hint,
  };
}

export const WATCHED_SCENARIOS = {
  'watched-session': watchedSession,
};
