import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { activate, type OrbitCode } from '../src/extension';
import { Relay } from '../src/relay';
import { FakeOrbit } from './fake-orbit';
import { config, inspected, recorded, settings, trust, workspace } from './vscode-mock';

let orbit: FakeOrbit;
let active: OrbitCode | null = null;

beforeEach(async () => {
  orbit = new FakeOrbit();
  await orbit.start();
  recorded.commands.clear();
  recorded.info.length = 0;
  recorded.warnings.length = 0;
  recorded.errors.length = 0;
  recorded.infoAnswer = undefined;
  recorded.panels.length = 0;
  recorded.shownDocuments.length = 0;
  recorded.external.length = 0;
  recorded.dialogAnswer = undefined;
  workspace.isTrusted = true;
  for (const key of Object.keys(settings)) delete settings[key];
  for (const key of Object.keys(inspected)) delete inspected[key];
});

/** The extension folders made by the test running, removed after it. */
const extensionDirs: string[] = [];

afterEach(async () => {
  active?.dispose();
  active = null;
  await orbit.stop();
  for (const dir of extensionDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** An extension folder with the page's build in it. */
function extensionDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orbit-code-ext-'));
  extensionDirs.push(dir);
  fs.mkdirSync(path.join(dir, 'page'));
  fs.writeFileSync(path.join(dir, 'page', 'index.html'), '<html><head><script type="module" src="/assets/index-A.js"></script></head><body></body></html>');
  return dir;
}

function start(): OrbitCode {
  const context = { subscriptions: [] as vscode.Disposable[], extensionUri: vscode.Uri.file(extensionDir()) };
  // The extension finds the fake Orbit's socket as it finds Orbit's.
  process.env.ORBIT_CONFIG_DIR = orbit.dir;
  active = activate(context as unknown as vscode.ExtensionContext);
  return active;
}

function relayFor(trusted: () => boolean, events: { frames: unknown[][]; states: string[] }): Relay {
  return new Relay({
    socket: orbit.socket,
    workspace: '/tmp/ws',
    trusted,
    pollMs: 100,
    backoff: () => 10,
    events: {
      frames: (f) => { events.frames.push(f); },
      state: (s) => { events.states.push(s); },
    },
  });
}

describe('the relay', () => {
  it("connects on the page's resume with the window's trust, and acks the page's actions", async () => {
    const events = { frames: [] as unknown[][], states: [] as string[] };
    const relay = relayFor(() => false, events);
    relay.start();
    expect(events.states).toEqual(['connecting', 'open']);
    await relay.fromPage({ type: 'resume', instanceId: 'i0', lastSeq: 7 });
    expect(orbit.method('orbit.page.connect')[0]?.params).toEqual({ workspace: '/tmp/ws', instanceId: 'i0', lastSeq: 7, trusted: false });
    expect(events.frames[0]).toEqual(orbit.first);
    orbit.push({ seq: 1, body: { type: 'sessions', current: null, conversations: [] } });
    await orbit.until(() => events.frames.length === 2);
    await relay.fromPage({ type: 'action', id: 'a1', request: { type: 'stopAll' } });
    expect(orbit.method('orbit.page.act')[0]?.params.frame).toEqual({ type: 'action', id: 'a1', request: { type: 'stopAll' } });
    expect(events.frames.at(-1)).toEqual([{ seq: null, body: { type: 'ack', id: 'a1', ok: true, code: null, message: null } }]);
    relay.close();
  });

  it("never relays the page's own trust frame", async () => {
    const events = { frames: [] as unknown[][], states: [] as string[] };
    const relay = relayFor(() => true, events);
    relay.start();
    await relay.fromPage({ type: 'resume', instanceId: null, lastSeq: null });
    await relay.fromPage({ type: 'trust', id: 't1' });
    expect(orbit.method('orbit.page.act')).toEqual([]);
    const ack = events.frames.at(-1)?.[0] as { body: { ok: boolean; code: string } };
    expect(ack.body).toMatchObject({ ok: false, code: 'untrusted' });
    relay.close();
  });

  it('tells the page to resume after the connection ended, and closes it for good', async () => {
    const events = { frames: [] as unknown[][], states: [] as string[] };
    const relay = relayFor(() => true, events);
    relay.start();
    await relay.fromPage({ type: 'resume', instanceId: null, lastSeq: null });
    orbit.end('lagged');
    await orbit.until(() => events.states.filter((s) => s === 'open').length === 2);
    expect(events.states).toContain('reconnecting');
    // The page resumes (its transport opened again): a new connection.
    await relay.fromPage({ type: 'resume', instanceId: 'i1', lastSeq: 4 });
    expect(orbit.method('orbit.page.connect')[1]?.params).toMatchObject({ workspace: 'w1', instanceId: 'i1', lastSeq: 4 });
    relay.close();
    await orbit.until(() => orbit.method('orbit.page.close').length === 1);
    expect(events.states.at(-1)).toBe('closed');
  });
});

describe('the extension', () => {
  it('registers the commands and the panel serializer, and shows a status bar item', () => {
    start();
    expect([...recorded.commands.keys()].sort()).toEqual(['orbit.askClaude', 'orbit.newConversation', 'orbit.open', 'orbit.stopClaude']);
    expect(recorded.serializers.has('orbit.page')).toBe(true);
    const item = recorded.statusItems.at(-1);
    expect(item?.command).toBe('orbit.open');
    expect(item?.shown).toBe(true);
  });

  it("Ask Claude… sends the prompt to the current conversation with the active editor's file", async () => {
    start();
    recorded.inputAnswer = 'Why?';
    (vscode.window as unknown as { activeTextEditor: unknown }).activeTextEditor = { document: { uri: vscode.Uri.file('/tmp/ws/src/a.rs') } };
    await recorded.commands.get('orbit.askClaude')?.();
    const acts = orbit.method('orbit.page.act').map((c) => (c.params.frame as { request?: { type: string } }).request);
    expect(acts).toContainEqual({ type: 'prompt', text: 'Why?', skills: [], files: ['src/a.rs'] });
    expect(acts.find((r) => r?.type === 'prompt')).not.toHaveProperty('key');
  });

  it('Stop Claude stops every conversation; New Conversation starts one', async () => {
    start();
    await recorded.commands.get('orbit.stopClaude')?.();
    await recorded.commands.get('orbit.newConversation')?.();
    const types = orbit.method('orbit.page.act').map((c) => (c.params.frame as { request?: { type: string } }).request?.type);
    expect(types).toContain('stopAll');
    expect(types).toContain('newConversation');
  });

  it('in an untrusted window asks nothing of Claude and says why', async () => {
    workspace.isTrusted = false;
    start();
    recorded.inputAnswer = 'Hi';
    await recorded.commands.get('orbit.askClaude')?.();
    expect(recorded.warnings.join('\n')).toMatch(/until VS Code trusts this folder/);
    await orbit.until(() => orbit.method('orbit.page.connect').length === 1);
    expect(orbit.method('orbit.page.connect')[0]?.params.trusted).toBe(false);
    expect(orbit.method('orbit.page.act').some((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'prompt')).toBe(false);
  });

  it('trusting the folder in VS Code tells Orbit and trusts it there too, without a reload', async () => {
    workspace.isTrusted = false;
    orbit.first = [
      { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: 'w1', head: 0, resumed: false } },
      { seq: null, body: { type: 'workspace', trusted: false, agent: { available: true } } },
    ];
    start();
    await orbit.until(() => orbit.method('orbit.page.connect').length === 1);
    workspace.isTrusted = true;
    trust.fire();
    await orbit.until(() => orbit.method('orbit.page.trust').length === 1);
    expect(orbit.method('orbit.page.trust')[0]?.params.trusted).toBe(true);
    await orbit.until(() => orbit.method('orbit.page.act').some((c) => (c.params.frame as { type: string }).type === 'trust'));
  });

  it('a question card raises a notification that can skip it while the page is hidden', async () => {
    start();
    recorded.infoAnswer = 'Skip';
    await orbit.until(() => orbit.method('orbit.page.next').length > 0);
    orbit.push({ seq: 5, body: { type: 'session', key: 'c1', phase: 'waiting', pending: [{ kind: 'questions', requestId: 'q9', questions: [{ question: 'Red or blue?' }] }] } });
    await orbit.until(() => recorded.info.length === 1);
    expect(recorded.info[0]).toEqual({ message: 'Claude asks: Red or blue?', items: ['Open Orbit', 'Skip'] });
    await orbit.until(() => orbit.method('orbit.page.act').some((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'skipQuestions'));
    const skip = orbit.method('orbit.page.act').find((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'skipQuestions');
    expect((skip?.params.frame as { request: unknown }).request).toEqual({ type: 'skipQuestions', key: 'c1', requestId: 'q9' });
  });

  it("passes the orbit.claude settings on as the host's settings when it connects, and again when they change", async () => {
    settings['orbit.claude.model'] = 'claude-sonnet-4-5';
    settings['orbit.claude.path'] = '/opt/claude';
    settings['orbit.claude.extraArgs'] = ['--add-dir', '../shared'];
    inspected['orbit.claude.extraArgs'] = { globalValue: ['--add-dir', '../shared'] };
    orbit.settingsWarnings = ['settings: `claude.effort`: `extreme` is not one of low, medium; ignored', 'settings: unrelated'];
    start();
    await orbit.until(() => orbit.method('orbit.page.settings').length === 1);
    expect(orbit.method('orbit.page.settings')[0]?.params).toEqual({
      conn: 'r1',
      settings: { path: '/opt/claude', extraArgs: ['--add-dir', '../shared'], model: 'claude-sonnet-4-5', effort: null, permissionMode: null },
    });
    // Not as the page's own requests.
    expect(orbit.method('orbit.page.act').some((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'setModel')).toBe(false);
    await orbit.until(() => recorded.warnings.length > 0);
    expect(recorded.warnings).toEqual(['Orbit Code: settings: `claude.effort`: `extreme` is not one of low, medium; ignored']);
    settings['orbit.claude.effort'] = 'high';
    config.fire({ affectsConfiguration: (section: string) => 'orbit.claude.effort'.startsWith(section) });
    await orbit.until(() => orbit.method('orbit.page.settings').length === 2);
    expect((orbit.method('orbit.page.settings')[1]?.params.settings as { effort: string }).effort).toBe('high');
    // The same warning is not shown twice.
    expect(recorded.warnings).toHaveLength(1);
  });

  it('sends no settings while VS Code does not trust the folder, and sends them once it does', async () => {
    workspace.isTrusted = false;
    settings['orbit.claude.model'] = 'opus';
    start();
    await orbit.until(() => orbit.method('orbit.page.connect').length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(orbit.method('orbit.page.settings')).toEqual([]);
    workspace.isTrusted = true;
    trust.fire();
    await orbit.until(() => orbit.method('orbit.page.settings').length === 1);
    expect((orbit.method('orbit.page.settings')[0]?.params.settings as { model: string }).model).toBe('opus');
  });

  it('says plainly when the running orbit does not take the settings', async () => {
    settings['orbit.claude.model'] = 'opus';
    orbit.refuse = 'orbit.page.settings';
    start();
    await orbit.until(() => recorded.warnings.length > 0);
    expect(recorded.warnings[0]).toMatch(/does not take the editor's settings \(update orbit\)/);
  });
  it('a permission card raises a notification that opens Orbit while the page is hidden', async () => {
    start();
    recorded.infoAnswer = 'Open Orbit';
    await orbit.until(() => orbit.method('orbit.page.next').length > 0);
    orbit.push({ seq: 6, body: { type: 'session', key: 'c1', phase: 'waiting', pending: [{ kind: 'permission', requestId: 'p9', tool: 'Edit', title: 'Edit src/a.rs' }] } });
    await orbit.until(() => recorded.info.length === 1);
    expect(recorded.info[0]).toEqual({ message: 'Claude is waiting: Edit src/a.rs', items: ['Open Orbit'] });
    // Open Orbit opens the page.
    await orbit.until(() => recorded.panels.length === 1);
    expect(recorded.panels[0]?.webview.html).toContain("default-src 'none'");
    // The same card is not raised twice; with the page in sight, none is.
    orbit.push({ seq: 7, body: { type: 'session', key: 'c1', phase: 'waiting', pending: [{ kind: 'permission', requestId: 'p9', tool: 'Edit', title: 'Edit src/a.rs' }, { kind: 'permission', requestId: 'p10', tool: 'Bash', title: 'Run ls' }] } });
    await orbit.until(() => orbit.method('orbit.page.next').length > 3);
    expect(recorded.info).toHaveLength(1);
  });

  it("the page's files open in an editor at the line, never outside the folder", async () => {
    start();
    await recorded.commands.get('orbit.open')?.();
    const panel = recorded.panels[0];
    await panel?.receive({ orbit: 'openFile', path: 'src/a.rs', line: 12 });
    expect(recorded.shownDocuments).toHaveLength(1);
    const shown = recorded.shownDocuments[0] as { document: { uri: vscode.Uri }; options: { selection: { start: { line: number } } } };
    expect(shown.document.uri.fsPath).toBe('/tmp/ws/src/a.rs');
    expect(shown.options.selection.start.line).toBe(11);
    await panel?.receive({ orbit: 'openFile', path: '../etc/passwd', line: null });
    await panel?.receive({ orbit: 'openFile', path: '/etc/passwd', line: null });
    expect(recorded.shownDocuments).toHaveLength(1);
  });

  it("Add file goes through VS Code's own dialog, and Orbit hears the paths from the extension first", async () => {
    start();
    await recorded.commands.get('orbit.open')?.();
    const panel = recorded.panels[0];
    await panel?.receive({ orbit: 'ready' });
    await panel?.receive({ orbit: 'frame', frame: { type: 'resume', instanceId: null, lastSeq: null } });
    await orbit.until(() => orbit.method('orbit.page.connect').length === 2);
    recorded.dialogAnswer = [vscode.Uri.file('/elsewhere/notes.md'), vscode.Uri.parse('untitled:Untitled-1')];
    await panel?.receive({ orbit: 'pickFiles' });
    const picked = orbit.method('orbit.page.picked');
    expect(picked).toHaveLength(1);
    expect(picked[0]?.params.paths).toEqual(['/elsewhere/notes.md']);
    // The panel's own connection, not the watcher's.
    expect(picked[0]?.params.conn).toBe('r2');
    expect(panel?.posted.at(-1)).toEqual({ orbit: 'picked', paths: ['/elsewhere/notes.md'] });
    // Cancelled: nothing picked, nothing told.
    recorded.dialogAnswer = undefined;
    await panel?.receive({ orbit: 'pickFiles' });
    expect(panel?.posted.at(-1)).toEqual({ orbit: 'picked', paths: [] });
    expect(orbit.method('orbit.page.picked')).toHaveLength(1);
  });
  it("gives the webview the map's snapshot, read from Orbit in chunks, and says why when it cannot", async () => {
    start();
    await recorded.commands.get('orbit.open')?.();
    const panel = recorded.panels[0];
    orbit.map = Uint8Array.from({ length: 10 }, (_, i) => 200 + i);
    // Asked before the panel's connection (the page asks at once): answered once it is up.
    const early = panel?.receive({ orbit: 'map', id: 2 });
    await panel?.receive({ orbit: 'ready' });
    await panel?.receive({ orbit: 'frame', frame: { type: 'resume', instanceId: null, lastSeq: null } });
    await early;
    const answer = panel?.posted.find((p) => (p as { orbit?: string }).orbit === 'map') as { orbit: string; id: number; bytes: Uint8Array };
    expect([answer.orbit, answer.id]).toEqual(['map', 2]);
    expect(Array.from(answer.bytes)).toEqual(Array.from(orbit.map));
    // Three chunks of at most 4 bytes, on the panel's own connection.
    expect(orbit.method('orbit.page.map').map((c) => c.params)).toEqual([
      { conn: 'r2', offset: 0 },
      { conn: 'r2', offset: 4 },
      { conn: 'r2', offset: 8 },
    ]);
    // An empty map is one call.
    orbit.map = new Uint8Array(0);
    await panel?.receive({ orbit: 'map', id: 3 });
    expect(Array.from((panel?.posted.at(-1) as { bytes: Uint8Array }).bytes)).toEqual([]);
    // Orbit refusing (an older one without the method) reaches the webview as the reason.
    orbit.refuse = 'orbit.page.map';
    await panel?.receive({ orbit: 'map', id: 4 });
    expect(panel?.posted.at(-1)).toEqual({ orbit: 'map', id: 4, error: 'orbit.page.map' });
  });

  it("a sign-in's address opens through VS Code's openExternal and never reaches the page", async () => {
    start();
    await recorded.commands.get('orbit.open')?.();
    const panel = recorded.panels[0];
    await panel?.receive({ orbit: 'ready' });
    await panel?.receive({ orbit: 'frame', frame: { type: 'resume', instanceId: null, lastSeq: null } });
    await panel?.receive({ orbit: 'frame', frame: { type: 'action', id: 's1', request: { type: 'mcpAction', server: 'docs', action: 'signIn' } } });
    expect(recorded.external).toEqual(['https://auth.example.test/authorize?state=s1']);
    expect(JSON.stringify(panel?.posted)).not.toContain('auth.example.test');
    expect(panel?.posted.at(-1)).toEqual({ orbit: 'frames', frames: [{ seq: null, body: { type: 'ack', id: 's1', ok: true, code: null, message: null } }] });
    // Anything but http(s) is not opened.
    orbit.signInUrl = 'file:///etc/passwd';
    await panel?.receive({ orbit: 'frame', frame: { type: 'action', id: 's2', request: { type: 'mcpAction', server: 'docs', action: 'signIn' } } });
    expect(recorded.external).toHaveLength(1);
  });
  it('opens the page again after its panel was closed while connected', async () => {
    start();
    await recorded.commands.get('orbit.open')?.();
    const first = recorded.panels[0];
    await first?.receive({ orbit: 'ready' });
    await first?.receive({ orbit: 'frame', frame: { type: 'resume', instanceId: null, lastSeq: null } });
    // Closing it closes its relay, which must post nothing to the disposed webview.
    (first as unknown as { dispose(): void }).dispose();
    await orbit.until(() => orbit.method('orbit.page.close').length === 1);
    await recorded.commands.get('orbit.open')?.();
    expect(recorded.panels).toHaveLength(2);
  });
});
