import { describe, expect, it, vi } from 'vitest';
import type { CatalogState, FileDiff, HistoryEntry, McpState, PageRequest, SearchMatch, SettingsState } from '../src/protocol/types';
import { mountPanels } from '../src/hud/panels';
import { changesOf, filesChangedIn, tokens, usageRows } from '../src/hud/panels/changes';
import { channelFirst, Composer, MAX_FILES, MAX_SKILLS, pickDropped } from '../src/hud/panels/composer';
import { ChannelDropped } from '../src/protocol/channel';
import { matchesFilter } from '../src/hud/panels/history';
import { Drawer } from '../src/hud/drawer';
import { applyFrame, initialState, type PageState } from '../src/state/store';
import { describeAction } from '../src/state/outbox';
import { entry, session, workspace } from './fixtures';

const catalog: CatalogState = {
  status: 'ready',
  message: null,
  cliVersion: '2.1.0',
  models: [
    { value: 'default', displayName: 'Default', description: null, resolvedModel: 'claude-opus-5', isDefault: true, effortLevels: ['low', 'high'] },
    { value: 'sonnet', displayName: 'Sonnet', description: null, resolvedModel: 'claude-sonnet-5', isDefault: false, effortLevels: ['low', 'medium'] },
    { value: 'haiku', displayName: 'Haiku', description: null, resolvedModel: 'claude-haiku-5', isDefault: false, effortLevels: [] },
  ],
  skills: [{ name: 'review', description: 'Review it', scope: 'project' }],
};

function settings(over: Partial<SettingsState> = {}): SettingsState {
  return {
    model: { value: null, source: 'default' },
    effort: { value: null, source: 'default' },
    permissionMode: { value: null, source: 'default' },
    path: { value: '/opt/claude', source: 'settings' },
    executable: '/opt/claude',
    extraArgs: ['--add-dir', '../shared'],
    extraArgsSource: 'settings',
    settingsFile: '/home/u/.config/orbit/settings.json',
    warnings: [],
    ...over,
  };
}

function historyEntry(id: string, title: string, over: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    id, title, prompts: [title], promptCount: 1, models: ['claude-opus-5'], gitBranch: 'main',
    filesTouched: [], mcpServers: [], skills: [], subagents: 0, created: null, modifiedMs: 1_700_000_000_000, open: null, ...over,
  };
}

const mcp: McpState = {
  servers: [
    { name: 'echo', status: 'connected', scope: 'user', transport: 'stdio', version: '1.2.3', toolCount: 1, tools: ['echo'], error: null, actions: ['reconnect', 'disable'] },
    { name: 'web', status: 'needs-auth', scope: 'project', transport: 'http', version: null, toolCount: 0, tools: [], error: 'token expired', actions: ['reconnect', 'disable', 'signin'] },
  ],
  working: null,
  note: null,
  restartPending: false,
};

function setup(over: { settings?: SettingsState; search?: (q: string, limit: number) => Promise<SearchMatch[]> } = {}) {
  const sent: PageRequest[] = [];
  const opened: string[] = [];
  const panels = mountPanels({
    workspaceId: 'w1',
    send: (r) => `id${sent.push(r)}`,
    show: () => {},
    openFile: (p) => { opened.push(p); },
    search: over.search ?? (() => Promise.resolve([])),
  });
  document.body.replaceChildren(panels.toolbar, panels.el, panels.composer.el);
  const state: PageState = initialState();
  state.connection = 'open';
  applyFrame(state, { seq: null, body: { type: 'workspace', ...workspace, trusted: true } });
  applyFrame(state, { seq: 1, body: { type: 'catalog', ...catalog } });
  applyFrame(state, { seq: 2, body: { type: 'settings', ...(over.settings ?? settings()) } });
  applyFrame(state, { seq: 3, body: { type: 'mcp', ...mcp } });
  applyFrame(state, { seq: 4, body: { type: 'history', scanning: false, error: null, conversations: [historyEntry('b', 'Newer about maps', { gitBranch: 'feature/maps' }), historyEntry('a', 'Older about tests')] } });
  panels.render(state, null);
  const button = (name: string, root: ParentNode = document) => Array.from(root.querySelectorAll('button')).find((b) => b.textContent === name || b.getAttribute('aria-label') === name);
  const dialog = (name: string) => Array.from(document.querySelectorAll<HTMLElement>('[role="dialog"]')).find((d) => d.querySelector('h2')?.textContent === name);
  const open = (name: string) => { button(name)?.click(); const d = dialog(name); if (!d) throw new Error(`no ${name}`); return d; };
  return { sent, opened, panels, state, button, dialog, open };
}

const select = (root: ParentNode, label: string) => {
  const found = Array.from(root.querySelectorAll('label')).find((l) => l.textContent.startsWith(label))?.querySelector('select');
  if (!found) throw new Error(`no ${label}`);
  return found;
};

describe('the panel buttons', () => {
  it('are named as the issue says and open one panel at a time', () => {
    const { button, open, dialog, panels } = setup();
    for (const name of ['History', 'MCP servers', 'Settings', 'Changes', 'Usage']) expect(button(name), name).toBeDefined();
    open('History');
    expect(dialog('History')?.hidden).toBe(false);
    open('Settings');
    expect(dialog('History')?.hidden).toBe(true);
    expect(panels.inspect().open).toBe('Settings');
  });
});

describe('Settings', () => {
  it('offers the catalog models with the default marked, the chosen model’s efforts, and never bypass', () => {
    const { open, sent } = setup();
    const d = open('Settings');
    const model = select(d, 'Model');
    expect(Array.from(model.options, (o) => o.textContent)).toEqual(['Default (Default)', 'Sonnet', 'Haiku']);
    const mode = select(d, 'Permission mode');
    expect(Array.from(mode.options, (o) => o.value)).toEqual(['default', 'acceptEdits', 'plan']);
    const effort = select(d, 'Effort');
    expect(Array.from(effort.options, (o) => o.value)).toEqual(['', 'low', 'high']);
    model.value = 'haiku';
    model.dispatchEvent(new Event('change'));
    expect(sent).toEqual([{ type: 'setModel', model: 'haiku' }]);
  });

  it('offers no effort for a model without levels and says where each value comes from', () => {
    const { open, state, panels } = setup({ settings: settings({ model: { value: 'haiku', source: 'page' }, permissionMode: { value: 'bypassPermissions', source: 'settings' } }) });
    const d = open('Settings');
    panels.render(state, null);
    expect(select(d, 'Effort').disabled).toBe(true);
    expect(d.textContent).toContain('haiku: chosen here, remembered for this workspace');
    // bypass from settings.json is said, not offered.
    const mode = select(d, 'Permission mode');
    expect(mode.disabled).toBe(true);
    expect(Array.from(mode.options, (o) => o.value)).not.toContain('bypassPermissions');
    expect(d.textContent).toContain('only settings.json can change it');
    expect(d.textContent).toContain('--add-dir ../shared (from settings.json)');
    expect(d.querySelectorAll('input, textarea').length).toBe(0);
  });

  it('resets to the defaults only when a page choice is in force', () => {
    const first = setup();
    expect(first.button('Reset to defaults', first.open('Settings'))?.disabled).toBe(true);
    const { open, button, sent } = setup({ settings: settings({ effort: { value: 'low', source: 'page' } }) });
    const reset = button('Reset to defaults', open('Settings'));
    expect(reset?.disabled).toBe(false);
    reset?.click();
    expect(sent).toEqual([{ type: 'resetSettings' }]);
  });
});

describe('History', () => {
  it('asks for a fresh list when opened, lists newest first, filters as the user types, and continues an id of the list', () => {
    const { open, sent, state, panels } = setup();
    const d = open('History');
    expect(sent).toEqual([{ type: 'history' }]);
    const titles = () => Array.from(d.querySelectorAll('.history-title'), (t) => t.textContent);
    expect(titles()).toEqual(['Newer about maps', 'Older about tests']);
    const filter = d.querySelector('input');
    if (!filter) throw new Error('no filter');
    filter.value = 'feature/maps';
    filter.dispatchEvent(new Event('input'));
    panels.render(state, null);
    expect(titles()).toEqual(['Newer about maps']);
    const cont = Array.from(d.querySelectorAll('button')).find((b) => b.textContent === 'Continue');
    cont?.click();
    expect(sent.at(-1)).toEqual({ type: 'continue', id: 'b' });
  });

  it('matches every word, case-insensitively, over title, prompts, branch and files', () => {
    const e = historyEntry('x', 'Fix the parser', { filesTouched: ['/w/src/lexer.rs'], gitBranch: 'wip' });
    expect(matchesFilter(e, 'PARSER lexer')).toBe(true);
    expect(matchesFilter(e, 'parser nothing')).toBe(false);
    expect(matchesFilter(e, '  ')).toBe(true);
  });

  it('says a scan is running', () => {
    const { open, state, panels } = setup();
    const d = open('History');
    applyFrame(state, { seq: 9, body: { type: 'history', scanning: true, error: null, conversations: [] } });
    panels.render(state, null);
    expect(d.textContent).toContain('Reading Claude Code’s transcripts');
    const bar = d.querySelector<HTMLProgressElement>('progress[aria-label="Reading transcripts"]');
    expect(bar?.hidden).toBe(true);
    applyFrame(state, { seq: 10, body: { type: 'history', scanning: true, error: null, progress: { done: 120, total: 2000 }, conversations: [] } });
    panels.render(state, null);
    expect(d.querySelector('[role="status"]')?.textContent).toBe('Reading Claude Code’s transcripts… 120 of 2,000');
    expect([bar?.hidden, bar?.value, bar?.max]).toEqual([false, 120, 2000]);
    applyFrame(state, { seq: 11, body: { type: 'history', scanning: false, error: null, progress: null, conversations: [historyEntry('a', 'Done')] } });
    panels.render(state, null);
    expect(bar?.hidden).toBe(true);
  });

  it('takes the scan’s progress on its own (historyProgress) and keeps the list it has', () => {
    const { open, state, panels } = setup();
    const d = open('History');
    const list = [historyEntry('b', 'Newer'), historyEntry('a', 'Older')];
    applyFrame(state, { seq: 12, body: { type: 'history', scanning: false, error: null, conversations: list } });
    applyFrame(state, { seq: 13, body: { type: 'historyProgress', scanning: true, done: 0, total: 0 } });
    panels.render(state, null);
    const bar = d.querySelector<HTMLProgressElement>('progress[aria-label="Reading transcripts"]');
    expect(d.querySelector('[role="status"]')?.textContent).toBe('Reading Claude Code’s transcripts… (2 listed so far)');
    expect(bar?.hidden).toBe(true);
    applyFrame(state, { seq: 14, body: { type: 'historyProgress', scanning: true, done: 700, total: 2000 } });
    panels.render(state, null);
    expect(d.querySelector('[role="status"]')?.textContent).toBe('Reading Claude Code’s transcripts… 700 of 2,000 (2 listed so far)');
    expect([bar?.hidden, bar?.value, bar?.max]).toEqual([false, 700, 2000]);
    expect(state.history?.conversations).toBe(list);
    // The scan ended with the same list: only that it ended.
    applyFrame(state, { seq: 15, body: { type: 'historyProgress', scanning: false, done: 2000, total: 2000 } });
    panels.render(state, null);
    expect(bar?.hidden).toBe(true);
    expect(state.history?.progress).toBeNull();
    expect(Array.from(d.querySelectorAll('.history-title'), (t) => t.textContent)).toEqual(['Newer', 'Older']);
    expect(d.querySelector('[role="status"]')?.textContent).toBe('2 of 2 conversations');
  });
});

describe('the MCP view', () => {
  it('shows each server with only the actions that apply, and sends them', () => {
    const { open, sent, state, panels } = setup();
    const d = open('MCP servers');
    const row = (name: string) => d.querySelector<HTMLElement>(`[data-server="${name}"]`);
    const names = (el: HTMLElement | null) => Array.from(el?.querySelectorAll('button') ?? [], (b) => b.textContent);
    expect(names(row('echo'))).toEqual(['Reconnect', 'Disable']);
    expect(names(row('web'))).toEqual(['Reconnect', 'Disable', 'Sign in']);
    expect(row('echo')?.textContent).toContain('stdio · user scope · v1.2.3 · 1 tool');
    expect(row('web')?.textContent).toContain('token expired');
    Array.from(row('web')?.querySelectorAll('button') ?? []).find((b) => b.textContent === 'Sign in')?.click();
    expect(sent).toEqual([{ type: 'mcpAction', server: 'web', action: 'signin' }]);
    Array.from(d.querySelectorAll('button')).find((b) => b.textContent === 'Reload')?.click();
    expect(sent.at(-1)).toEqual({ type: 'mcpReload' });
    applyFrame(state, { seq: 9, body: { type: 'mcp', ...mcp, restartPending: true, working: 'Signing in to web: finish in the browser' } });
    panels.render(state, null);
    expect(d.textContent).toContain('starts a new process at its next prompt');
    expect(d.textContent).toContain('Signing in to web');
  });
});

describe('the prompt’s attachments', () => {
  it('send the picked skill first and the file chips with the prompt, then are spent', async () => {
    const matches: SearchMatch[] = [{ path: 'src/util.rs', score: 10, indices: [0, 4] }];
    const queries: string[] = [];
    const composer = new Composer((q) => { queries.push(q); return Promise.resolve(matches); });
    const sent: PageRequest[] = [];
    const drawer = new Drawer({ send: (r) => `id${sent.push(r)}`, show: () => {}, shown: () => null, attachments: composer });
    document.body.replaceChildren(drawer.el);
    const state = initialState();
    state.connection = 'open';
    applyFrame(state, { seq: null, body: { type: 'workspace', ...workspace, trusted: true } });
    applyFrame(state, { seq: 1, body: { type: 'catalog', ...catalog } });
    composer.render(state);
    drawer.render(state);
    composer.skillsButton.click();
    const box = document.querySelector<HTMLInputElement>('input[type="checkbox"]');
    if (!box) throw new Error('no skill');
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    const add = document.querySelector<HTMLInputElement>('[aria-label="Add file"]');
    if (!add) throw new Error('no Add file');
    add.value = 'utl';
    add.dispatchEvent(new Event('input'));
    await new Promise((r) => setTimeout(r, 0));
    expect(queries).toEqual(['utl']);
    expect(document.querySelector('[role="option"]')?.textContent).toBe('src/util.rs');
    add.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(Array.from(document.querySelectorAll('.chip span'), (c) => c.textContent)).toEqual(['/review', '@src/util.rs']);
    const prompt = document.querySelector('textarea');
    if (!prompt) throw new Error('no box');
    prompt.value = 'Check it.';
    prompt.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    expect(sent).toEqual([{ type: 'prompt', key: null, text: 'Check it.', skills: ['review'], files: ['src/util.rs'] }]);
    expect(composer.attachments()).toEqual({ skills: [], files: [] });
  });

  it('asks one completion at a time: keys typed while it is out wait, and only the latest value is asked next', async () => {
    const asked: { q: string; answer: (m: SearchMatch[]) => void }[] = [];
    const composer = new Composer((q) => new Promise((resolve) => { asked.push({ q, answer: resolve }); }));
    document.body.replaceChildren(composer.el);
    const add = document.querySelector<HTMLInputElement>('[aria-label="Add file"]');
    if (!add) throw new Error('no Add file');
    const type = (value: string): void => { add.value = value; add.dispatchEvent(new Event('input')); };
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
    const shown = (): (string | null)[] => Array.from(document.querySelectorAll('[role="option"]'), (o) => o.getAttribute('data-path'));
    type('m');
    type('ma');
    type('mai');
    await settle();
    expect(asked.map((a) => a.q)).toEqual(['m']);
    asked[0]?.answer([{ path: 'stale/m.rs', score: 1, indices: [] }]);
    await settle();
    // The stale answer is dropped; the value of now is asked, the keys in between skipped.
    expect(shown()).toEqual([]);
    expect(asked.map((a) => a.q)).toEqual(['m', 'mai']);
    asked[1]?.answer([{ path: 'src/main.rs', score: 9, indices: [4, 5, 6] }]);
    await settle();
    expect(shown()).toEqual(['src/main.rs']);
    // Typing slower than the answers: every key is asked.
    type('main');
    await settle();
    expect(asked.map((a) => a.q)).toEqual(['m', 'mai', 'main']);
    asked[2]?.answer([]);
    await settle();
    expect(shown()).toEqual([]);
    // A failed request says so and lets the next key ask again.
    const failing = new Composer(() => Promise.reject(new Error('503 Service Unavailable')));
    document.body.replaceChildren(failing.el);
    const box = document.querySelector<HTMLInputElement>('[aria-label="Add file"]');
    if (!box) throw new Error('no Add file');
    box.value = 'x';
    box.dispatchEvent(new Event('input'));
    await settle();
    expect(document.querySelector('[role="status"]')?.textContent).toBe('Completion failed: 503 Service Unavailable');
  });

  it('asks over the channel first and /search when the channel cannot carry it, drops mid-way or is silent', async () => {
    vi.useFakeTimers();
    try {
      const http: string[] = [];
      const fallback = (q: string): Promise<SearchMatch[]> => { http.push(q); return Promise.resolve([{ path: `http/${q}`, score: 1, indices: [] }]); };
      const answers: Record<string, () => Promise<SearchMatch[]> | null> = {
        a: () => Promise.resolve([{ path: 'socket/a', score: 1, indices: [] }]),
        b: () => null,
        c: () => Promise.reject(new ChannelDropped()),
        d: () => new Promise<SearchMatch[]>(() => {}),
        e: () => Promise.reject(new Error('`q` is too long')),
      };
      const search = channelFirst((q) => answers[q]?.() ?? null, fallback);
      expect(await search('a', 8)).toEqual([{ path: 'socket/a', score: 1, indices: [] }]);
      expect(await search('b', 8)).toEqual([{ path: 'http/b', score: 1, indices: [] }]);
      expect(await search('c', 8)).toEqual([{ path: 'http/c', score: 1, indices: [] }]);
      const silent = search('d', 8);
      await vi.advanceTimersByTimeAsync(5000);
      expect(await silent).toEqual([{ path: 'http/d', score: 1, indices: [] }]);
      await expect(search('e', 8)).rejects.toThrow('`q` is too long');
      expect(http).toEqual(['b', 'c', 'd']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('updates the listbox rows in place: an unchanged row is left alone, marks come in runs, rows past the matches go', async () => {
    let next: SearchMatch[] = [];
    const composer = new Composer(() => Promise.resolve(next));
    document.body.replaceChildren(composer.el);
    const add = document.querySelector<HTMLInputElement>('[aria-label="Add file"]');
    if (!add) throw new Error('no Add file');
    const type = async (value: string, matches: SearchMatch[]): Promise<void> => {
      next = matches;
      add.value = value;
      add.dispatchEvent(new Event('input'));
      await new Promise((r) => setTimeout(r, 0));
    };
    const options = (): HTMLElement[] => Array.from(document.querySelectorAll<HTMLElement>('[role="option"]'));
    // A row's label: text, with each <mark>'s run in brackets (one node per run).
    const shape = (o: HTMLElement | undefined): string => Array.from(o?.firstElementChild?.childNodes ?? [], (n) => (n.nodeName === 'MARK' ? `[${n.textContent ?? ''}]` : n.textContent ?? '')).join('|');
    await type('ma', [{ path: 'src/main.rs', score: 9, indices: [4, 5] }, { path: 'lib/map.rs', score: 5, indices: [4, 5] }]);
    const [first, second] = options();
    expect(shape(first)).toBe('src/|[ma]|in.rs');
    expect(second?.getAttribute('aria-selected')).toBe('false');
    expect(add.getAttribute('aria-expanded')).toBe('true');
    const firstLabel = first?.firstChild?.firstChild;
    // The same first match: its row and nodes stay; the second row changes.
    await type('mai', [{ path: 'src/main.rs', score: 9, indices: [4, 5] }, { path: 'src/mail.rs', score: 4, indices: [4, 5, 6] }]);
    expect(options()[0]).toBe(first);
    expect(first?.firstChild?.firstChild).toBe(firstLabel);
    expect(shape(options()[1])).toBe('src/|[mai]|l.rs');
    expect(options().map((o) => o.dataset.path)).toEqual(['src/main.rs', 'src/mail.rs']);
    await type('main', [{ path: 'src/main.rs', score: 9, indices: [4, 5, 6, 7] }]);
    expect(options().map((o) => o.dataset.path)).toEqual(['src/main.rs']);
    expect(shape(first)).toBe('src/|[main]|.rs');
    expect(add.getAttribute('aria-activedescendant')).toBe(first?.id);
    await type('zz', []);
    expect(options()).toEqual([]);
    expect(document.querySelector<HTMLElement>('[role="listbox"]')?.hidden).toBe(true);
    expect(add.getAttribute('aria-expanded')).toBe('false');
    expect(add.hasAttribute('aria-activedescendant')).toBe(false);
  });

  it('keeps at most eight skills and twenty files', () => {
    const composer = new Composer(() => Promise.resolve([]));
    for (let i = 0; i < 12; i += 1) composer.addSkill(`s${i}`);
    for (let i = 0; i < 25; i += 1) composer.addFile(`f${i}.rs`);
    expect(composer.attachments().skills).toHaveLength(MAX_SKILLS);
    expect(composer.attachments().files).toHaveLength(MAX_FILES);
  });

  it('adds a dropped graph file by its path, and passes anything else on for the controller to drop', async () => {
    const composer = new Composer((q) => Promise.resolve(q === 'util.rs' ? [{ path: 'src/util.rs', score: 1, indices: [] }] : []));
    await composer.addDropped(['util.rs', '/etc/passwd']);
    expect(composer.attachments().files).toEqual(['src/util.rs', '/etc/passwd']);
    expect(pickDropped('/home/u/w/src/util.rs', [{ path: 'src/util.rs', score: 1, indices: [] }])).toBe('src/util.rs');
    expect(pickDropped('a.rs', [{ path: 'x/a.rs', score: 1, indices: [] }, { path: 'y/a.rs', score: 1, indices: [] }])).toBeNull();
  });
});

describe('Changes and Usage', () => {
  it('list the files each turn edited or created with their diffs, linked to the file panel', () => {
    const edit: FileDiff = {
      source: 'edit', replaceAll: false, added: 1, removed: 1, omittedLines: 0,
      hunks: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [{ op: 'keep', text: 'a' }, { op: 'remove', text: 'b' }, { op: 'add', text: 'B' }] }],
    };
    const write: FileDiff = {
      source: 'write', replaceAll: false, added: 1, removed: 0, omittedLines: 40,
      hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: [{ op: 'add', text: 'fn new() {}' }] }],
    };
    const entries = [
      entry(1, { kind: 'prompt', text: 'Edit', skills: [], files: [] }, 1),
      entry(2, { kind: 'tool', toolUseId: 't1', tool: 'Edit', detail: 'README.md', file: 'README.md', diff: edit }, 1),
      entry(3, { kind: 'tool', toolUseId: 't2', tool: 'Read', detail: 'src/a.rs', file: 'src/a.rs' }, 1),
      entry(4, { kind: 'tool', toolUseId: 't3', tool: 'Write', detail: 'src/new.rs', file: 'src/new.rs', diff: write }, 2),
      entry(5, { kind: 'tool', toolUseId: 't4', tool: 'Edit', detail: '/etc/hosts', file: null }, 2),
      entry(6, { kind: 'tool', toolUseId: 't5', tool: 'Edit', detail: 'src/denied.rs', file: 'src/denied.rs', diff: edit }, 2),
      entry(7, { kind: 'denied', toolUseId: 't5', tool: 'Edit', message: 'no' }, 2),
      entry(8, { kind: 'tool', toolUseId: 't6', tool: 'Write', detail: 'src/failed.rs', file: 'src/failed.rs', diff: write }, 2),
      entry(9, { kind: 'notice', level: 'warning', text: 'Write failed', toolUseId: 't6' }, 2),
    ];
    const { turns, all } = changesOf(entries);
    expect(turns.map((t) => [t.turn, t.prompt, t.files.map((f) => f.path)])).toEqual([[1, 'Edit', ['README.md']], [2, null, ['src/new.rs', '/etc/hosts']]]);
    expect(all.map((f) => [f.path, f.file])).toEqual([['README.md', 'README.md'], ['src/new.rs', 'src/new.rs'], ['/etc/hosts', null]]);
    expect(all[0]?.changes).toEqual([{ turn: 1, tool: 'Edit', diff: edit }]);
    expect(filesChangedIn(entries, 2)).toBe(2);
    const { open, state, panels, opened } = setup();
    applyFrame(state, { seq: 10, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: 'x', sessionId: null, warm: true }] } });
    applyFrame(state, { seq: 11, body: { type: 'session', ...session('c1', { turns: 2, totalCostUsd: 0.5 }) } });
    applyFrame(state, { seq: 12, body: { type: 'transcript', key: 'c1', subagents: false, reset: true, entries } });
    const d = open('Changes');
    panels.render(state, 'c1');
    expect(d.textContent).toContain('Whole conversation: 3 files changed');
    expect(d.textContent).toContain('Turn 1: 1 file changed');
    expect(d.textContent).toContain('Turn 2: 2 files changed');
    const readme = d.querySelector('figure[aria-label="Diff of README.md"]');
    expect(Array.from(readme?.querySelectorAll('pre > span') ?? [], (l) => l.textContent)).toEqual(['@@ -1,2 +1,2 @@', ' a', '-b', '+B']);
    expect(d.querySelector('figure[aria-label="Diff of src/new.rs"]')?.textContent).toContain('Diff cut: 40 more lines not shown.');
    expect(Array.from(d.querySelectorAll('button')).some((b) => b.textContent === '/etc/hosts')).toBe(false);
    Array.from(d.querySelectorAll('button')).find((b) => b.textContent === 'src/new.rs')?.click();
    expect(opened).toEqual(['src/new.rs']);
    const u = open('Usage');
    panels.render(state, 'c1');
    expect(u.textContent).toContain('$0.50');
  });

  it('Usage shows the tokens and context the CLI reported, and the rate limit with its reset', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const base = session('c1', { turns: 2, totalCostUsd: 0.5 });
    const without = new Map(usageRows(base, []));
    expect(without.get('Tokens')).toBe('Known once a turn ends');
    expect(without.get('Rate limit')).toContain('None reported');
    const rows = new Map(usageRows({
      ...base,
      usage: { inputTokens: 27084, outputTokens: 368, cacheReadInputTokens: 1200, cacheCreationInputTokens: 30, contextTokens: 3493, contextWindow: 1000000 },
      rateLimit: { status: 'allowed_warning', rateLimitType: 'five_hour', resetsAt: now / 1000 + 90 * 60, utilization: 0.82 },
    }, [1000, 500], now));
    expect(rows.get('Input tokens')).toBe('27,084');
    expect(rows.get('Output tokens')).toBe('368');
    expect(rows.get('Cache read tokens')).toBe('1,200');
    expect(rows.get('Cache creation tokens')).toBe('30');
    expect(rows.get('Context')).toBe('3,493 of 1,000,000 (0.3%)');
    expect(rows.get('Rate limit')).toBe('5-hour limit: close, 82% used');
    expect(rows.get('Resets')).toContain('(in 1 h 30 min)');
    expect(rows.get('Time in turns')).toBe('1.5 s');
  });

  it('every new request is described for the outbox', () => {
    for (const request of [{ type: 'resetSettings' }, { type: 'history' }, { type: 'mcpReload' }] as PageRequest[]) {
      expect(describeAction({ id: 'x', frame: { type: 'action', id: 'x', request }, at: 0, instanceId: null })).not.toBe('');
    }
  });
});

describe('a continued conversation', () => {
  it('says it continues an earlier one and links to it in History', () => {
    const { state, panels, dialog } = setup();
    document.body.append(panels.continuation);
    applyFrame(state, { seq: 20, body: { type: 'history', scanning: false, error: null, conversations: [historyEntry('s-1', 'Earlier work', { promptCount: 3 })] } });
    applyFrame(state, { seq: 21, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: 's-1', warm: true }] } });
    panels.render(state, 'c1');
    expect(panels.continuation.hidden).toBe(false);
    expect(panels.continuation.textContent).toContain('continues an earlier one (“Earlier work”)');
    panels.continuation.querySelector('button')?.click();
    expect(dialog('History')?.hidden).toBe(false);
    // A conversation whose every prompt is in view is not a continuation.
    applyFrame(state, { seq: 22, body: { type: 'history', scanning: false, error: null, conversations: [historyEntry('s-1', 'Earlier work', { promptCount: 0 })] } });
    panels.render(state, 'c1');
    expect(panels.continuation.hidden).toBe(true);
  });
});

describe('token counts', () => {
  it('are separated by thousands, as en-US writes them', () => {
    expect(tokens(0)).toBe('0');
    expect(tokens(1234567)).toBe('1,234,567');
  });
});
