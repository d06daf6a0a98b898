import { describe, expect, it, vi } from 'vitest';
import { Channel, ChannelDropped } from '../src/protocol/channel';
import { FakeTransport } from './fakeTransport';
import { Store } from '../src/state/store';
import { workspace } from './fixtures';

const hello = (resumed: boolean, head: number) => ({ seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head, resumed } });

describe('Channel', () => {
  it('resumes on every open and resends unacknowledged actions with the same id', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: null, lastSeq: null }]);
    transport.deliver(hello(false, 5));
    transport.deliver({ seq: null, body: { type: 'snapshotEnd' } });
    const item = channel.act({ type: 'stopAll' });
    expect(transport.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    // The socket drops before the ack.
    transport.setState('reconnecting');
    expect(store.state.connection).toBe('reconnecting');
    transport.sent = [];
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: 5 }]);
    expect(store.state.connects).toBe(2);
    transport.deliver(hello(true, 5));
    expect(transport.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    transport.deliver({ seq: null, body: { type: 'ack', id: item.id, ok: true, code: null, message: null } });
    expect(store.state.outbox).toEqual([]);
  });

  it('a snapshot cut short by a drop is asked for again whole, not resumed from its head', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    transport.setState('open');
    transport.deliver(hello(false, 26));
    transport.setState('reconnecting');
    transport.sent = [];
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: null }]);
    transport.deliver(hello(false, 26));
    transport.deliver({ seq: null, body: { type: 'snapshotEnd' } });
    transport.setState('reconnecting');
    transport.sent = [];
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: 26 }]);
  });

  it('an action made while disconnected waits for the hello', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    const item = channel.trust();
    expect(transport.sent).toEqual([]);
    transport.setState('open');
    transport.deliver(hello(false, 0));
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: null, lastSeq: null }, { type: 'trust', id: item.id }]);
  });

  it('searches over the socket once greeted: each answer settles its own id, the store never sees one, a drop rejects what is out', async () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    expect(channel.search('ma', 8)).toBeNull();
    transport.setState('open');
    expect(channel.search('ma', 8)).toBeNull();
    transport.deliver(hello(false, 0));
    transport.deliver({ seq: null, body: { type: 'snapshotEnd' } });
    let renders = 0;
    store.subscribe(() => { renders += 1; });
    const first = channel.search('ma', 8);
    const second = channel.search('mai', 8);
    if (!first || !second) throw new Error('not sent');
    const [a, b] = transport.sent.slice(-2) as { id: number }[];
    expect(transport.sent.slice(-2)).toEqual([{ type: 'search', id: a?.id, q: 'ma', limit: 8 }, { type: 'search', id: b?.id, q: 'mai', limit: 8 }]);
    expect(a?.id).not.toBe(b?.id);
    const match = { path: 'src/main.rs', score: 9, indices: [4, 5, 6] };
    // Answered out of order: each goes to its own search.
    transport.deliver({ seq: null, body: { type: 'searchAnswer', id: b?.id, hash: 'h', matches: [match], error: null } });
    transport.deliver({ seq: null, body: { type: 'searchAnswer', id: a?.id, hash: null, matches: [], error: '`q` is too long (at most 256 characters)' } });
    await expect(second).resolves.toEqual([match]);
    await expect(first).rejects.toThrow('`q` is too long');
    // An answer nobody waits for is dropped.
    transport.deliver({ seq: null, body: { type: 'searchAnswer', id: 4242, hash: 'h', matches: [match], error: null } });
    expect(renders).toBe(0);
    expect(store.state.errors).toEqual([]);
    const out = channel.search('main', 8);
    transport.setState('reconnecting');
    await expect(out).rejects.toBeInstanceOf(ChannelDropped);
    expect(channel.search('main', 8)).toBeNull();
  });

  it('a frame that does not match the protocol is refused visibly and changes nothing', () => {
    const transport = new FakeTransport();
    const store = new Store();
    new Channel(transport, store).start();
    transport.setState('open');
    transport.deliver({ seq: 1, body: { type: 'session', key: 'c1' } });
    expect(store.state.errors).toHaveLength(1);
    expect(store.state.errors[0]).toContain('"session" frame');
    expect(store.state.notices.at(-1)?.text).toContain('does not match the protocol');
    expect(store.state.sessions).toEqual({});
    expect(store.state.lastSeq).toBeNull();
  });
});

describe('the outbox across reloads', () => {
  it('is kept in storage, sent again after a reload with the same id, and cleared by its ack', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const storage = memoryOutboxStorage();
    let now = 1_000_000;
    const t1 = new FakeTransport();
    const c1 = new Channel(t1, new Store(), { storage, now: () => now });
    c1.start();
    t1.setState('open');
    t1.deliver(hello(false, 0));
    const item = c1.act({ type: 'stopAll' });
    expect(storage.items.map((i) => [i.id, i.instanceId])).toEqual([[item.id, 'i1']]);
    // The page reloads before the ack: a new channel on the same storage.
    now += 5000;
    const t2 = new FakeTransport();
    const store2 = new Store();
    const c2 = new Channel(t2, store2, { storage, now: () => now });
    c2.start();
    t2.setState('open');
    t2.deliver(hello(false, 0));
    expect(t2.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    t2.deliver({ seq: null, body: { type: 'ack', id: item.id, ok: true, code: null, message: null } });
    expect(storage.items).toEqual([]);
    expect(store2.state.notices).toEqual([]);
  });

  it('an entry from before an Orbit restart is dropped and said', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const storage = memoryOutboxStorage([
      { id: 'old1', frame: { type: 'action', id: 'old1', request: { type: 'skipQuestions', key: 'c1', requestId: 'r9' } }, at: 1000, instanceId: 'before-restart' },
    ]);
    const t = new FakeTransport();
    const store = new Store();
    const channel = new Channel(t, store, { storage, now: () => 2000 });
    expect(store.state.outbox.map((i) => i.id)).toEqual(['old1']);
    channel.start();
    t.setState('open');
    t.deliver(hello(false, 0));
    expect(t.sent.filter((f) => (f as { type: string }).type === 'action')).toEqual([]);
    expect(store.state.outbox).toEqual([]);
    expect(storage.items).toEqual([]);
    expect(store.state.notices.map((n) => n.text)).toEqual([
      'Not sent, because Orbit restarted since: skipping a question card. Do it again if it still matters.',
    ]);
    // Noted, so that what waited on it (the card) is given back.
    expect(store.state.dropped).toEqual({ old1: 'restarted' });
  });

  it('a stored outbox read after the first frame: sorted by the preloaded hello, kept with actions queued before it, sent once greeted', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const stored = (id: string, instanceId: string) => ({ id, frame: { type: 'action' as const, id, request: { type: 'skipQuestions' as const, key: 'c1', requestId: id } }, at: 1000, instanceId });
    const storage = memoryOutboxStorage([stored('old1', 'before-restart'), stored('mine', 'i1')]);
    const t = new FakeTransport();
    const store = new Store();
    let release = (): void => undefined;
    const later = new Promise<void>((resolve) => { release = resolve; });
    const channel = new Channel(t, store, { storage, now: () => 2000, restoreAfter: later });
    // Not read yet: the page's preloaded snapshot (its hello names the running Orbit) comes first.
    expect(store.state.outbox).toEqual([]);
    channel.preload([JSON.stringify(hello(false, 0)), JSON.stringify({ seq: null, body: { type: 'snapshotEnd' } })]);
    expect(store.state.outbox).toEqual([]);
    release();
    await later;
    await Promise.resolve();
    expect(store.state.outbox.map((i) => i.id)).toEqual(['mine']);
    expect(store.state.notices.map((n) => n.text)).toEqual([
      'Not sent, because Orbit restarted since: skipping a question card. Do it again if it still matters.',
    ]);
    expect(storage.items.map((i) => i.id)).toEqual(['mine']);
    channel.start();
    t.setState('open');
    t.deliver(hello(true, 0));
    expect(t.sent.filter((f) => (f as { type: string }).type === 'action').map((f) => (f as { id: string }).id)).toEqual(['mine']);
  });

  it('an action before the stored outbox is read reads it first: nothing stored is lost', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const storage = memoryOutboxStorage([
      { id: 'mine', frame: { type: 'action', id: 'mine', request: { type: 'stopAll' } }, at: 1000, instanceId: 'i1' },
    ]);
    const t = new FakeTransport();
    const store = new Store();
    const channel = new Channel(t, store, { storage, now: () => 2000, restoreAfter: new Promise(() => undefined) });
    expect(store.state.outbox).toEqual([]);
    const item = channel.act({ type: 'stopAll' });
    expect(store.state.outbox.map((i) => i.id)).toEqual(['mine', item.id]);
    expect(storage.items.map((i) => i.id)).toEqual(['mine', item.id]);
  });

  it('the socket starting to connect does not read the stored outbox (the first frame would wait); its opening does', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const storage = memoryOutboxStorage([
      { id: 'mine', frame: { type: 'action', id: 'mine', request: { type: 'stopAll' } }, at: 1000, instanceId: 'i1' },
    ]);
    let loads = 0;
    const counted = { load: () => { loads += 1; return storage.load(); }, save: (items: Parameters<typeof storage.save>[0]) => { storage.save(items); } };
    const t = new FakeTransport();
    const store = new Store();
    const channel = new Channel(t, store, { storage: counted, now: () => 2000, restoreAfter: new Promise(() => undefined) });
    channel.start();
    expect(store.state.connection).toBe('connecting');
    expect(loads).toBe(0);
    expect(store.state.outbox).toEqual([]);
    t.setState('reconnecting');
    expect(loads).toBe(0);
    t.setState('open');
    expect(loads).toBe(1);
    expect(store.state.outbox.map((i) => i.id)).toEqual(['mine']);
    t.deliver(hello(true, 0));
    expect(t.sent.filter((f) => (f as { type: string }).type === 'action').map((f) => (f as { id: string }).id)).toEqual(['mine']);
  });

  it('an action not acknowledged within a minute is dropped and said, by the injected clock', async () => {
    const { memoryOutboxStorage } = await import('../src/state/outbox');
    const storage = memoryOutboxStorage();
    let now = 50_000;
    const t = new FakeTransport();
    const store = new Store();
    const channel = new Channel(t, store, { storage, now: () => now });
    channel.start();
    t.setState('open');
    t.deliver(hello(false, 0));
    channel.act({ type: 'stop', key: 'c1' });
    now += 60_000;
    channel.expire();
    expect(store.state.outbox).toHaveLength(1);
    now += 1;
    channel.expire();
    expect(store.state.outbox).toEqual([]);
    expect(storage.items).toEqual([]);
    expect(store.state.notices.at(-1)?.text).toBe('Not sent, because Orbit did not confirm it within a minute: Stop. Do it again if it still matters.');
    expect(Object.keys(store.state.dropped)).toHaveLength(1);
    expect(Object.values(store.state.dropped)).toEqual(['expired']);
  });

  it('the page drops an action unacknowledged for a minute by itself, connected or not (its own timer, the real clock)', async () => {
    vi.useFakeTimers();
    try {
      const { memoryOutboxStorage } = await import('../src/state/outbox');
      const storage = memoryOutboxStorage();
      const t = new FakeTransport();
      const store = new Store();
      const channel = new Channel(t, store, { storage });
      channel.start();
      t.setState('open');
      t.deliver(hello(false, 0));
      channel.act({ type: 'stopAll' });
      // Orbit never answers; then the socket drops too.
      vi.advanceTimersByTime(30_000);
      t.setState('reconnecting');
      vi.advanceTimersByTime(29_000);
      expect(store.state.outbox).toHaveLength(1);
      vi.advanceTimersByTime(7_000);
      expect(store.state.outbox).toEqual([]);
      expect(storage.items).toEqual([]);
      expect(store.state.notices.at(-1)?.text).toBe('Not sent, because Orbit did not confirm it within a minute: Stop all. Do it again if it still matters.');
    } finally {
      vi.useRealTimers();
    }
  });

  it('a stored outbox that is not ours is ignored', async () => {
    const { parseOutbox } = await import('../src/state/outbox');
    expect(parseOutbox('not json')).toEqual([]);
    expect(parseOutbox('{"a":1}')).toEqual([]);
    expect(parseOutbox('[{"id":"x","at":1,"instanceId":null,"frame":{"type":"action","id":"y"}}]')).toEqual([]);
  });

  it('an outbox stored by another version of the page does not stop the hello after a restart (its drop is said by reading its request)', async () => {
    const stored = '[{"id":"x","at":1000,"instanceId":"before-restart","frame":{"type":"action","id":"x","request":{"type":"prompt"}}}]';
    const { parseOutbox } = await import('../src/state/outbox');
    const storage = { load: () => parseOutbox(stored), save: () => undefined };
    const t = new FakeTransport();
    const store = new Store();
    const channel = new Channel(t, store, { storage, now: () => 2000 });
    channel.start();
    t.setState('open');
    t.deliver(hello(false, 0));
    // Greeted: an action made now goes; the stored one was left out.
    const item = channel.act({ type: 'stopAll' });
    expect(t.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    expect(store.state.outbox.map((i) => i.id)).toEqual([item.id]);
    expect(store.state.errors).toEqual([]);
  });
});
