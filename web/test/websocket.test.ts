import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, WebSocketTransport } from '../src/protocol/websocket';
import type { ConnectionState } from '../src/protocol/transport';

/** A WebSocket the test opens and closes; every one made is kept, with the time it was made. */
class FakeSocket extends EventTarget {
  static OPEN = 1;
  static made: { socket: FakeSocket; at: number }[] = [];
  readyState = 0;
  constructor(readonly url: string) {
    super();
    FakeSocket.made.push({ socket: this, at: Date.now() });
  }
  send(): void {}
  close(): void {
    this.drop();
  }
  open(): void {
    this.readyState = 1;
    this.dispatchEvent(new Event('open'));
  }
  drop(): void {
    this.readyState = 3;
    this.dispatchEvent(new Event('close'));
  }
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  FakeSocket.made = [];
});

describe('the page socket reconnects with backoff', () => {
  it('delays from 250 ms doubling to 5 s, with at most 20 % less for jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map((n) => backoffDelay(n, () => 1))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect(backoffDelay(0, () => 0)).toBe(200);
    expect(backoffDelay(9, () => 0)).toBe(4000);
  });

  it('says at once that it lost the socket, tries again after a growing delay, and starts over once it is back', () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(1);
    vi.stubGlobal('WebSocket', FakeSocket);
    const transport = new WebSocketTransport('ws://127.0.0.1:1/ws?w=0123456789abcdef');
    const states: ConnectionState[] = [];
    transport.onState((s) => states.push(s));
    transport.start();
    expect(states).toEqual(['connecting']);
    FakeSocket.made[0]?.socket.open();
    expect(states.at(-1)).toBe('open');
    // Orbit is gone: every attempt fails.
    const gaps: number[] = [];
    for (let attempt = 0; attempt < 7; attempt += 1) {
      const last = FakeSocket.made.at(-1);
      if (!last) throw new Error('no socket');
      last.socket.drop();
      expect(states.at(-1)).toBe('reconnecting');
      const before = FakeSocket.made.length;
      vi.advanceTimersByTime(10_000);
      const next = FakeSocket.made.at(-1);
      expect(FakeSocket.made.length).toBe(before + 1);
      if (!next) throw new Error('no socket');
      gaps.push(next.at - (Date.now() - 10_000));
    }
    expect(gaps).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    // Back: the next drop waits the shortest delay again.
    FakeSocket.made.at(-1)?.socket.open();
    FakeSocket.made.at(-1)?.socket.drop();
    const before = FakeSocket.made.length;
    vi.advanceTimersByTime(249);
    expect(FakeSocket.made.length).toBe(before);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.made.length).toBe(before + 1);
    // Closed on purpose: no more attempts.
    transport.close();
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.made.length).toBe(before + 1);
    expect(states.at(-1)).toBe('closed');
  });
});
