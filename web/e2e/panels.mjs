// The panels' scenarios (issue 20): Settings, History, the MCP view, the
// Skills picker and file chips, Changes and Usage, in real Chromium through
// their accessible names and `window.orbitInspect.panels()`. run.mjs gives
// its helpers; each scenario returns what it saw for the Rust side to
// check against the fake Messages API's requests.

/** The scenarios' names. */
export const PANEL_SCENARIOS = ['panels-settings', 'panels-history', 'panels-mcp', 'panels-signin', 'panels-compose', 'panels-changes'];

const panelsOf = (page) => page.evaluate(() => window.orbitInspect.panels());

export function panelScenarios({ until, shot, ask, origin, timeout }) {
  async function untilPanels(page, what, predicate, wait = timeout) {
    const deadline = Date.now() + wait;
    let last;
    for (;;) {
      last = await panelsOf(page).catch(() => null);
      if (last && predicate(last)) return last;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; panels: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits until the shown conversation has finished `n` turns. */
  const turnsDone = (page, n) => until(page, `turn ${n} to end`, (s) => {
    const session = s.shown ? s.sessions[s.shown] : undefined;
    const ends = s.shown ? (s.transcripts[s.shown]?.kinds ?? []).filter((k) => k === 'turnEnd').length : 0;
    return session !== undefined && session.turns >= n && ends >= n && (session.phase === 'idle' || session.phase === 'failed');
  });

  /** Sends one action over a socket of the page's own origin (as a crafted page would); its ack. */
  const actRaw = (page, request) => page.evaluate(
    ({ url, request }) => new Promise((resolve) => {
      const ws = new WebSocket(url);
      const id = `raw-${Date.now()}`;
      ws.onopen = () => { ws.send(JSON.stringify({ type: 'resume', instanceId: null, lastSeq: null })); };
      ws.onmessage = (event) => {
        const frame = JSON.parse(event.data);
        if (frame.body?.type === 'snapshotEnd') ws.send(JSON.stringify({ type: 'action', id, request }));
        if (frame.body?.type === 'ack' && frame.body.id === id) { ws.close(); resolve(frame.body); }
      };
      ws.onerror = () => resolve({ ok: false, code: 'socket_error' });
      setTimeout(() => resolve({ ok: false, code: 'timeout' }), 10000);
    }),
    { url: `${origin.replace(/^http/, 'ws')}/ws?w=${new URL(page.url()).pathname.split('/')[2]}`, request },
  );

  async function openPanel(page, name) {
    const button = page.getByRole('button', { name, exact: true });
    if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    const dialog = page.getByRole('dialog', { name });
    await dialog.waitFor();
    return dialog;
  }

  const catalogReady = (page) => untilPanels(page, 'the catalog', (p) => p.catalog?.status === 'ready', Math.max(timeout, 60000));

  // Settings: a model chosen on the page reaches the next prompt, is
  // remembered across a reload until reset; bypass is never offered and a
  // crafted setPermissionMode to bypass is refused.
  async function settings(page) {
    await ask(page, 'First prompt, default model');
    await turnsDone(page, 1);
    const dialog = await openPanel(page, 'Settings');
    const { catalog } = await catalogReady(page);
    const model = dialog.getByRole('combobox', { name: 'Model' });
    const effort = dialog.getByRole('combobox', { name: 'Effort' });
    const mode = dialog.getByRole('combobox', { name: 'Permission mode' });
    await Promise.all([model.waitFor(), effort.waitFor(), mode.waitFor()]);
    const modes = await mode.evaluate((el) => Array.from(el.options, (o) => o.value));
    if (modes.some((m) => /bypass/i.test(m))) throw new Error(`bypass is offered: ${modes.join(', ')}`);
    const byDefault = catalog.models.find((m) => m.isDefault);
    const chosen = catalog.models.find((m) => !m.isDefault && m.value !== 'default' && m.resolvedModel !== byDefault?.resolvedModel);
    if (!chosen) throw new Error('the catalog lists no model besides the default');
    await model.selectOption(chosen.value);
    await untilPanels(page, 'the model choice', (p) => p.settings?.model.value === chosen.value && p.settings.model.source === 'page');
    await mode.selectOption('plan');
    await untilPanels(page, 'the mode choice', (p) => p.settings?.permissionMode.value === 'plan');
    await shot(page, 'settings');
    const bypass = await actRaw(page, { type: 'setPermissionMode', mode: 'bypassPermissions' });
    if (bypass.ok || bypass.code !== 'bypass_from_page') throw new Error(`a crafted bypass was not refused: ${JSON.stringify(bypass)}`);
    const still = await panelsOf(page);
    if (still.settings.permissionMode.value !== 'plan') throw new Error('the refused bypass changed the mode');
    // Remembered across a reload.
    await page.reload();
    await until(page, 'the page again', (s) => s.connection === 'open' && s.ready);
    const again = await untilPanels(page, 'the settings after a reload', (p) => p.settings !== null);
    if (again.settings.model.value !== chosen.value || again.settings.model.source !== 'page') throw new Error(`the choice was not remembered: ${JSON.stringify(again.settings.model)}`);
    await ask(page, 'Second prompt, chosen model');
    await turnsDone(page, 2);
    const dialog2 = await openPanel(page, 'Settings');
    const modelShown = await dialog2.getByRole('combobox', { name: 'Model' }).inputValue();
    await dialog2.getByRole('button', { name: 'Reset to defaults' }).click();
    const reset = await untilPanels(page, 'the reset', (p) => p.settings?.model.source !== 'page' && p.settings?.permissionMode.source !== 'page');
    await shot(page, 'settings-reset');
    return { chosen, modelShown, modes, bypass, reset: reset.settings };
  }

  // History lists the conversation had before Orbit restarted, filters as
  // the user types, and Continue resumes it (`--resume`).
  async function history(page) {
    // A big synthetic history (ORBIT_SCAN_TOTAL transcripts): while the
    // first scan runs the panel shows "n of m" and a progress bar, and the
    // page answers meanwhile (another panel opens, its controls read).
    let scan = null;
    if (process.env.ORBIT_SCAN_TOTAL) {
      const total = Number(process.env.ORBIT_SCAN_TOTAL);
      // A second socket of the page's origin records the live frames'
      // sizes while the scan runs: its progress goes on its own
      // (`historyProgress`, a few dozen bytes), the list only when it changed.
      await page.evaluate((url) => {
        const seen = { progress: 0, progressBytes: 0, progressDone: [], lists: 0, listBytes: 0, live: false };
        window.benchHistoryFrames = seen;
        const ws = new WebSocket(url);
        ws.onopen = () => { ws.send(JSON.stringify({ type: 'resume', instanceId: null, lastSeq: null })); };
        ws.onmessage = (event) => {
          const frame = JSON.parse(event.data);
          const type = frame.body?.type;
          if (type === 'snapshotEnd') seen.live = true;
          if (!seen.live) return;
          if (type === 'historyProgress') {
            seen.progress += 1;
            seen.progressBytes = Math.max(seen.progressBytes, event.data.length);
            if (frame.body.scanning && frame.body.total > 0) seen.progressDone.push([frame.body.done, frame.body.total]);
          } else if (type === 'history') {
            seen.lists += 1;
            seen.listBytes = Math.max(seen.listBytes, event.data.length);
          }
        };
      }, `${origin.replace(/^http/, 'ws')}/ws?w=${new URL(page.url()).pathname.split('/')[2]}`);
      // History opened at once (a click the page answers while the scan runs).
      const scanning = await openPanel(page, 'History');
      const status = scanning.getByRole('status');
      const deadline = Date.now() + Math.max(timeout, 60000);
      let text;
      let bar;
      for (;;) {
        text = (await status.textContent()) ?? '';
        const m = /… ([\d,]+) of ([\d,]+)/.exec(text);
        if (m && Number(m[1].replace(/,/g, '')) < Number(m[2].replace(/,/g, ''))) {
          bar = await scanning.getByRole('progressbar', { name: 'Reading transcripts' }).evaluate((el) => ({ value: el.value, max: el.max }));
          break;
        }
        if (Date.now() > deadline || /conversations?$/.test(text)) throw new Error(`no scan in progress was shown: ${text}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const seen = await panelsOf(page);
      await shot(page, 'history-scanning');
      const answeredWhileScanning = /^Reading Claude Code’s transcripts… [\d,]+ of [\d,]+/.test(text);
      // The page goes on answering: another panel opens and its control reads.
      const settings = await openPanel(page, 'Settings');
      const modes = await settings.getByRole('combobox', { name: 'Permission mode' }).evaluate((el) => el.options.length);
      scan = { progress: seen.history.progress ?? { done: 0, total }, status: text, bar, modes, answeredWhileScanning };
    }
    const dialog = await openPanel(page, 'History');
    const listed = await untilPanels(page, 'the history list', (p) => (p.history?.conversations.length ?? 0) > 0 && !p.history.scanning);
    if (scan !== null) scan.frames = await page.evaluate(() => window.benchHistoryFrames);
    const entry = listed.history.conversations[0];
    const filter = dialog.getByRole('searchbox', { name: 'Filter history' });
    await filter.fill('no-such-words-anywhere');
    const none = await dialog.getByRole('button', { name: 'Continue' }).count();
    await filter.fill(process.env.ORBIT_HISTORY_WORD ?? '');
    const some = await dialog.getByRole('button', { name: 'Continue' }).count();
    if (none !== 0 || some === 0) throw new Error(`the filter did not filter: ${none} then ${some}`);
    await shot(page, 'history');
    await dialog.getByRole('listitem').filter({ hasText: entry.title }).getByRole('button', { name: 'Continue' }).first().click();
    const s = await until(page, 'a conversation holding the id', (st) => st.conversations.some((c) => c.key === st.current && c.sessionId === entry.id));
    await page.getByText('This conversation continues an earlier one').waitFor();
    await ask(page, process.env.ORBIT_PROMPT ?? 'What was the word?');
    await turnsDone(page, 1);
    const bad = await actRaw(page, { type: 'continue', id: 'not-a-listed-id' });
    if (bad.ok || bad.code !== 'unknown_history_id') throw new Error(`an unlisted id was not refused: ${JSON.stringify(bad)}`);
    await shot(page, 'history-continued');
    return { id: entry.id, title: entry.title, current: s.current, none, some, scan };
  }

  // The MCP view against a real stdio server: connected with its tools;
  // Disable takes it out of the next prompt's process, Enable puts it back.
  async function mcp(page) {
    const dialog = await openPanel(page, 'MCP servers');
    const first = await untilPanels(page, 'the echo server connected', (p) => p.mcp?.servers.some((s) => s.name === 'echo' && s.status === 'connected'), Math.max(timeout, 60000));
    const server = dialog.getByRole('listitem', { name: 'echo' });
    await server.getByText('echo', { exact: true }).first().waitFor();
    const buttons = await server.getByRole('button').allTextContents();
    if (buttons.includes('Sign in') || buttons.includes('Sign out')) throw new Error(`a stdio server offers sign-in: ${buttons.join(', ')}`);
    await shot(page, 'mcp');
    await server.getByRole('button', { name: 'Disable' }).click();
    await untilPanels(page, 'echo disabled', (p) => p.mcp?.servers.some((s) => s.name === 'echo' && s.status === 'disabled') && p.mcp.restartPending);
    await dialog.getByText('starts a new process at its next prompt').waitFor();
    await shot(page, 'mcp-disabled');
    await ask(page, 'Prompt without echo');
    await turnsDone(page, 1);
    await openPanel(page, 'MCP servers');
    await server.getByRole('button', { name: 'Enable' }).click();
    await untilPanels(page, 'echo connected again', (p) => p.mcp?.servers.some((s) => s.name === 'echo' && s.status === 'connected'));
    await ask(page, 'Prompt with echo');
    await turnsDone(page, 2);
    await openPanel(page, 'MCP servers');
    await dialog.getByRole('button', { name: 'Reload' }).click();
    await untilPanels(page, 'the reload', (p) => /Reloaded/.test(p.mcp?.note ?? ''));
    return { tools: first.mcp.servers.find((s) => s.name === 'echo').tools, buttons };
  }

  // Sign-in of an HTTP server: the host opens the address (never sent to
  // the page), the server shows pending, then connected.
  async function signin(page) {
    const mark = process.env.ORBIT_AUTH_MARK ?? '/authorize';
    const frames = [];
    const dialog = await openPanel(page, 'MCP servers');
    await untilPanels(page, 'web needing auth', (p) => p.mcp?.servers.some((s) => s.name === 'web' && s.status === 'needs-auth'), Math.max(timeout, 60000));
    const server = dialog.getByRole('listitem', { name: 'web' });
    const buttons = await server.getByRole('button').allTextContents();
    await shot(page, 'signin-needed');
    await server.getByRole('button', { name: 'Sign in' }).click();
    const done = await untilPanels(page, 'web connected', (p) => {
      frames.push(JSON.stringify(p));
      return p.mcp?.servers.some((s) => s.name === 'web' && s.status === 'connected');
    }, Math.max(timeout, 60000));
    await shot(page, 'signin-connected');
    const everything = [
      ...frames,
      JSON.stringify(await page.evaluate(() => window.orbitInspect.state())),
      await page.content(),
    ].join('\n');
    if (everything.includes(mark) || everything.includes('/authorize')) throw new Error('the sign-in address reached the page');
    return { buttons, status: done.mcp.servers.find((s) => s.name === 'web').status, note: done.mcp.note };
  }

  // A picked skill goes as the leading slash command; a file chip (completed
  // by the server's matcher) as an @ mention.
  async function compose(page) {
    await catalogReady(page);
    await page.getByRole('button', { name: 'Skills' }).click();
    await page.getByRole('group', { name: 'Skills to use' }).getByRole('checkbox', { name: /review/ }).check();
    const add = page.getByRole('combobox', { name: 'Add file' });
    // The completion asks over the page's socket (`search` frames), not `/search`.
    const viaHttp = [];
    const onRequest = (r) => { if (r.url().includes('/search?')) viaHttp.push(r.url()); };
    page.on('request', onRequest);
    // The page is cross-origin isolated (COOP + COEP), so the answer comes
    // through the search worker's socket and the shared buffer
    // (`completionPath`); the first keystrokes may come over the channel
    // while the worker's socket opens.
    if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
    const option = page.getByRole('listbox', { name: 'Files' }).getByRole('option', { name: 'src/util.rs' });
    const paths = [];
    for (let tries = 0; ; tries += 1) {
      await add.fill('');
      await add.fill('utl');
      await option.waitFor();
      paths.push((await panelsOf(page)).completionPath);
      if (paths.at(-1) === 'worker') break;
      if (tries >= 40) throw new Error(`the completion never came through the search worker: ${paths.join(', ')}`);
      await page.waitForTimeout(250);
    }
    page.off('request', onRequest);
    if (viaHttp.length > 0) throw new Error(`the completion asked /search over HTTP: ${viaHttp.join(', ')}`);
    await add.press('Enter');
    const attached = await untilPanels(page, 'the chips', (p) => p.skills.length === 1 && p.files.length === 1);
    await shot(page, 'chips');
    await ask(page, 'Check it.');
    await turnsDone(page, 1);
    const s = await until(page, 'the prompt entry', (st) => (st.transcripts[st.shown]?.kinds ?? []).includes('prompt'));
    const after = await panelsOf(page);
    if (after.skills.length !== 0 || after.files.length !== 0) throw new Error('the chips were not spent');
    return { skills: attached.skills, files: attached.files, key: s.shown, completionPaths: paths };
  }

  // Changes lists the files an Edit and a Write changed, each with its diff
  // (made by the server from the calls' inputs) and opening the file panel;
  // the turn line says how many files changed; Usage shows the tokens and
  // the cost the CLI reported.
  async function changes(page) {
    await ask(page, 'Edit the readme and write a new file');
    await turnsDone(page, 1);
    const turnLine = await page.getByRole('log', { name: 'Conversation' }).getByText(/files? changed/).first().textContent();
    const dialog = await openPanel(page, 'Changes');
    const whole = dialog.getByRole('list', { name: 'Whole conversation' });
    await whole.getByRole('button', { name: 'README.md' }).waitFor();
    // The created file is linked once the live graph has it.
    await whole.getByRole('button', { name: 'src/extra.rs' }).waitFor();
    const files = await whole.getByRole('button', { name: /\.(md|rs)$/ }).allTextContents();
    const diffOf = (path) => whole.getByRole('figure', { name: `Diff of ${path}` }).locator('pre').innerText();
    const readmeDiff = await diffOf('README.md');
    const extraDiff = await diffOf('src/extra.rs');
    const headings = await dialog.getByRole('heading').allTextContents();
    await shot(page, 'changes');
    await whole.getByRole('button', { name: 'README.md' }).click();
    await page.getByRole('dialog', { name: 'README.md' }).waitFor();
    await page.getByRole('dialog', { name: 'README.md' }).getByRole('button', { name: 'Close' }).click();
    const usage = await openPanel(page, 'Usage');
    await usage.getByText('Session (list price)').waitFor();
    const terms = await usage.getByRole('term').allTextContents();
    const values = await usage.getByRole('definition').allTextContents();
    await shot(page, 'usage');
    const usageRows = Object.fromEntries(terms.map((t, i) => [t, values[i]]));
    return { files, readmeDiff, extraDiff, headings, turnLine, usage: usageRows };
  }

  return {
    'panels-settings': settings,
    'panels-history': history,
    'panels-mcp': mcp,
    'panels-signin': signin,
    'panels-compose': compose,
    'panels-changes': changes,
  };
}
