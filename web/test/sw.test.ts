/**
 * The service worker (`src/sw.ts`): what a card's notification does when
 * the user acts on it. The end-to-end test reaches it through a tab of the
 * workspace; these cover the rest: opening a window when no tab is open,
 * the skip over the worker's own channel, data that is not a card's, and
 * what it does when a tab goes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

interface Client {
  id: string;
  url: string;
  focused: boolean;
  visibilityState: DocumentVisibilityState;
  focus: ReturnType<typeof vi.fn>;
  postMessage: ReturnType<typeof vi.fn>;
}

let clientCount = 0;

function client(url: string, focused = false, visibilityState: DocumentVisibilityState = 'hidden'): Client {
  clientCount += 1;
  const c: Client = { id: `client-${clientCount}`, url, focused, visibilityState, focus: vi.fn(() => Promise.resolve(c)), postMessage: vi.fn() };
  return c;
}

/** The worker's global scope, as far as sw.ts uses it. */
function workerScope(clients: Client[]) {
  const listeners = new Map<string, (event: Event) => void>();
  return {
    listeners,
    opened: [] as string[],
    location: { origin: 'http://127.0.0.1:4321' },
    registration: { getNotifications: vi.fn(() => Promise.resolve([])) },
    clients: {
      matchAll: vi.fn(() => Promise.resolve(clients)),
      openWindow: vi.fn(function (this: unknown, url: string) { scope.opened.push(url); return Promise.resolve(null); }),
      claim: vi.fn(() => Promise.resolve()),
    },
    skipWaiting: vi.fn(() => Promise.resolve()),
    addEventListener(type: string, listener: (event: Event) => void) {
      listeners.set(type, listener);
    },
  };
}
let scope: ReturnType<typeof workerScope>;

/** A WebSocket the test answers as Orbit would. */
class FakeSocket extends EventTarget {
  static made: FakeSocket[] = [];
  sent: unknown[] = [];
  closed = false;
  constructor(readonly url: string) {
    super();
    FakeSocket.made.push(this);
  }
  send(text: string): void {
    this.sent.push(JSON.parse(text));
  }
  close(): void {
    this.closed = true;
  }
  receive(frame: unknown): void {
    this.dispatchEvent(Object.assign(new Event('message'), { data: JSON.stringify(frame) }));
  }
}

const data = (kind: 'permission' | 'questions') => ({
  workspaceId: '0123456789abcdef',
  key: 'c2',
  requestId: 'req-7',
  kind,
  url: '/w/0123456789abcdef/#card=c2/req-7',
});

/** Clicks `action` on a notification carrying `payload`; resolves with what the worker waited for. */
async function click(action: string, payload: unknown): Promise<{ closed: boolean; outcome: unknown }> {
  let waited: Promise<unknown> = Promise.resolve(undefined);
  const notification = { data: payload, close: vi.fn() };
  const event = Object.assign(new Event('notificationclick'), {
    action,
    notification,
    waitUntil: (p: Promise<unknown>) => { waited = p; },
  });
  const listener = scope.listeners.get('notificationclick');
  if (!listener) throw new Error('the worker handles no notificationclick');
  listener(event);
  const outcome = await waited;
  return { closed: notification.close.mock.calls.length > 0, outcome };
}

/** The worker's own channel number `n` once made, opened. */
async function opened(n: number): Promise<FakeSocket> {
  await vi.waitFor(() => { expect(FakeSocket.made).toHaveLength(n + 1); });
  const socket = FakeSocket.made[n];
  if (!socket) throw new Error('no socket');
  socket.dispatchEvent(new Event('open'));
  return socket;
}

async function load(clients: Client[]): Promise<void> {
  scope = workerScope(clients);
  vi.stubGlobal('self', scope);
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.resetModules();
  // @ts-expect-error sw.ts is a classic script of its own (no exports): it is run for its listeners.
  await import('../src/sw');
}

beforeEach(() => {
  FakeSocket.made = [];
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the service worker', () => {
  it('Open focuses a tab of the card\'s workspace (the visible one first) and shows it the card; another workspace\'s tab is left alone', async () => {
    const other = client('http://127.0.0.1:4321/w/ffffffffffffffff/', true, 'visible');
    const hidden = client('http://127.0.0.1:4321/w/0123456789abcdef/');
    const visible = client('http://127.0.0.1:4321/w/0123456789abcdef/#x', false, 'visible');
    await load([other, hidden, visible]);
    const { closed, outcome } = await click('open', data('permission'));
    expect(closed).toBe(true);
    expect(outcome).toBe('opened-in-page');
    expect(visible.postMessage).toHaveBeenCalledWith({ type: 'orbit-open-card', key: 'c2', requestId: 'req-7' });
    expect(visible.focus).toHaveBeenCalled();
    expect(hidden.postMessage).not.toHaveBeenCalled();
    expect(other.postMessage).not.toHaveBeenCalled();
    expect(scope.opened).toEqual([]);
  });

  it('with no tab of the workspace open, Open (or a click on the notification itself) opens the page on the card', async () => {
    await load([client('http://127.0.0.1:4321/w/ffffffffffffffff/')]);
    expect((await click('open', data('permission'))).outcome).toBe('opened-window');
    expect((await click('', data('questions'))).outcome).toBe('opened-window');
    expect(scope.opened).toEqual([data('permission').url, data('questions').url]);
  });

  it('Skip with a tab open hands the skip to that tab (its outbox sends it through the controller)', async () => {
    const tab = client('http://127.0.0.1:4321/w/0123456789abcdef/');
    await load([tab]);
    expect((await click('skip', data('questions'))).outcome).toBe('skip-sent-to-page');
    expect(tab.postMessage).toHaveBeenCalledWith({ type: 'orbit-skip', key: 'c2', requestId: 'req-7' });
    expect(FakeSocket.made).toEqual([]);
  });

  it('Skip with no tab open sends one skipQuestions over a channel of its own, after the snapshot, and waits for its ack', async () => {
    await load([]);
    const done = click('skip', data('questions'));
    const socket = await opened(0);
    expect(socket.url).toBe('ws://127.0.0.1:4321/ws?w=0123456789abcdef');
    expect(socket.sent).toEqual([{ type: 'resume', instanceId: null, lastSeq: null }]);
    // Nothing is sent before the snapshot has ended (the controller would not know the card yet).
    socket.receive({ seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: '0123456789abcdef', head: 3, resumed: false } });
    expect(socket.sent).toHaveLength(1);
    socket.receive({ seq: null, body: { type: 'snapshotEnd' } });
    expect(socket.sent).toHaveLength(2);
    const action = socket.sent[1] as { type: string; id: string; request: unknown };
    expect(action.type).toBe('action');
    expect(action.request).toEqual({ type: 'skipQuestions', key: 'c2', requestId: 'req-7' });
    // Another action's ack is not this one's.
    socket.receive({ seq: null, body: { type: 'ack', id: 'someone-else', ok: true, code: null, message: null } });
    expect(socket.closed).toBe(false);
    socket.receive({ seq: null, body: { type: 'ack', id: action.id, ok: true, code: null, message: null } });
    expect((await done).outcome).toBe('skipped');
    expect(socket.closed).toBe(true);
  });

  it('says when its own channel\'s skip is refused, and gives up after its timeout', async () => {
    await load([]);
    const refused = click('skip', data('questions'));
    const first = await opened(0);
    first.receive({ seq: null, body: { type: 'snapshotEnd' } });
    const id = (first.sent[1] as { id: string }).id;
    first.receive({ seq: null, body: { type: 'ack', id, ok: false, code: 'not_pending', message: 'answered already' } });
    expect((await refused).outcome).toBe('refused');

    vi.useFakeTimers();
    const silent = click('skip', data('questions'));
    await vi.waitFor(() => { expect(FakeSocket.made).toHaveLength(2); });
    await vi.advanceTimersByTimeAsync(15_000);
    expect((await silent).outcome).toBe('timeout');
    expect(FakeSocket.made[1]?.closed).toBe(true);
  });

  it('a skip on a permission\'s notification only opens the card; a notification that is not a card\'s does nothing', async () => {
    await load([]);
    expect((await click('skip', data('permission'))).outcome).toBe('opened-window');
    expect(FakeSocket.made).toEqual([]);
    const foreign = await click('skip', { workspaceId: 'x', key: 'c1' });
    expect(foreign.outcome).toBeUndefined();
    expect(foreign.closed).toBe(true);
    expect(scope.opened).toEqual([data('permission').url]);
  });

  describe('a tab that goes', () => {
    const WS = '0123456789abcdef';
    const shown = (workspaceId: string, tag: string, card = true) => ({
      tag,
      data: card ? { ...data('permission'), workspaceId, requestId: tag, url: `/w/${workspaceId}/#card=c2/${tag}` } : { note: true },
      close: vi.fn(),
    });

    /** Tab `from` says it goes; resolves with what the worker did, after its grace. */
    async function goes(from: Client | null, workspaceId = WS): Promise<unknown> {
      let waited: Promise<unknown> = Promise.resolve(undefined);
      const event = Object.assign(new Event('message'), {
        data: { type: 'orbit-page-gone', workspaceId },
        source: from,
        waitUntil: (p: Promise<unknown>) => { waited = p; },
      });
      const listener = scope.listeners.get('message');
      if (!listener) throw new Error('the worker handles no message');
      listener(event);
      await vi.advanceTimersByTimeAsync(1000);
      return waited;
    }

    it('keeps the notifications while another tab of the workspace is open (hidden, relying on them); closes the workspace\'s cards\' once the last goes', async () => {
      vi.useFakeTimers();
      const a = client(`http://127.0.0.1:4321/w/${WS}/`);
      const b = client(`http://127.0.0.1:4321/w/${WS}/#card=c1/r1`);
      const elsewhere = client('http://127.0.0.1:4321/w/ffffffffffffffff/');
      const tabs = [a, b, elsewhere];
      await load(tabs);
      const mine = shown(WS, 'req-1');
      const theirs = shown('ffffffffffffffff', 'req-2');
      const foreign = shown(WS, 'note', false);
      scope.registration.getNotifications.mockImplementation(() => Promise.resolve([mine, theirs, foreign] as never[]));
      // `a` closes (still listed while it goes): `b` is left.
      expect(await goes(a)).toBe('kept');
      expect(mine.close).not.toHaveBeenCalled();
      tabs.splice(0, 1);
      // `b` closes too: no tab of the workspace is left (another workspace's tab is not one).
      expect(await goes(b)).toBe('closed 1');
      expect(mine.close).toHaveBeenCalled();
      expect(theirs.close).not.toHaveBeenCalled();
      expect(foreign.close).not.toHaveBeenCalled();
    });

    it('keeps them for a tab that reloads (its new document is there by then); closes them when tabs go together', async () => {
      vi.useFakeTimers();
      const a = client(`http://127.0.0.1:4321/w/${WS}/`);
      const tabs = [a];
      await load(tabs);
      const mine = shown(WS, 'req-1');
      scope.registration.getNotifications.mockImplementation(() => Promise.resolve([mine] as never[]));
      // Reloaded: the old document goes, a new one (a new id) comes within the grace.
      const going = goes(a);
      tabs.splice(0, 1, client(`http://127.0.0.1:4321/w/${WS}/`));
      expect(await going).toBe('kept');
      expect(mine.close).not.toHaveBeenCalled();
      // Two tabs whose window closes: both say so, both still listed; none is left.
      const [c] = tabs;
      const d = client(`http://127.0.0.1:4321/w/${WS}/`);
      tabs.push(d);
      if (!c) throw new Error('no tab');
      const first = goes(c);
      const second = goes(d);
      expect(await first).toBe('closed 1');
      expect(await second).toBe('closed 1');
      expect(mine.close).toHaveBeenCalled();
    });

    it('a reload slower than the grace: its new document, come while they closed, is told which closed (it raises them again while hidden)', async () => {
      vi.useFakeTimers();
      const old = client(`http://127.0.0.1:4321/w/${WS}/`);
      const tabs = [old];
      await load(tabs);
      const mine = shown(WS, 'req-1');
      const theirs = shown('ffffffffffffffff', 'req-2');
      const elsewhere = client('http://127.0.0.1:4321/w/ffffffffffffffff/');
      const reloaded = client(`http://127.0.0.1:4321/w/${WS}/`);
      // The new document comes while the worker closes the notifications (after its look for tabs).
      scope.registration.getNotifications.mockImplementation(() => {
        tabs.push(reloaded, elsewhere);
        return Promise.resolve([mine, theirs] as never[]);
      });
      expect(await goes(old)).toBe('closed 1');
      expect(mine.close).toHaveBeenCalled();
      expect(reloaded.postMessage).toHaveBeenCalledWith({ type: 'orbit-notifications-closed', workspaceId: WS, tags: ['req-1'] });
      // Not the document that went, nor another workspace's tab.
      expect(old.postMessage).not.toHaveBeenCalled();
      expect(elsewhere.postMessage).not.toHaveBeenCalled();
    });
  });
});
