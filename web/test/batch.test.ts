import { describe, expect, it } from 'vitest';
import { Channel } from '../src/protocol/channel';
import type { CheckResult, FrameChecker } from '../src/protocol/checker';
import { batchedUrl } from '../src/protocol/websocket';
import { FakeTransport } from './fakeTransport';
import { Store } from '../src/state/store';
import { entry, session, workspace } from './fixtures';

// The page socket's batches (docs/page-protocol.md, "Batches"): a burst's frames as one JSON list.

const hello = { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: 3, resumed: false } };
const burst = [
  hello,
  { seq: null, body: { type: 'workspace', ...workspace } },
  { seq: null, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'thinking', title: null, sessionId: null, warm: true }] } },
  { seq: null, body: { type: 'snapshotEnd' } },
  { seq: 4, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(1, { kind: 'prompt', text: 'mk1a', skills: [], files: [] })] } },
  { seq: 5, body: { type: 'session', ...session('c1', { phase: 'reading', label: 'Reading a.ts' }) } },
];

/** A channel on a fake socket, and how many times its store told its listeners. */
function opened(checker: FrameChecker | null = null): { transport: FakeTransport; store: Store; updates: () => number } {
  const transport = new FakeTransport();
  const store = new Store();
  let n = 0;
  store.subscribe(() => { n += 1; });
  const channel = new Channel(transport, store, { checker });
  channel.start();
  transport.setState('open');
  n = 0;
  return { transport, store, updates: () => n };
}

/** What a page shows of the frames above. */
function shown(store: Store): unknown {
  const s = store.state;
  return { ready: s.ready, lastSeq: s.lastSeq, frames: s.frames, conversations: s.conversations, transcript: s.transcripts.c1, phase: s.sessions.c1?.phase, errors: s.errors };
}

describe('a batch of frames from the socket', () => {
  it('is applied in order, each frame as if it came alone, all in the one call', () => {
    const alone = opened();
    for (const frame of burst) alone.transport.deliver(frame);
    const batched = opened();
    batched.transport.deliverText(JSON.stringify(burst));
    expect(shown(batched.store)).toEqual(shown(alone.store));
    expect(batched.store.state.lastSeq).toBe(5);
    expect(batched.store.state.transcripts.c1?.[0]?.body).toMatchObject({ text: 'mk1a' });
    expect(batched.store.state.errors).toEqual([]);
    // The socket's hello in a batch greets the connection as a lone one does: an action goes out.
    expect(batched.transport.sent).toEqual(alone.transport.sent);
    expect(batched.updates()).toBe(burst.length);
  });

  it('a frame in it that fails its check is said and skipped; the others are applied', () => {
    const { transport, store } = opened();
    const bad = { seq: 4, body: { type: 'session', key: 'c1' } };
    transport.deliverText(JSON.stringify([...burst.slice(0, 4), bad, burst[5]]));
    expect(store.state.errors).toHaveLength(1);
    expect(store.state.errors[0]).toMatch(/^A "session" frame from Orbit does not match the protocol/);
    expect(store.state.ready).toBe(true);
    expect(store.state.lastSeq).toBe(5);
    expect(store.state.sessions.c1?.phase).toBe('reading');
  });

  it('a list that is not JSON, or holds no frame, is said as a batch and nothing of it is applied', () => {
    const { transport, store } = opened();
    transport.deliverText(JSON.stringify(burst).slice(0, -5));
    transport.deliverText('[]');
    expect(store.state.errors).toEqual([
      'A batch of frames from Orbit is not JSON; it was ignored.',
      'A batch of frames from Orbit holds no frames; it was ignored.',
    ]);
    expect(store.state.ready).toBe(false);
    expect(store.state.frames).toBe(2);
    // A list inside a batch is a frame that fails its check, not a batch; the frame after it is applied.
    transport.deliverText(JSON.stringify([burst, hello]));
    expect(store.state.errors).toHaveLength(3);
    expect(store.state.errors[2]).toMatch(/^A "unknown" frame from Orbit does not match the protocol/);
    expect(store.state.lastSeq).toBe(3);
  });

  it('waits behind a frame still in the worker, and a long one has its frames checked as text', async () => {
    const held: (() => void)[] = [];
    const checked: string[] = [];
    const checker: FrameChecker = {
      check: (text) => new Promise<CheckResult>((resolve) => {
        checked.push(text);
        held.push(() => { resolve({ ok: true }); });
      }),
    };
    /** Answers every check, those asked for meanwhile too (the queue asks for them in turn). */
    const releaseAll = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 0));
      while (held.length > 0) {
        held.shift()?.();
        await new Promise((r) => setTimeout(r, 0));
      }
    };
    const { transport, store } = opened(checker);
    transport.deliver({ ...hello, body: { ...hello.body, head: 0 } });
    // A big transcript goes to the worker; the batch after it waits for it.
    const big = { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: true, entries: [entry(1, { kind: 'prompt', text: 'x'.repeat(40000), skills: [], files: [] })] } };
    transport.deliver(big);
    transport.deliverText(JSON.stringify([{ seq: 2, body: { type: 'snapshotEnd' } }, { seq: 3, body: { type: 'snapshotEnd' } }]));
    expect(store.state.lastSeq).toBe(0);
    await releaseAll();
    expect(store.state.lastSeq).toBe(3);
    expect(store.state.transcripts.c1).toHaveLength(1);
    // Over the batch's bound (Orbit keeps under 16 KiB): its frames as text, the big one in the worker.
    checked.length = 0;
    const bigger = { ...big, seq: 4 };
    transport.deliverText(JSON.stringify([bigger, { seq: 5, body: { type: 'snapshotEnd' } }]));
    await new Promise((r) => setTimeout(r, 0));
    expect(checked).toEqual([JSON.stringify(bigger)]);
    await releaseAll();
    expect(checked).toEqual([JSON.stringify(bigger), JSON.stringify({ seq: 5, body: { type: 'snapshotEnd' } })]);
    expect(store.state.lastSeq).toBe(5);
    expect(store.state.errors).toEqual([]);
  });
});

describe('the socket asks for batches', () => {
  it('adds batch=1 to its address unless it says otherwise', () => {
    expect(batchedUrl('ws://127.0.0.1:4321/ws?w=0123456789abcdef')).toBe('ws://127.0.0.1:4321/ws?w=0123456789abcdef&batch=1');
    expect(batchedUrl('ws://127.0.0.1:4321/ws?w=0123456789abcdef&batch=0')).toBe('ws://127.0.0.1:4321/ws?w=0123456789abcdef&batch=0');
  });
});
