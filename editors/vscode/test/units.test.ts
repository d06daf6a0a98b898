import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlSocket, findOrbit } from '../src/locate';
import { StatusModel } from '../src/status';
import { contentSecurityPolicy, pageHtml } from '../src/webview';
import { hostSettings } from '../src/extension';

const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string; title: string; category: string }[]; configuration: { properties: Record<string, { scope?: string }> } };
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  activationEvents: string[];
};

describe('the manifest', () => {
  it('names the four commands in the Orbit Code category, Ask Claude… with an ellipsis character', () => {
    const titles = Object.fromEntries(manifest.contributes.commands.map((c) => [c.command, `${c.category}: ${c.title}`]));
    expect(titles).toEqual({
      'orbit.open': 'Orbit Code: Open',
      'orbit.askClaude': 'Orbit Code: Ask Claude\u2026',
      'orbit.stopClaude': 'Orbit Code: Stop Claude',
      'orbit.newConversation': 'Orbit Code: New Conversation',
    });
  });

  it('scopes path, extraArgs, permissionMode and orbit.path to the machine and restricts them when untrusted', () => {
    const restricted = ['orbit.path', 'orbit.claude.path', 'orbit.claude.extraArgs', 'orbit.claude.permissionMode'];
    const props = manifest.contributes.configuration.properties;
    for (const key of restricted) expect(props[key]?.scope, key).toBe('machine');
    expect(manifest.capabilities.untrustedWorkspaces.supported).toBe('limited');
    expect([...manifest.capabilities.untrustedWorkspaces.restrictedConfigurations].sort()).toEqual([...restricted].sort());
    for (const key of ['orbit.claude.model', 'orbit.claude.effort', 'orbit.openOnStartup']) expect(props[key], key).toBeDefined();
    expect(manifest.activationEvents).toContain('onWebviewPanel:orbit.page');
  });
});

describe('the webview', () => {
  const index = '<html><head><script type="module" crossorigin src="/assets/index-A.js"></script>\n<link rel="stylesheet" crossorigin href="/assets/index-B.css"></head><body><div id="app"></div></body></html>';

  it('loads the page build through webview addresses under a nonce CSP from default-src none', () => {
    const html = pageHtml(index, (p) => `https://webview.test/page/${p}`, 'https://webview.test', 'N0nce');
    expect(html).toContain(`content="${contentSecurityPolicy('https://webview.test', 'N0nce').replace(/'/g, "'")}"`);
    expect(contentSecurityPolicy('src', 'n').startsWith("default-src 'none'")).toBe(true);
    expect(contentSecurityPolicy('src', 'n')).toContain("connect-src 'none'");
    expect(contentSecurityPolicy('src', 'n')).toContain("script-src 'nonce-n'");
    expect(html).toContain('<script type="module" nonce="N0nce" src="https://webview.test/page/assets/index-A.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="https://webview.test/page/assets/index-B.css">');
    expect(html).not.toContain('"/assets/');
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  it('refuses a build without a script', () => {
    expect(() => pageHtml('<html></html>', (p) => p, 's', 'n')).toThrow(/no script/);
  });
});

describe('finding Orbit', () => {
  it('finds the control socket as Orbit does', () => {
    expect(controlSocket({ ORBIT_CONFIG_DIR: '/c', XDG_RUNTIME_DIR: '/r', HOME: '/h' })).toBe('/c/run/control.sock');
    expect(controlSocket({ XDG_RUNTIME_DIR: '/r', HOME: '/h' })).toBe('/r/orbit/control.sock');
    expect(controlSocket({ HOME: '/h' }, 'linux')).toBe('/h/.config/orbit/run/control.sock');
    expect(controlSocket({ HOME: '/h', XDG_CONFIG_HOME: '/x' }, 'linux')).toBe('/x/orbit/run/control.sock');
  });

  it('uses orbit.path, else PATH, and says what is wrong', () => {
    const exists = (f: string) => f === '/opt/orbit' || f === '/b/orbit';
    expect(findOrbit('/opt/orbit', { PATH: '/b' }, exists)).toBe('/opt/orbit');
    expect(findOrbit('', { PATH: '/a:/b' }, exists)).toBe('/b/orbit');
    expect(() => findOrbit('/nope/orbit', { PATH: '/b' }, exists)).toThrow(/orbit.path names "\/nope\/orbit"/);
    expect(() => findOrbit('orbit', {}, exists)).toThrow(/absolute/);
    expect(() => findOrbit('', { PATH: '/a' }, exists)).toThrow(/not found/);
  });
});

describe('the status model', () => {
  const sessions = (phase: string) => ({ seq: 2, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase }] } });
  const session = (pending: unknown[]) => ({ seq: 3, body: { type: 'session', key: 'c1', phase: pending.length ? 'waiting' : 'writing', pending } });
  const card = { kind: 'questions', requestId: 'q1', questions: [{ question: 'Which one?' }] };

  it("shows the current conversation's phase and the cards waiting", () => {
    const model = new StatusModel();
    model.apply([{ seq: null, body: { type: 'workspace', trusted: true, agent: { available: true } } }, sessions('thinking')]);
    expect(model.text().text).toContain('Claude: Thinking');
    model.apply([session([card, { kind: 'permission', requestId: 'p1', title: 'Edit a.rs' }])]);
    expect(model.text().text).toContain('Waiting for you · 2 waiting');
    expect(model.lastSeq).toBe(3);
  });

  it('answers each card once, when it first arrives', () => {
    const model = new StatusModel();
    const first = model.apply([sessions('waiting'), session([card])]);
    expect(first).toEqual([{ key: 'c1', kind: 'questions', requestId: 'q1', title: 'Which one?' }]);
    expect(model.apply([session([card])])).toEqual([]);
    expect(model.waiting()).toBe(1);
  });

  it('says in the tooltip why sessions are unavailable', () => {
    const model = new StatusModel();
    model.apply([{ seq: null, body: { type: 'workspace', trusted: false, agent: { available: true } } }]);
    expect(model.text().tooltip).toMatch(/trusted folder/);
  });
});

describe('the orbit.claude settings', () => {
  type Inspected = { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown };
  const config = (values: Record<string, unknown>, inspect: Record<string, Inspected> = {}) => ({
    get: <T>(key: string) => values[key] as T | undefined,
    inspect: <T>(key: string) => inspect[key] as { globalValue?: T; workspaceValue?: T } | undefined,
  });

  it("become the host's settings for the workspace, each one the user set", () => {
    const { settings, warnings } = hostSettings(
      config(
        { 'claude.path': '/opt/claude', 'claude.extraArgs': ['--add-dir', '../shared'], 'claude.model': 'opus', 'claude.effort': 'high', 'claude.permissionMode': 'acceptEdits' },
        { 'claude.extraArgs': { globalValue: ['--add-dir', '../shared'] }, 'claude.permissionMode': { globalValue: 'acceptEdits' } },
      ),
    );
    expect(settings).toEqual({ path: '/opt/claude', extraArgs: ['--add-dir', '../shared'], model: 'opus', effort: 'high', permissionMode: 'acceptEdits' });
    expect(warnings).toEqual([]);
  });

  it("leave Orbit's own settings where the user set nothing", () => {
    // The manifest's defaults: '' path, [] args, null model and effort, 'default' mode.
    const { settings } = hostSettings(config({ 'claude.path': '', 'claude.extraArgs': [], 'claude.model': null, 'claude.effort': null, 'claude.permissionMode': 'default' }));
    expect(settings).toEqual({ path: null, extraArgs: null, model: null, effort: null, permissionMode: null });
    // An empty list the user chose clears Orbit's extra arguments.
    const cleared = hostSettings(config({ 'claude.extraArgs': [] }, { 'claude.extraArgs': { globalValue: [] } }));
    expect(cleared.settings.extraArgs).toEqual([]);
  });

  it('pass bypassPermissions on only from the user settings, and name a workspace that sets it', () => {
    const fromUser = hostSettings(config({ 'claude.permissionMode': 'bypassPermissions' }, { 'claude.permissionMode': { globalValue: 'bypassPermissions' } }));
    expect(fromUser.settings.permissionMode).toBe('bypassPermissions');
    expect(fromUser.warnings).toEqual([]);
    const fromWorkspace = hostSettings(config({ 'claude.permissionMode': 'bypassPermissions' }, { 'claude.permissionMode': { workspaceValue: 'bypassPermissions' } }));
    expect(fromWorkspace.settings.permissionMode).toBeNull();
    expect(fromWorkspace.warnings[0]).toMatch(/only from your user settings/);
    const folder = hostSettings(config({ 'claude.permissionMode': 'bypassPermissions' }, { 'claude.permissionMode': { globalValue: 'bypassPermissions', workspaceFolderValue: 'bypassPermissions' } }));
    expect(folder.settings.permissionMode).toBeNull();
    const spelled = hostSettings(config({ 'claude.permissionMode': 'Bypass_Permissions' }, { 'claude.permissionMode': { globalValue: 'Bypass_Permissions' } }));
    expect(spelled.settings.permissionMode).toBeNull();
  });
});
