import { describe, expect, it, vi } from 'vitest';
import type { SearchMatch } from '../src/protocol/types';
import { ChannelDropped } from '../src/protocol/channel';
import { FULL, HEADER_BYTES, STATE, TIMES, handoverBuffer, hasWaitAsync, readAnswer, readTimes, release, writeAnswer } from '../src/hud/panels/handover';
import { ANSWER_MARK, canHandOver, completionSearch, searchSocketUrl, workerSearch, type WorkerLike, type WorkerSearch } from '../src/hud/panels/workerSearch';

const m = (path: string, indices: number[] = [0]): SearchMatch => ({ path, indices, score: 1 });

/** Writes a raw header (and bytes) as a broken or hostile writer could. */
function raw(buffer: SharedArrayBuffer, words: [number, number, number, number], bytes: number[] = []): void {
  const w = new Int32Array(buffer, 0, 4);
  new Uint8Array(buffer, HEADER_BYTES, bytes.length).set(bytes);
  w[1] = words[1];
  w[2] = words[2];
  w[3] = words[3];
  w[0] = words[0];
}

describe('the hand-over buffer', () => {
  it('carries matches, errors and drops, one at a time, with their sequence numbers', () => {
    const buffer = handoverBuffer(4096);
    expect(readAnswer(buffer)).toBeNull();
    const matches = [m('src/ä/file_1.rs', [0, 4]), m('b.rs')];
    expect(writeAnswer(buffer, 7, 'matches', JSON.stringify(matches))).toBe(true);
    // Full: the next waits until the page has read this one.
    expect(writeAnswer(buffer, 8, 'error', 'no')).toBe(false);
    expect(readAnswer(buffer)).toEqual({ seq: 7, kind: 'matches', matches });
    release(buffer);
    expect(readAnswer(buffer)).toBeNull();
    expect(writeAnswer(buffer, 8, 'error', '`q` is too long')).toBe(true);
    expect(readAnswer(buffer)).toEqual({ seq: 8, kind: 'error', message: '`q` is too long' });
    release(buffer);
    expect(writeAnswer(buffer, 9, 'dropped', '')).toBe(true);
    expect(readAnswer(buffer)).toEqual({ seq: 9, kind: 'dropped', message: '' });
  });

  it('refuses an answer that does not fit, writing nothing', () => {
    const buffer = handoverBuffer(HEADER_BYTES + 8);
    expect(writeAnswer(buffer, 1, 'error', '123456789')).toBe(false);
    expect(Atomics.load(new Int32Array(buffer, 0, 4), STATE)).toBe(0);
    expect(writeAnswer(buffer, 1, 'error', '12345678')).toBe(true);
  });

  it('carries the worker\'s times beside the answer, 0 where unknown or not a number', () => {
    const buffer = handoverBuffer(4096);
    expect(writeAnswer(buffer, 1, 'matches', '[]', [1.5, 2.25, 3, 4.125])).toBe(true);
    expect(readTimes(buffer)).toEqual([1.5, 2.25, 3, 4.125]);
    release(buffer);
    // Fewer times (a drop has no answer's): the rest are 0, none left from the last answer.
    expect(writeAnswer(buffer, 2, 'dropped', '', [7])).toBe(true);
    expect(readTimes(buffer)).toEqual([7, 0, 0, 0]);
    release(buffer);
    expect(writeAnswer(buffer, 3, 'matches', '[]', [Number.NaN, Infinity, -Infinity, 5])).toBe(true);
    expect(readTimes(buffer)).toEqual([0, 0, 0, 5]);
    expect(readTimes(buffer)).toHaveLength(TIMES);
    // The payload starts after the times: they never overlap it.
    expect(readAnswer(buffer)).toEqual({ seq: 3, kind: 'matches', matches: [] });
    expect(readTimes(new SharedArrayBuffer(8))).toEqual([]);
  });

  it('reads bad bytes as no answer, never throwing', () => {
    const buffer = handoverBuffer(HEADER_BYTES + 48);
    const text = (s: string): number[] => [...new TextEncoder().encode(s)];
    const cases: [[number, number, number, number], number[]][] = [
      [[FULL, 1, 49, 0], []], // a length past the buffer
      [[FULL, 1, -1, 0], []], // a negative length
      [[FULL, 1, 0, 3], []], // an unknown kind
      [[FULL, 1, 0, -1], []],
      [[FULL, 1, 3, 0], text('[{]')], // not JSON
      [[FULL, 1, 2, 0], [0xff, 0xfe]], // not UTF-8
      [[FULL, 1, 4, 0], text('{"a"')],
      [[FULL, 1, 2, 0], text('{}')], // not a list
      [[FULL, 1, 12, 0], text('[{"path":1}]')], // not matches
      [[FULL, 1, 27, 0], text('[{"path":"a","indices":[-1]}]')],
      [[FULL, 1, 26, 0], text('[{"path":"a","indices":"0"}]')],
      [[2, 1, 2, 0], text('[]')], // a state that is neither
    ];
    for (const [words, bytes] of cases) {
      raw(buffer, words, bytes);
      expect(() => readAnswer(buffer)).not.toThrow();
      expect(readAnswer(buffer), JSON.stringify(words)).toBeNull();
    }
    expect(readAnswer(new SharedArrayBuffer(8))).toBeNull();
    raw(buffer, [FULL, 5, 2, 0], text('[]'));
    expect(readAnswer(buffer)).toEqual({ seq: 5, kind: 'matches', matches: [] });
  });
});

/** A worker that answers in the buffer as the search worker does, when told to. */
function fakeWorker(): WorkerLike & { asked: { seq: number; q: string }[]; answer(seq: number, kind: 'matches' | 'error' | 'dropped', payload: string, times?: number[]): void; say(type: string): void } {
  let buffer: SharedArrayBuffer | null = null;
  const fake = {
    asked: [] as { seq: number; q: string }[],
    onmessage: null as ((event: MessageEvent) => void) | null,
    onerror: null as ((event: ErrorEvent) => void) | null,
    postMessage(message: unknown) {
      const msg = message as { type: string; buffer?: SharedArrayBuffer; seq?: number; q?: string };
      if (msg.type === 'start') buffer = msg.buffer ?? null;
      else fake.asked.push({ seq: msg.seq ?? 0, q: msg.q ?? '' });
    },
    answer(seq: number, kind: 'matches' | 'error' | 'dropped', payload: string, times: number[] = []) {
      if (!buffer || !writeAnswer(buffer, seq, kind, payload, times)) throw new Error('not written');
    },
    say(type: string) {
      fake.onmessage?.({ data: { type } } as MessageEvent);
    },
  };
  return fake;
}

const released = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => { setTimeout(r, 0); });
};

describe('the worker’s way', () => {
  it('is not used before its socket is open; answers come back by sequence number; stale ones are dropped', async () => {
    const worker = fakeWorker();
    const ways = workerSearch('ws://127.0.0.1:1/w/x/search', () => worker);
    expect(ways.search('a', 8)).toBeNull();
    worker.say('open');
    const first = ways.search('ab', 8);
    const second = ways.search('abc', 8);
    expect(worker.asked.map((a) => a.q)).toEqual(['ab', 'abc']);
    const [s1, s2] = worker.asked.map((a) => a.seq);
    // An answer of no search waiting (stale) is dropped; the buffer is freed for the next.
    worker.answer(999, 'matches', JSON.stringify([m('stale.rs')]));
    await released();
    worker.answer(s2 ?? 0, 'matches', JSON.stringify([m('abc.rs')]));
    await expect(second).resolves.toEqual([m('abc.rs')]);
    worker.answer(s1 ?? 0, 'error', 'rate limited');
    await expect(first).rejects.toThrow('rate limited');
    const third = ways.search('x', 8);
    worker.answer(worker.asked[2]?.seq ?? 0, 'dropped', '');
    await expect(third).rejects.toBeInstanceOf(ChannelDropped);
    // Closed: the searches out are dropped, the next is not made.
    const fourth = ways.search('y', 8);
    worker.say('closed');
    await expect(fourth).rejects.toBeInstanceOf(ChannelDropped);
    expect(ways.search('z', 8)).toBeNull();
  });

  it('marks each answer taken with the keystroke\'s times (only the last mark kept)', async () => {
    performance.clearMarks(ANSWER_MARK);
    const worker = fakeWorker();
    const ways = workerSearch('ws://x/w/x/search', () => worker);
    ways.warm();
    worker.say('open');
    const before = performance.timeOrigin + performance.now();
    for (const q of ['f', 'fi']) {
      const asked = ways.search(q, 8);
      const seq = worker.asked[worker.asked.length - 1]?.seq ?? 0;
      worker.answer(seq, 'matches', '[]', [before + 1, before + 2, before + 3, before + 4]);
      await expect(asked).resolves.toEqual([]);
    }
    const marks = performance.getEntriesByName(ANSWER_MARK) as PerformanceMark[];
    expect(marks).toHaveLength(1);
    const detail = marks[0]?.detail as Record<string, number | string>;
    expect(detail).toMatchObject({ seq: worker.asked[1]?.seq, q: 'fi', took: before + 1, sent: before + 2, answered: before + 3, handed: before + 4 });
    expect(detail.asked).toBeGreaterThanOrEqual(before);
    expect(detail.taken).toBeGreaterThanOrEqual(detail.asked as number);
  });

  it('takes an answer already in the buffer when it starts waiting', async () => {
    const worker = fakeWorker();
    const ways = workerSearch('ws://x/w/x/search', () => worker);
    ways.warm();
    worker.say('open');
    const asked = ways.search('q', 8);
    worker.answer(worker.asked[0]?.seq ?? 0, 'matches', '[]');
    await expect(asked).resolves.toEqual([]);
  });

  it('addresses the search-only socket of the workspace, ws or wss as the page', () => {
    expect(searchSocketUrl('a b', 'http://127.0.0.1:5/w/a%20b/')).toBe('ws://127.0.0.1:5/w/a%20b/search');
    expect(searchSocketUrl('w', 'https://h/w/w/')).toBe('wss://h/w/w/search');
  });
});

describe('the completion’s way', () => {
  const never = (): WorkerSearch => { throw new Error('the worker was made'); };

  it('asks through the worker when the page is isolated, and says so', async () => {
    const channel = vi.fn(() => Promise.resolve([m('channel.rs')]));
    const http = vi.fn(() => Promise.resolve([m('http.rs')]));
    const worker = { search: vi.fn(() => Promise.resolve([m('worker.rs')])), warm: vi.fn() };
    const ways = completionSearch({ channelSearch: channel, http, isolated: true, worker: () => worker });
    expect(ways.path()).toBeNull();
    ways.warm();
    expect(worker.warm).toHaveBeenCalled();
    await expect(ways.search('a', 8)).resolves.toEqual([m('worker.rs')]);
    expect(ways.path()).toBe('worker');
    expect(channel).not.toHaveBeenCalled();
    expect(http).not.toHaveBeenCalled();
  });

  it('falls back to the channel when the worker cannot answer now, then to /search', async () => {
    const http = vi.fn(() => Promise.resolve([m('http.rs')]));
    let channelOpen = true;
    const channel = vi.fn(() => (channelOpen ? Promise.resolve([m('channel.rs')]) : null));
    const worker = { search: vi.fn(() => null), warm: vi.fn() };
    const ways = completionSearch({ channelSearch: channel, http, isolated: true, worker: () => worker });
    await expect(ways.search('a', 8)).resolves.toEqual([m('channel.rs')]);
    expect(ways.path()).toBe('channel');
    worker.search.mockImplementation(() => Promise.reject(new ChannelDropped()) as never);
    await expect(ways.search('a', 8)).resolves.toEqual([m('channel.rs')]);
    channelOpen = false;
    await expect(ways.search('a', 8)).resolves.toEqual([m('http.rs')]);
    expect(ways.path()).toBe('http');
  });

  it('never makes the worker where the page is not isolated, nor in an editor', async () => {
    const http = vi.fn(() => Promise.resolve([m('http.rs')]));
    const channel = vi.fn(() => Promise.resolve([m('channel.rs')]));
    const plain = completionSearch({ channelSearch: channel, http, isolated: false, worker: never });
    plain.warm();
    await expect(plain.search('a', 8)).resolves.toEqual([m('channel.rs')]);
    expect(plain.path()).toBe('channel');
    const editor = completionSearch({ http, isolated: true, worker: never });
    await expect(editor.search('a', 8)).resolves.toEqual([m('http.rs')]);
    expect(editor.path()).toBe('http');
  });

  it('hands over only where the page is cross-origin isolated, with Atomics.waitAsync, and not turned off', () => {
    const workerBefore = (globalThis as { Worker?: unknown }).Worker;
    (globalThis as { Worker?: unknown }).Worker = function Worker() {};
    try {
      expect(hasWaitAsync()).toBe(true);
      expect(canHandOver({ crossOriginIsolated: true, location: { search: '' } })).toBe(true);
      expect(canHandOver({ crossOriginIsolated: false, location: { search: '' } })).toBe(false);
      expect(canHandOver({ location: { search: '' } })).toBe(false);
      expect(canHandOver({ crossOriginIsolated: true, location: { search: '?completion=channel' } })).toBe(false);
    } finally {
      (globalThis as { Worker?: unknown }).Worker = workerBefore;
    }
  });
});
