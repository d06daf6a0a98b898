import { describe, expect, it, vi } from 'vitest';
import { Channel } from '../src/protocol/channel';
import type { CheckResult, FrameChecker } from '../src/protocol/checker';
import { MAP_PRELOAD_ID, PRELOAD_ID, PRELOAD_WORKER_FRAME_BYTES, bytesFromBase64, readPreloaded, readPreloadedMap } from '../src/protocol/preload';
import { FakeTransport } from './fakeTransport';
import { Store } from '../src/state/store';
import { entry, session, workspace } from './fixtures';

/** A checker whose answers the test releases. */
class HeldChecker implements FrameChecker {
  held: (() => void)[] = [];
  check(): Promise<CheckResult> {
    return new Promise((resolve) => this.held.push(() => { resolve({ ok: true }); }));
  }
  /** Answers every check, including those asked for meanwhile (they are chained). */
  async releaseAll(): Promise<void> {
    await new Promise((r) => setTimeout(r, 0));
    while (this.held.length > 0) {
      this.held.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
  }
}

const HEAD = 41;
/** The snapshot a fresh connection gets, as the page's HTML carries it (one transcript over the worker's size for a preload). */
function snapshot(entries = 15): string[] {
  const text = 'x'.repeat(20000);
  const bodies = [
    { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: HEAD, resumed: false },
    { type: 'workspace', ...workspace },
    { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: true }] },
    { type: 'session', ...session('c1') },
    { type: 'transcript', key: 'c1', subagents: false, reset: true, entries: Array.from({ length: entries }, (_, i) => entry(i + 1, { kind: 'prompt', text, skills: [], files: [] })) },
    { type: 'snapshotEnd' },
  ];
  return bodies.map((body) => JSON.stringify({ seq: null, body }));
}

describe('the frames checked in the worker', () => {
  it('an error applying one (a listener\'s) is reported, and the frames after it still go, whatever the checker did', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => { reported.push(error); });
    try {
      const transport = new FakeTransport();
      const store = new Store();
      let calls = 0;
      const checker: FrameChecker = {
        check: () => {
          calls += 1;
          // The second check fails outright (a checker that stopped).
          return calls === 2 ? Promise.reject(new Error('checker gone')) : Promise.resolve({ ok: true });
        },
      };
      const channel = new Channel(transport, store, { checker });
      channel.start();
      transport.setState('open');
      let throwOnce = true;
      store.subscribe(() => {
        if (throwOnce && store.state.transcripts.c1) {
          throwOnce = false;
          throw new Error('render failed');
        }
      });
      const frames = snapshot();
      for (const frame of frames.slice(0, 4)) transport.deliver(JSON.parse(frame));
      // The big transcript goes to the worker; its render throws. The next text frame's check fails.
      transport.deliver(JSON.parse(frames[4] ?? 'null'));
      transport.deliver({ seq: null, body: { type: 'workspace', ...workspace, name: 'lost' } });
      transport.deliver(JSON.parse(frames[5] ?? 'null'));
      await new Promise((r) => setTimeout(r, 10));
      expect(reported.map((e) => String(e))).toEqual(['Error: render failed', 'Error: checker gone']);
      // The frames after both still went.
      expect(store.state.ready).toBe(true);
      transport.deliver({ seq: HEAD + 1, body: { type: 'sessions', current: null, conversations: [] } });
      await new Promise((r) => setTimeout(r, 10));
      expect(store.state.lastSeq).toBe(HEAD + 1);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('the snapshot in the page', () => {
  it('is shown before the socket opens, and the socket resumes from its head', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    channel.preload(snapshot());
    expect(store.state.ready).toBe(true);
    expect(store.state.connection).toBe('connecting');
    expect(store.state.transcripts.c1).toHaveLength(15);
    expect(store.state.lastSeq).toBe(HEAD);
    // An action made now waits for the socket's own hello (the preloaded one greets no connection).
    const item = channel.act({ type: 'stopAll' });
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: HEAD }]);
    transport.deliver({ seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: HEAD, resumed: true } });
    expect(transport.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    expect(store.state.transcripts.c1).toHaveLength(15);
  });

  it('a preloaded transcript under 256 KiB is checked at once, not in the (still starting) worker', () => {
    const store = new Store();
    const checker = new HeldChecker();
    const channel = new Channel(new FakeTransport(), store, { checker });
    channel.preload(snapshot(5));
    expect(checker.held).toHaveLength(0);
    expect(store.state.ready).toBe(true);
    expect(store.state.transcripts.c1).toHaveLength(5);
  });

  it('the resume waits for the preloaded frames still being checked, then asks only for what followed', async () => {
    const transport = new FakeTransport();
    const store = new Store();
    const checker = new HeldChecker();
    const channel = new Channel(transport, store, { checker });
    channel.start();
    channel.preload(snapshot());
    // The big transcript is in the worker; the frames after it wait behind it.
    expect(store.state.ready).toBe(false);
    transport.setState('open');
    expect(transport.sent).toEqual([]);
    await checker.releaseAll();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.state.ready).toBe(true);
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: HEAD }]);
  });

  it('a resume held for a connection that dropped meanwhile is not sent on the next one', async () => {
    const transport = new FakeTransport();
    const store = new Store();
    const checker = new HeldChecker();
    const channel = new Channel(transport, store, { checker });
    channel.start();
    channel.preload(snapshot());
    transport.setState('open');
    transport.setState('reconnecting');
    await checker.releaseAll();
    await new Promise((r) => setTimeout(r, 0));
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: HEAD }]);
  });

  it('parsed frames (a short block) are checked and applied as text frames are', () => {
    const store = new Store();
    const checker = new HeldChecker();
    const channel = new Channel(new FakeTransport(), store, { checker });
    channel.preload(snapshot(5).map((text) => JSON.parse(text) as unknown));
    expect(checker.held).toHaveLength(0);
    expect(store.state.ready).toBe(true);
    expect(store.state.transcripts.c1).toHaveLength(5);
    const refused = new Store();
    new Channel(new FakeTransport(), refused).preload([{ seq: 3, body: { type: 'session', key: 'c1' } }]);
    expect(refused.state.errors[0]).toContain('"session" frame');
    expect(refused.state.sessions).toEqual({});
  });

  it('a parsed frame after one being checked in the worker waits for it: frames apply in order', async () => {
    const store = new Store();
    const checker = new HeldChecker();
    const channel = new Channel(new FakeTransport(), store, { checker });
    const [hello, ws, sessions, sessionFrame, transcript, end] = snapshot();
    channel.preload([hello, ws, sessions, sessionFrame, transcript, JSON.parse(end ?? '') as unknown]);
    // The long transcript is in the worker: the parsed snapshotEnd waits behind it.
    expect(store.state.transcripts.c1).toBeUndefined();
    expect(store.state.ready).toBe(false);
    await checker.releaseAll();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.state.transcripts.c1).toHaveLength(15);
    expect(store.state.ready).toBe(true);
  });

  it('a preloaded frame that does not match the protocol is refused visibly, as a socket frame is', () => {
    const store = new Store();
    const channel = new Channel(new FakeTransport(), store);
    channel.preload([JSON.stringify({ seq: 3, body: { type: 'session', key: 'c1' } })]);
    expect(store.state.errors[0]).toContain('"session" frame');
    expect(store.state.sessions).toEqual({});
  });
});

/** A document carrying `text` in a data block of `type` and `id` (none: no block). */
function withBlock(type: string, id: string, text: string | null): Document {
  const doc = document.implementation.createHTMLDocument('t');
  if (text !== null) {
    const block = doc.createElement('script');
    block.type = type;
    block.id = id;
    block.textContent = text;
    doc.body.append(block);
  }
  return doc;
}

describe('readPreloaded', () => {
  const pageWith = (text: string | null): Document => withBlock('application/json', PRELOAD_ID, text);

  it('reads the frames of a short block parsed, once, and removes the block', () => {
    const doc = pageWith('[{"seq":null,"body":{"type":"snapshotEnd","note":"\\u003c/script>"}}]');
    expect(readPreloaded(doc)).toEqual({ ok: true, frames: [{ seq: null, body: { type: 'snapshotEnd', note: '</script>' } }] });
    expect(doc.getElementById(PRELOAD_ID)).toBeNull();
  });

  it('reads a block longer than the worker limit as text frames (a long one is checked in the worker)', () => {
    const long = { seq: null, body: { type: 'snapshotEnd', note: 'x'.repeat(PRELOAD_WORKER_FRAME_BYTES) } };
    const short = { seq: null, body: { type: 'snapshotEnd' } };
    const read = readPreloaded(pageWith(JSON.stringify([short, long])));
    expect(read).toEqual({ ok: true, frames: [JSON.stringify(short), JSON.stringify(long)] });
  });

  it('a page without the block has no frames', () => {
    expect(readPreloaded(pageWith(null))).toEqual({ ok: true, frames: [] });
  });

  it('a block that is not a JSON list is a clear error', () => {
    expect(readPreloaded(pageWith('[{'))).toEqual({ ok: false, error: expect.stringContaining('not JSON') as unknown });
    expect(readPreloaded(pageWith('{"seq":null}'))).toEqual({ ok: false, error: expect.stringContaining('not a list of frames') as unknown });
  });
});

describe('readPreloadedMap', () => {
  const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
  const base64 = Buffer.from(bytes).toString('base64');
  const page = (text: string | null): Document => withBlock('application/octet-stream', MAP_PRELOAD_ID, text);

  it('is null without the block (the map is fetched)', () => {
    expect(readPreloadedMap(page(null))).toBeNull();
  });

  it('gives the block\'s bytes, and removes it', () => {
    const doc = page(base64);
    const got = readPreloadedMap(doc);
    expect(got?.ok).toBe(true);
    if (got?.ok) expect(new Uint8Array(got.bytes)).toEqual(bytes);
    expect(doc.getElementById(MAP_PRELOAD_ID)).toBeNull();
    expect(readPreloadedMap(doc)).toBeNull();
  });

  it('says what is wrong with a block that is not base64 (the page shows it as the map\'s error)', () => {
    for (const text of ['@@@@', 'QUJD=', 'QU JD\u00e9', `${base64}<`]) {
      expect(readPreloadedMap(page(text)), text).toEqual({ ok: false, error: 'the map in the page is not base64' });
    }
    expect(readPreloadedMap(page(` ${base64.slice(0, 40)}\n${base64.slice(40)} `))).toMatchObject({ ok: true });
  });

  it('decodes through Uint8Array.fromBase64 where the browser has it, and alike without it', () => {
    const holder = Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array };
    const had = Object.prototype.hasOwnProperty.call(holder, 'fromBase64');
    const native = holder.fromBase64;
    const calls: string[] = [];
    holder.fromBase64 = (text) => {
      calls.push(text);
      if (!/^[A-Za-z0-9+/=\s]*$/.test(text)) throw new SyntaxError('bad');
      return new Uint8Array(Buffer.from(text, 'base64'));
    };
    try {
      expect(new Uint8Array(bytesFromBase64(base64))).toEqual(bytes);
      expect(calls).toEqual([base64]);
      expect(() => bytesFromBase64('@@')).toThrow();
    } finally {
      if (had) holder.fromBase64 = native;
      else delete holder.fromBase64;
    }
    expect(new Uint8Array(bytesFromBase64(base64))).toEqual(bytes);
    expect(calls).toHaveLength(2);
  });
});
