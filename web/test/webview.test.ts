import { describe, expect, it } from 'vitest';
import { Channel } from '../src/protocol/channel';
import { WebviewTransport, type MessageSource, type VsCodeApi } from '../src/protocol/webview';
import { mountHud } from '../src/hud/app';
import { Store } from '../src/state/store';
import { workspace } from './fixtures';
import { encodeMap, sampleFixture } from './mapFixture';

class FakeHost implements VsCodeApi, MessageSource {
  posted: unknown[] = [];
  private listeners: ((event: { data: unknown }) => void)[] = [];
  postMessage(message: unknown): void { this.posted.push(message); }
  getState(): unknown { return undefined; }
  setState(): void { /* not kept */ }
  addEventListener(_type: 'message', listener: (event: { data: unknown }) => void): void { this.listeners.push(listener); }
  deliver(data: unknown): void { for (const l of this.listeners) l({ data }); }
}

function mount() {
  document.body.replaceChildren();
  const root = document.createElement('div');
  document.body.appendChild(root);
  const host = new FakeHost();
  const transport = new WebviewTransport(host, host);
  const store = new Store();
  const channel = new Channel(transport, store);
  const opened: [string, number | null][] = [];
  mountHud(root, store, channel, {
    workspaceId: '',
    host: { name: 'VS Code', openFile: (path, line) => { opened.push([path, line]); } },
  });
  channel.start();
  return { root, host, store, opened };
}

describe('the page in a VS Code webview', () => {
  it('says ready, sends resume once the host opens, and applies the relayed frames', () => {
    const { host, store } = mount();
    expect(host.posted).toEqual([{ orbit: 'ready' }]);
    host.deliver({ orbit: 'state', state: 'open' });
    expect(host.posted[1]).toEqual({ orbit: 'frame', frame: { type: 'resume', instanceId: null, lastSeq: null } });
    host.deliver({
      orbit: 'frames',
      frames: [
        { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: 3, resumed: false } },
        { seq: null, body: { type: 'workspace', ...workspace, trusted: false } },
        { seq: null, body: { type: 'snapshotEnd' } },
      ],
    });
    expect(store.state.workspace?.id).toBe(workspace.id);
    expect(store.state.errors).toEqual([]);
  });

  it('shows no trust button of its own, and says to trust the folder in VS Code', () => {
    const { root, host } = mount();
    host.deliver({ orbit: 'state', state: 'open' });
    host.deliver({ orbit: 'frames', frames: [
      { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: 0, resumed: false } },
      { seq: null, body: { type: 'workspace', ...workspace, trusted: false } },
    ] });
    const buttons = Array.from(root.querySelectorAll('button')).filter((b) => !b.closest('[hidden]'));
    expect(buttons.map((b) => b.textContent)).not.toContain('Trust this folder');
    const banner = root.querySelector('.banner-trust');
    expect(banner?.hasAttribute('hidden')).toBe(false);
    expect(banner?.textContent).toContain('Manage Workspace Trust');
  });

  it('says plainly when Orbit speaks another protocol version', () => {
    const { host, store } = mount();
    host.deliver({ orbit: 'state', state: 'open' });
    host.deliver({ orbit: 'frames', frames: [
      { seq: null, body: { type: 'hello', protocol: 99, instanceId: 'i1', workspaceId: workspace.id, head: 0, resumed: false } },
    ] });
    expect(store.state.errors.join(' ')).toMatch(/protocol 99/);
  });

  it("asks the host's own dialog for files and gets its absolute paths back, in order", async () => {
    const host = new FakeHost();
    const transport = new WebviewTransport(host, host);
    const first = transport.pickFiles();
    const second = transport.pickFiles();
    expect(host.posted).toEqual([{ orbit: 'pickFiles' }, { orbit: 'pickFiles' }]);
    host.deliver({ orbit: 'picked', paths: ['/elsewhere/notes.md', 3] });
    host.deliver({ orbit: 'picked', paths: [] });
    await expect(first).resolves.toEqual(['/elsewhere/notes.md']);
    await expect(second).resolves.toEqual([]);
  });

  it("gets the map's snapshot through the host: bytes, a view copied to a buffer of its own, or the host's reason", async () => {
    const host = new FakeHost();
    const transport = new WebviewTransport(host, host);
    const first = transport.fetchMap();
    const second = transport.fetchMap();
    expect(host.posted).toEqual([{ orbit: 'map', id: 1 }, { orbit: 'map', id: 2 }]);
    // A view into a larger buffer, at an odd offset: only its bytes, from offset 0.
    const backing = Uint8Array.from([9, 9, 9, 1, 2, 3, 4, 9]);
    host.deliver({ orbit: 'map', id: 2, bytes: backing.subarray(3, 7) });
    // An answer to no request is ignored.
    host.deliver({ orbit: 'map', id: 7, bytes: new Uint8Array(4) });
    host.deliver({ orbit: 'map', id: 1, error: 'Orbit is not connected yet' });
    const bytes = await second;
    expect(Array.from(new Uint8Array(bytes))).toEqual([1, 2, 3, 4]);
    expect(bytes.byteLength).toBe(4);
    await expect(first).rejects.toThrow('Orbit is not connected yet');
    // Neither bytes nor a reason; and no answer at all.
    const third = transport.fetchMap();
    host.deliver({ orbit: 'map', id: 3, bytes: 'AAAA' });
    await expect(third).rejects.toThrow(/no map bytes/);
    await expect(transport.fetchMap(20)).rejects.toThrow(/sent no map/);
  });

  it('draws the map from the bytes the host relays', async () => {
    document.body.replaceChildren();
    const root = document.createElement('div');
    document.body.appendChild(root);
    const host = new FakeHost();
    const transport = new WebviewTransport(host, host);
    const store = new Store();
    const channel = new Channel(transport, store);
    const hud = mountHud(root, store, channel, {
      workspaceId: '',
      host: { name: 'VS Code', openFile: () => undefined, fetchMap: () => transport.fetchMap() },
    });
    channel.start();
    // The map is made at the end of the task that mounts the HUD: the map is asked for then.
    const mapAsk = (): { id: number } | undefined => host.posted.find((m) => (m as { orbit?: string }).orbit === 'map') as { id: number } | undefined;
    for (let i = 0; i < 200 && mapAsk() === undefined; i += 1) await new Promise((r) => setTimeout(r, 5));
    const asked = mapAsk();
    expect(asked).toBeDefined();
    host.deliver({ orbit: 'map', id: asked?.id, bytes: new Uint8Array(encodeMap(sampleFixture())) });
    for (let i = 0; i < 100 && hud.scene.inspect().nodes === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(hud.scene.inspect()).toMatchObject({ graphHash: 'a1b2c3', nodes: 5, edges: 4, fetches: 1 });
    // (happy-dom has no WebGL: the only error is that one, not the map's loading.)
    expect(hud.scene.inspect().error ?? '').not.toMatch(/could not be loaded/);
  });

  it('asks the host to open a file at a line', () => {
    const host = new FakeHost();
    const transport = new WebviewTransport(host, host);
    transport.openFile('src/a.rs', 12);
    expect(host.posted).toEqual([{ orbit: 'openFile', path: 'src/a.rs', line: 12 }]);
  });

  it('sends nothing while the host is not connected, and ignores stray messages', () => {
    const { host, store } = mount();
    host.deliver({ orbit: 'frames', frames: 'not a list' });
    host.deliver('text');
    host.deliver({ orbit: 'state', state: 'bogus' });
    expect(store.state.connection).not.toBe('open');
    expect(host.posted).toEqual([{ orbit: 'ready' }]);
  });
});
