/**
 * The search worker: the `Add file` completion's round trip to the server
 * off the page's main thread. It holds a WebSocket of its own to the
 * search-only socket (`/w/<id>/search` upgraded: `search` frames, their
 * `searchAnswer`s; the page's cookie and Origin, as any same-origin
 * request of the page), and hands each answer over in the shared buffer
 * (`handover.ts`), where the page's `Atomics.waitAsync` picks it up
 * before the key's first frame (a message to the page would wait for it).
 *
 * From the page: `{type: 'start', buffer, url}`, then `{type: 'search',
 * seq, q, limit}`. To the page (not on the answers' path): `{type:
 * 'open'}` when the socket is open, `{type: 'closed'}` when it is not
 * (the page asks another way meanwhile; the worker reconnects).
 */
import { EMPTY, FULL, HEADER_BYTES, STATE, epochNow, whenChanged, writeAnswer, type AnswerKind } from './handover';

type FromPage =
  | { type: 'start'; buffer: SharedArrayBuffer; url: string }
  | { type: 'search'; seq: number; q: string; limit: number };

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<FromPage>) => void) | null;
  postMessage(message: unknown): void;
};

let buffer: SharedArrayBuffer | null = null;
let url = '';
let socket: WebSocket | null = null;
let retry = 500;
/**
 * The searches sent and not answered (by the page's sequence number), with
 * when the request came from the page and went to the socket.
 */
const asked = new Map<number, [number, number]>();
/** Answers waiting for the buffer to be read, with their times so far. */
const queue: [number, AnswerKind, string, number[]][] = [];
let waiting = false;

function hand(seq: number, kind: AnswerKind, payload: string, times: number[] = []): void {
  queue.push([seq, kind, payload, times]);
  flush();
}

/** Writes the queued answers one at a time, as the page empties the buffer. */
function flush(): void {
  if (!buffer || waiting) return;
  const words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  for (;;) {
    const next = queue[0];
    if (!next) return;
    const [seq, kind, payload, times] = next;
    if (writeAnswer(buffer, seq, kind, payload, [...times, epochNow()])) {
      queue.shift();
      continue;
    }
    if (Atomics.load(words, STATE) === EMPTY) {
      // Empty but not written: the answer does not fit.
      queue[0] = [seq, 'error', 'the answer is too large to hand over', times];
      continue;
    }
    waiting = true;
    const again = (): void => {
      waiting = false;
      flush();
    };
    const wait = whenChanged(words, STATE, FULL);
    if (wait) void wait.then(again);
    else queueMicrotask(again);
    return;
  }
}

function connect(): void {
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    retry = 500;
    scope.postMessage({ type: 'open' });
  };
  ws.onmessage = (event: MessageEvent) => {
    const answered = epochNow();
    if (typeof event.data !== 'string') return;
    let frame: unknown;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return;
    }
    const body = (frame as { body?: { type?: unknown; id?: unknown; matches?: unknown; error?: unknown } } | null)?.body;
    if (body?.type !== 'searchAnswer' || typeof body.id !== 'number') return;
    const sent = asked.get(body.id);
    if (!sent) return;
    asked.delete(body.id);
    const times = [...sent, answered];
    if (typeof body.error === 'string') hand(body.id, 'error', body.error, times);
    else if (Array.isArray(body.matches)) hand(body.id, 'matches', JSON.stringify(body.matches), times);
    else hand(body.id, 'error', 'the answer has no matches', times);
  };
  ws.onclose = () => {
    socket = null;
    scope.postMessage({ type: 'closed' });
    for (const seq of asked.keys()) hand(seq, 'dropped', 'the search socket closed');
    asked.clear();
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 10000);
  };
}

scope.onmessage = (event) => {
  const took = epochNow();
  const message = event.data;
  if (message.type === 'start') {
    if (buffer) return;
    buffer = message.buffer;
    url = message.url;
    connect();
    return;
  }
  if (socket?.readyState !== WebSocket.OPEN) {
    hand(message.seq, 'dropped', 'the search socket is not open');
    return;
  }
  socket.send(JSON.stringify({ type: 'search', id: message.seq, q: message.q, limit: message.limit }));
  asked.set(message.seq, [took, epochNow()]);
};
