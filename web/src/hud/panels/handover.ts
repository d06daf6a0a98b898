/**
 * The search worker's hand-over: one answer at a time in a
 * `SharedArrayBuffer`, written by the worker, read by the page when its
 * `Atomics.waitAsync` resolves. Chromium defers the page's tasks after a
 * key until the key's first frame (its WebSocket messages and `postMessage`
 * among them), not the resolution of `Atomics.waitAsync`: the answer
 * reaches the page before that frame, and the listbox shows it in it.
 *
 * The layout (little-endian 32-bit words, then bytes):
 *
 *   word 0  STATE   0 empty (the worker may write), 1 full (the page reads,
 *                   then stores 0 and notifies)
 *   word 1  SEQ     the query's sequence number (the page's)
 *   word 2  LEN     the payload's length in bytes
 *   word 3  KIND    0 matches (JSON: the `searchAnswer`'s `matches`),
 *                   1 an error (text: the answer's `error`),
 *                   2 dropped (the worker's socket closed before the answer)
 *   bytes 16-47     four 64-bit floats: when the worker took the request,
 *                   sent it, read the answer and handed it over (ms since
 *                   the Unix epoch, `performance.timeOrigin + now()`; 0
 *                   unknown): the benchmark's split of a keystroke
 *   bytes from 48   the payload (UTF-8)
 *
 * Everything read from the buffer is checked: `readAnswer` never throws,
 * whatever the bytes.
 */
import type { SearchMatch } from '../../protocol/types';

export const STATE = 0;
const SEQ = 1;
const LEN = 2;
const KIND = 3;
/** Where the worker's times are (four 64-bit floats). */
const TIMES_AT = 16;
/** The times written: took, sent, answered, handed. */
export const TIMES = 4;
/** The header's bytes (four words, then the times). */
export const HEADER_BYTES = TIMES_AT + TIMES * 8;
/** The buffer's bytes: eight matches of long paths fit many times over. */
export const HANDOVER_BYTES = HEADER_BYTES + 256 * 1024;

export const EMPTY = 0;
export const FULL = 1;

export type AnswerKind = 'matches' | 'error' | 'dropped';
const KINDS: readonly AnswerKind[] = ['matches', 'error', 'dropped'];

export type Answer =
  | { seq: number; kind: 'matches'; matches: SearchMatch[] }
  | { seq: number; kind: 'error' | 'dropped'; message: string };

/** A fresh hand-over buffer (empty). */
export function handoverBuffer(bytes = HANDOVER_BYTES): SharedArrayBuffer {
  return new SharedArrayBuffer(bytes);
}

/**
 * Writes one answer when the buffer is empty: `false` (nothing written)
 * when it is full (the page has not read the last one yet) or the payload
 * does not fit. The worker's side.
 */
export function writeAnswer(buffer: SharedArrayBuffer, seq: number, kind: AnswerKind, payload: string, times: readonly number[] = []): boolean {
  const words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  if (Atomics.load(words, STATE) !== EMPTY) return false;
  const bytes = new TextEncoder().encode(payload);
  if (bytes.length > buffer.byteLength - HEADER_BYTES) return false;
  new Uint8Array(buffer, HEADER_BYTES, bytes.length).set(bytes);
  const stamps = new Float64Array(buffer, TIMES_AT, TIMES);
  for (let i = 0; i < TIMES; i += 1) stamps[i] = times[i] ?? 0;
  Atomics.store(words, SEQ, seq);
  Atomics.store(words, LEN, bytes.length);
  Atomics.store(words, KIND, KINDS.indexOf(kind));
  Atomics.store(words, STATE, FULL);
  Atomics.notify(words, STATE);
  return true;
}

/** A path match as the server sends it (`path`, `indices`: ascending char positions). */
function isMatch(value: unknown): value is SearchMatch {
  if (value === null || typeof value !== 'object') return false;
  const m = value as Record<string, unknown>;
  return typeof m.path === 'string' &&
    Array.isArray(m.indices) &&
    m.indices.every((i) => Number.isInteger(i) && (i as number) >= 0);
}

/**
 * The answer in the buffer, `null` when it is empty or its bytes are not
 * an answer (a length past the buffer, an unknown kind, text that is not
 * JSON of matches). Never throws. The page's side; it leaves the buffer as
 * it is (`release` empties it).
 */
export function readAnswer(buffer: SharedArrayBuffer): Answer | null {
  try {
    if (buffer.byteLength < HEADER_BYTES) return null;
    const words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    if (Atomics.load(words, STATE) !== FULL) return null;
    const seq = Atomics.load(words, SEQ);
    const length = Atomics.load(words, LEN);
    const kind = KINDS[Atomics.load(words, KIND)];
    if (kind === undefined || length < 0 || length > buffer.byteLength - HEADER_BYTES) return null;
    // A copy: `TextDecoder` may refuse a view of shared memory.
    const text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(buffer, HEADER_BYTES, length).slice());
    if (kind !== 'matches') return { seq, kind, message: text };
    const matches: unknown = JSON.parse(text);
    if (!Array.isArray(matches) || !matches.every(isMatch)) return null;
    return { seq, kind, matches };
  } catch {
    return null;
  }
}

/**
 * The worker's times of the answer in the buffer (see the layout; read
 * before `release`): finite numbers, 0 where unknown.
 */
export function readTimes(buffer: SharedArrayBuffer): number[] {
  if (buffer.byteLength < HEADER_BYTES) return [];
  return Array.from(new Float64Array(buffer, TIMES_AT, TIMES), (t) => (Number.isFinite(t) ? t : 0));
}

/** Now, in milliseconds since the Unix epoch (the page's and its workers' common clock). */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

type WaitAsync = (words: Int32Array, index: number, value: number) =>
  { async: false; value: string } | { async: true; value: Promise<string> };

/** Whether this JavaScript has `Atomics.waitAsync` (ES2024; the page's TS lib is ES2022's). */
export function hasWaitAsync(): boolean {
  return typeof (Atomics as unknown as { waitAsync?: unknown }).waitAsync === 'function';
}

/**
 * `Atomics.waitAsync`: a promise that resolves once `words[index]` is
 * notified away from `value`, or `null` when it already is not `value`.
 */
export function whenChanged(words: Int32Array, index: number, value: number): Promise<string> | null {
  const wait = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(words, index, value);
  return wait.async ? wait.value : null;
}

/** Empties the buffer after a read, waking a worker that waits to write the next answer. */
export function release(buffer: SharedArrayBuffer): void {
  const words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  Atomics.store(words, STATE, EMPTY);
  Atomics.notify(words, STATE);
}
