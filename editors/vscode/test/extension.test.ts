import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { activate, type OrbitCode } from '../src/extension';
import { Relay } from '../src/relay';
import { FakeOrbit } from './fake-orbit';
import { recorded, settings, trust, workspace } from './vscode-mock';

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
  workspace.isTrusted = true;
  for (const key of Object.keys(settings)) delete settings[key];
});

afterEach(async () => {
  active?.dispose();
  active = null;
  await orbit.stop();
});

function start(): OrbitCode {
  const context = { subscriptions: [] as vscode.Disposable[], extensionUri: vscode.Uri.file('/ext') };
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

  it('passes orbit.claude.model on as the next prompt\'s model', async () => {
    settings['orbit.claude.model'] = 'claude-sonnet-4-5';
    start();
    await orbit.until(() => orbit.method('orbit.page.act').some((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'setModel'));
    const set = orbit.method('orbit.page.act').find((c) => (c.params.frame as { request?: { type: string } }).request?.type === 'setModel');
    expect((set?.params.frame as { request: unknown }).request).toEqual({ type: 'setModel', model: 'claude-sonnet-4-5' });
  });
});
