import { describe, expect, it, vi } from 'vitest';
import { Channel, type ChannelOptions } from '../src/protocol/channel';
import type { ConnectionState, Transport } from '../src/protocol/transport';
import type { HostBody, PendingCard } from '../src/protocol/types';
import { mountHud } from '../src/hud/app';
import { Store } from '../src/state/store';
import { entries, permission, questions, session, workspace } from './fixtures';

class FakeTransport implements Transport {
  sent: unknown[] = [];
  private frame: ((d: unknown) => void)[] = [];
  private state: ((s: ConnectionState) => void)[] = [];
  send(frame: unknown): boolean { this.sent.push(frame); return true; }
  onFrame(l: (d: unknown) => void): void { this.frame.push(l); }
  onState(l: (s: ConnectionState) => void): void { this.state.push(l); }
  start(): void { for (const l of this.state) l('open'); }
  close(): void { for (const l of this.state) l('closed'); }
  drop(): void { for (const l of this.state) l('reconnecting'); }
  deliver(body: HostBody, seq: number | null = null): void { for (const l of this.frame) l({ seq, body }); }
}

/** The HUD mounted on a fake transport (`preloaded`: frames applied before the mount, as `main.ts` does). */
function mount(preloaded: unknown[] = [], restAfter?: Promise<unknown>, channelOptions: ChannelOptions = {}) {
  // The map fetches /map once the page is ready; these tests are about the HUD.
  vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(new Response('', { status: 404 }))));
  document.body.replaceChildren();
  const root = document.createElement('div');
  document.body.appendChild(root);
  const transport = new FakeTransport();
  const store = new Store();
  const channel = new Channel(transport, store, channelOptions);
  channel.preload(preloaded);
  const hud = mountHud(root, store, channel, { workspaceId: workspace.id, ...(restAfter ? { restAfter } : {}) });
  channel.start();
  return { root, transport, store, hud, channel };
}

/** Elements with an accessible role and name, as a test or a screen reader finds them. */
function named(root: HTMLElement, role: string, name: string): HTMLElement[] {
  const implicit: Record<string, string> = { button: 'button', textbox: 'textarea, input[type="text"]' };
  const candidates = Array.from(root.querySelectorAll<HTMLElement>(`[role="${role}"]${implicit[role] ? `, ${implicit[role]}` : ''}`));
  return candidates.filter((el) => {
    if (el.closest('[hidden]')) return false;
    const labelledBy = el.getAttribute('aria-labelledby');
    const accessible = labelledBy ? document.getElementById(labelledBy)?.textContent : el.getAttribute('aria-label') ?? el.textContent;
    return accessible?.trim() === name;
  });
}

describe('the page', () => {
  it('keeps the accessibility contract', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace });
    transport.deliver({ type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'waiting', title: 'hi', sessionId: null, warm: true }] });
    transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [permission, questions] }) });
    transport.deliver({ type: 'snapshotEnd' });
    expect(named(root, 'textbox', 'Ask Claude')).toHaveLength(1);
    expect(root.querySelectorAll('[role="log"]')).toHaveLength(1);
    for (const name of ['Stop', 'Stop all', 'New conversation']) expect(named(root, 'button', name), name).toHaveLength(1);
    const [card] = named(root, 'group', 'Edit src/a.rs');
    if (!card) throw new Error('no permission card group');
    for (const name of ['Allow', 'Allow all edits in this session', 'Deny']) expect(named(card, 'button', name), name).toHaveLength(1);
    const [qcard] = named(root, 'group', 'Claude has 2 questions');
    if (!qcard) throw new Error('no question card group');
    for (const name of ['Send answers', 'Skip']) expect(named(qcard, 'button', name), name).toHaveLength(1);
    // A card never takes focus by itself.
    expect(document.activeElement === card || document.activeElement === qcard).toBe(false);
    named(card, 'button', 'Allow')[0]?.click();
    expect(transport.sent.at(-1)).toMatchObject({ type: 'action', request: { type: 'answerPermission', key: 'c1', requestId: 'r1', choice: 'allow', message: null } });
    expect(root.querySelector('.connection')?.textContent).toBe('Connected');
  });

  it('says why conversations are unavailable until the folder is trusted, and trusts it', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace, trusted: false });
    transport.deliver({ type: 'snapshotEnd' });
    const [button] = named(root, 'button', 'Trust this folder');
    if (!button) throw new Error('no trust button');
    expect(root.querySelector('.banner-trust')?.textContent).toContain('not trusted');
    expect(named(root, 'textbox', 'Ask Claude')[0]?.hasAttribute('disabled')).toBe(true);
    button.click();
    expect(transport.sent.at(-1)).toMatchObject({ type: 'trust' });
    transport.deliver({ type: 'workspace', ...workspace, trusted: true }, 1);
    expect(named(root, 'button', 'Trust this folder')).toHaveLength(0);
    expect(named(root, 'textbox', 'Ask Claude')[0]?.hasAttribute('disabled')).toBe(false);
  });

  it('shows what is missing when Claude Code is not there', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace, agent: { available: false, version: null, path: null, message: 'No claude on PATH or in ~/.local/bin: install Claude Code.' } });
    transport.deliver({ type: 'snapshotEnd' });
    const banner = root.querySelector('.banner-error');
    expect(banner?.getAttribute('role')).toBe('alert');
    expect(banner?.hasAttribute('hidden')).toBe(false);
    expect(banner?.textContent).toContain('No claude on PATH or in ~/.local/bin: install Claude Code.');
  });

  it('shows the connection state, refusals and refused frames', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'refused', request: 'frame', code: 'rate_limited', message: 'Too many actions a second.' }, 1);
    for (const l of (transport as unknown as { frame: ((d: unknown) => void)[] }).frame) l('{"seq":2,"body":{"type":"session"}}');
    const alerts = root.querySelector('.notices')?.textContent ?? '';
    expect(alerts).toContain('Too many actions a second. (rate_limited)');
    expect(alerts).toContain('does not match the protocol');
    transport.drop();
    expect(root.querySelector('.connection')?.textContent).toBe('Reconnecting…');
  });
});

describe('a long reconnect', () => {
  const reconnectFor = async (answer: () => Promise<Response>): Promise<{ text: string; asked: unknown[][] }> => {
    vi.useFakeTimers();
    try {
      const { root, transport } = mount();
      const fetchMock = vi.fn(answer);
      vi.stubGlobal('fetch', fetchMock);
      transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
      transport.drop();
      expect(root.querySelector('.connection')?.textContent).toBe('Reconnecting…');
      expect(fetchMock).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(15000);
      // The map's own fetch may come meanwhile; the question is the one to the worker's script.
      const asked = (fetchMock.mock.calls as unknown[][]).filter((call) => String(call[0]).endsWith('/sw.js'));
      return { text: root.querySelector('.connection')?.textContent ?? '', asked };
    } finally {
      vi.useRealTimers();
    }
  };

  it('says an Orbit restarted on its port refuses this tab’s login, asked of the server over HTTP', async () => {
    const { text, asked } = await reconnectFor(() => Promise.resolve(new Response('', { status: 401 })));
    expect(asked).toHaveLength(1);
    expect(asked[0]?.[0]).toBe(`/w/${workspace.id}/sw.js`);
    expect(asked[0]?.[1]).toMatchObject({ method: 'HEAD', credentials: 'same-origin' });
    expect(text).toContain('Orbit was restarted, and this tab was signed in to the Orbit before it');
  });

  it('says a running Orbit no longer serves the workspace', async () => {
    const { text } = await reconnectFor(() => Promise.resolve(new Response('', { status: 404 })));
    expect(text).toContain('Orbit runs again, but not this workspace');
  });

  it('asks again while the wait lasts: an Orbit started again meanwhile is said, and said no more once back', async () => {
    vi.useFakeTimers();
    try {
      const { root, transport } = mount();
      let answer: () => Promise<Response> = () => Promise.reject(new TypeError('Failed to fetch'));
      const fetchMock = vi.fn(() => answer());
      vi.stubGlobal('fetch', fetchMock);
      transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
      transport.drop();
      const text = (): string => root.querySelector('.connection')?.textContent ?? '';
      await vi.advanceTimersByTimeAsync(15000);
      expect(text()).toBe('Reconnecting… (if Orbit stopped, run `orbit open` again)');
      answer = () => Promise.resolve(new Response('', { status: 401 }));
      await vi.advanceTimersByTimeAsync(15000);
      expect(text()).toContain('Orbit was restarted');
      const asked = (): number => (fetchMock.mock.calls as unknown[][]).filter((call) => String(call[0]).endsWith('/sw.js')).length;
      expect(asked()).toBe(2);
      transport.start();
      expect(text()).not.toContain('Orbit was restarted');
      await vi.advanceTimersByTimeAsync(60000);
      expect(asked()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps the usual words when the server cannot be reached', async () => {
    const { text } = await reconnectFor(() => Promise.reject(new TypeError('Failed to fetch')));
    expect(text).toBe('Reconnecting… (if Orbit stopped, run `orbit open` again)');
  });
});

describe('a card opened from its notification (`#card=`)', () => {
  it('focuses the card while it waits, and says so when it was already answered', async () => {
    const { root, transport, hud } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace });
    transport.deliver({ type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'waiting', title: 'hi', sessionId: null, warm: true }] });
    transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [permission] }) });
    transport.deliver({ type: 'snapshotEnd' });
    hud.openCard('c1', permission.requestId);
    expect((document.activeElement as HTMLElement | null)?.dataset.requestId).toBe(permission.requestId);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(root.querySelector('.notices')?.textContent ?? '').not.toContain('already answered');
    // Answered elsewhere; its notification outlived it and is clicked.
    transport.deliver({ type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1, pending: [] }) });
    hud.openCard('c1', permission.requestId);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(root.querySelector('.notices')?.textContent ?? '').toContain('The card you opened was already answered.');
  });
});

/** A fresh snapshot: conversation `c1` waiting on `pending`. */
function waitingSnapshot(transport: FakeTransport, pending: PendingCard[]): void {
  transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
  transport.deliver({ type: 'workspace', ...workspace });
  transport.deliver({ type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'waiting', title: 'hi', sessionId: null, warm: true }] });
  transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending }) });
  transport.deliver({ type: 'snapshotEnd' });
}

describe('the focus on a card', () => {
  it('goes to the next card waiting when its card is answered from the keyboard, then to the prompt box; a card built again keeps it', () => {
    const { root, transport } = mount();
    waitingSnapshot(transport, [permission, questions]);
    const [card] = named(root, 'group', 'Edit src/a.rs');
    if (!card) throw new Error('no permission card');
    card.focus();
    card.dispatchEvent(new KeyboardEvent('keydown', { key: 'y', bubbles: true, cancelable: true }));
    const sent = transport.sent.at(-1) as { id: string };
    // Refused: the card is built again, answerable, and the focus is on it still.
    transport.deliver({ type: 'ack', id: sent.id, ok: false, code: 'busy', message: 'busy' });
    const [again] = named(root, 'group', 'Edit src/a.rs');
    expect(again).not.toBe(card);
    expect(document.activeElement).toBe(again);
    again?.dispatchEvent(new KeyboardEvent('keydown', { key: 'y', bubbles: true, cancelable: true }));
    transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [questions] }) });
    expect(document.activeElement).toBe(named(root, 'group', 'Claude has 2 questions')[0]);
    transport.deliver({ type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1, pending: [] }) });
    expect(document.activeElement).toBe(named(root, 'textbox', 'Ask Claude')[0]);
  });
});

describe('a card answered while the connection is down', () => {
  it('is answerable again once its answer is dropped unacknowledged (a minute offline), not left disabled', () => {
    let now = 1_000_000;
    const { root, transport, store, channel } = mount([], undefined, { now: () => now });
    waitingSnapshot(transport, [permission]);
    const allow = (): HTMLButtonElement | undefined => named(root, 'button', 'Allow')[0] as HTMLButtonElement | undefined;
    allow()?.click();
    expect(allow()?.disabled).toBe(true);
    // The socket drops before the ack and stays down past the minute: the answer is dropped.
    transport.drop();
    now += 61_000;
    channel.expire();
    expect(store.state.notices.at(-1)?.text).toContain('did not confirm it within a minute');
    // Back (the same Orbit): the card still waits, and can be answered again.
    transport.start();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: true });
    expect(named(root, 'group', 'Edit src/a.rs')).toHaveLength(1);
    expect(allow()?.disabled).toBe(false);
    expect(root.querySelector('.permission-card .card-status')?.textContent).toBe('');
  });
});

describe('a fresh open: the side column after the map (`restAfter`)', () => {
  it('lays out the top bar, the banners and the map first, and the side column\'s contents when told, from the state then', async () => {
    let rest: () => void = () => undefined;
    // The preloaded snapshot, applied before the mount (main.ts).
    const { root, store, hud } = mount([
      { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false } },
      { seq: null, body: { type: 'workspace', ...workspace, trusted: false } },
      { seq: null, body: { type: 'snapshotEnd' } },
    ], new Promise<void>((resolve) => { rest = resolve; }));
    // What sizes the map is there (the trust banner too), and the map's place with its stand-in.
    expect(root.querySelector('.topbar')).not.toBeNull();
    expect(root.querySelector('.banner-trust')?.hasAttribute('hidden')).toBe(false);
    expect(root.querySelector('main.stage > .scene')).not.toBeNull();
    const side = root.querySelector('aside.side');
    expect(side?.getAttribute('aria-label')).toBe('Claude');
    // The side column is empty until told.
    expect(side?.childElementCount).toBe(0);
    expect(named(root, 'textbox', 'Ask Claude')).toHaveLength(0);
    expect(hud.rendered()).toBe(0);
    expect(hud.search()).toEqual({ open: false, query: '', matches: [], current: null });
    expect(hud.panels().open).toBeNull();
    // What comes meanwhile is shown once it is made (a conversation with entries).
    store.update((state) => {
      state.current = 'c1';
      state.conversations = [{ key: 'c1', phase: 'idle', title: 'the title', sessionId: null, warm: true }];
      state.transcripts = { c1: entries.slice(0, 2) };
    });
    expect(root.querySelector('.conversation-title')).toBeNull();
    rest();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(named(root, 'textbox', 'Ask Claude')).toHaveLength(1);
    expect(root.querySelectorAll('[role="log"]')).toHaveLength(1);
    expect(root.querySelector('.conversation-title')?.textContent).toBe('the title');
    expect(hud.rendered()).toBe(2);
    // In the layout's order: the side column stays where it was, its contents in it.
    expect(Array.from(root.children).map((el) => el.className)).toEqual(['topbar', 'banners', 'stage', 'side', 'file-panel']);
    expect(side?.isConnected).toBe(true);
    expect(side?.querySelector('[role="log"]')).not.toBeNull();
  });
});

describe('a frame that changes nothing shown', () => {
  it('writes no text the page shows (the same text written again is a new frame: ~25 ms of CPU on a software GPU)', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace });
    const sessions: HostBody = { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'thinking', title: 'Fix the bug', sessionId: null, warm: true }] };
    const busy: HostBody = { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1, turnCostUsd: 0.25, totalCostUsd: 1.5 }) };
    transport.deliver(sessions);
    transport.deliver(busy);
    transport.deliver({ type: 'snapshotEnd' });
    // The header, the title, the bubble and the drawer's cost are shown.
    expect(root.querySelector('.conversation-title')?.textContent).toBe('Fix the bug');
    expect(root.querySelector('.bubble-label')?.textContent).toBe('Thinking');
    expect(root.querySelector('.cost')?.textContent).toContain('$0.25');
    const observer = new MutationObserver(() => {});
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    // The same frames again: a turn sends many such (the keypad's, the sessions list's, a phase that stays).
    transport.deliver(sessions);
    transport.deliver(busy);
    const shown = observer.takeRecords().filter((r) => {
      const el = r.target instanceof Element ? r.target : r.target.parentElement;
      return el !== null && el.closest('[hidden]') === null;
    });
    observer.disconnect();
    expect(shown.map((r) => `${r.type} in ${(r.target instanceof Element ? r.target : r.target.parentElement)?.className ?? '?'}`)).toEqual([]);
    // A change is still written.
    transport.deliver({ type: 'session', ...session('c1', { phase: 'writing', label: 'Writing a reply', turns: 1, turnCostUsd: 0.5, totalCostUsd: 1.75 }) });
    expect(root.querySelector('.bubble-label')?.textContent).toBe('Writing a reply');
    expect(root.querySelector('.cost')?.textContent).toContain('$0.50');
  });
});

describe('cards across a switch of conversations', () => {
  it('keeps a card of another conversation as it was (typed, or sent and not yet confirmed) until it no longer waits', () => {
    const { root, transport } = mount();
    transport.deliver({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
    transport.deliver({ type: 'workspace', ...workspace });
    transport.deliver({ type: 'sessions', current: 'c1', conversations: [
      { key: 'c1', phase: 'waiting', title: 'one', sessionId: null, warm: true },
      { key: 'c2', phase: 'waiting', title: 'two', sessionId: null, warm: true },
    ] });
    transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [permission] }) });
    transport.deliver({ type: 'session', ...session('c2', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [questions] }) });
    transport.deliver({ type: 'snapshotEnd' });
    const tab = (key: string): HTMLElement | null => root.querySelector<HTMLElement>(`[role="tab"][data-key="${key}"]`);
    const allow = (): HTMLButtonElement | undefined => named(root, 'button', 'Allow')[0] as HTMLButtonElement | undefined;
    // c1's permission is answered; its answer is not confirmed yet when the user looks at c2.
    allow()?.click();
    expect(allow()?.disabled).toBe(true);
    const sentBefore = transport.sent.length;
    tab('c2')?.click();
    expect(named(root, 'group', 'Edit src/a.rs')).toHaveLength(0);
    // Something typed into c2's question card is there still after a look at c1 and back.
    const card = named(root, 'group', 'Claude has 2 questions')[0];
    const field = card?.querySelector<HTMLInputElement | HTMLTextAreaElement>('input[type="text"], textarea');
    if (!field) throw new Error('no text field in the question card');
    field.value = 'half typed';
    tab('c1')?.click();
    // Back on c1: the same card, still sent, not answerable a second time.
    expect(allow()?.disabled).toBe(true);
    expect(transport.sent.length).toBe(sentBefore);
    tab('c2')?.click();
    const again = named(root, 'group', 'Claude has 2 questions')[0];
    expect(again).toBe(card);
    expect(again?.querySelector<HTMLInputElement | HTMLTextAreaElement>('input[type="text"], textarea')?.value).toBe('half typed');
    // c1's card answered: gone for good, and a card of that id in c1 later is a new one.
    transport.deliver({ type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1, pending: [] }) });
    transport.deliver({ type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', turns: 1, pending: [permission] }) });
    tab('c1')?.click();
    expect(allow()?.disabled).toBe(false);
  });
});

describe('a card opened for a conversation that is not here', () => {
  it('says so once the page has its snapshot, and does not jump to a later conversation of that key', async () => {
    const { root, transport, hud } = mount();
    hud.openCard('c9', permission.requestId);
    waitingSnapshot(transport, []);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(root.querySelector('.notices')?.textContent ?? '').toContain('The card you opened is gone');
    // A c9 that comes later (keys start again after an Orbit restart) is not jumped to.
    transport.deliver({ type: 'sessions', current: 'c1', conversations: [
      { key: 'c1', phase: 'waiting', title: 'hi', sessionId: null, warm: true },
      { key: 'c9', phase: 'idle', title: 'other', sessionId: null, warm: true },
    ] });
    expect(hud.shown()).toBe('c1');
    // Opened when the page is ready already: said at once.
    hud.openCard('c8', permission.requestId);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(root.querySelectorAll('.notice-item').length).toBe(2);
  });
});
