/**
 * The `Add file` completion's ways to the server's matcher, and which one
 * a page uses:
 *
 * - `worker`: the search worker (`search.worker.ts`) asks over a socket of
 *   its own and hands the answer over in a `SharedArrayBuffer`
 *   (`handover.ts`); the page's `Atomics.waitAsync` resolves with it before
 *   the key's first frame (Chromium defers the page's other tasks after a
 *   key until that frame). Only where the page is cross-origin isolated and
 *   has `Atomics.waitAsync`, and only in a browser (not an editor's webview).
 * - `channel`: a `search` frame over the page's own socket (`searchAnswer`).
 * - `http`: `GET /w/<id>/search`.
 *
 * Each falls back to the next when it cannot answer now (not open, dropped,
 * silent for five seconds: `channelFirst`). `?completion=channel` in the
 * page's address turns the worker off (the benchmark's same-run baseline).
 */
import type { SearchMatch } from '../../protocol/types';
import { ChannelDropped } from '../../protocol/channel';
import { channelFirst, type ChannelSearch, type SearchFn } from './composer';
import { EMPTY, HEADER_BYTES, STATE, epochNow, handoverBuffer, hasWaitAsync, readAnswer, readTimes, release, whenChanged, type Answer } from './handover';

/**
 * The `performance.mark` of each answer the worker hands over (only the
 * last one is kept): its `detail` is the keystroke's round trip in ms
 * since the Unix epoch, `{seq, q, asked, took, sent, answered, handed,
 * taken}` (the page asked the worker; the worker took the request, sent
 * it, read the answer, handed it over; the page took it). The benchmark's
 * split (`bench/panels/completion.mjs`), with the server's own notes.
 */
export const ANSWER_MARK = 'orbit:completion-answer';

function markAnswer(seq: number, q: string, asked: number, times: readonly number[], taken: number): void {
  const [took = 0, sent = 0, answered = 0, handed = 0] = times;
  try {
    performance.clearMarks(ANSWER_MARK);
    performance.mark(ANSWER_MARK, { detail: { seq, q, asked, took, sent, answered, handed, taken } });
  } catch {
    // No user timing here: the answer goes on regardless.
  }
}

/** What the page needs of a worker (a fake one in the tests). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

export interface WorkerSearch {
  /** Asks through the worker; `null` while its socket is not open. */
  search: ChannelSearch;
  /** Starts the worker (and its socket) if not yet: on the input's focus. */
  warm: () => void;
}

/** The search worker as Vite bundles it. */
function startWorker(): WorkerLike {
  return new Worker(new URL('./search.worker.ts', import.meta.url), { type: 'module' });
}

/** The search-only socket's address for `workspaceId`. */
export function searchSocketUrl(workspaceId: string, base: string): string {
  const url = new URL(`/w/${encodeURIComponent(workspaceId)}/search`, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/**
 * The worker's way: the request goes to the worker by `postMessage` (a
 * message *to* a worker is not deferred), the answer comes back through
 * the buffer, taken the moment `Atomics.waitAsync` resolves. Each answer
 * resolves the search of its sequence number; one of no search waiting
 * (stale, or unreadable bytes) is dropped.
 */
export function workerSearch(url: string, make: () => WorkerLike = startWorker): WorkerSearch {
  let worker: WorkerLike | null = null;
  let open = false;
  let seq = 0;
  const buffer = handoverBuffer();
  const words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  const waiting = new Map<number, { q: string; asked: number; resolve: (matches: SearchMatch[]) => void; reject: (error: Error) => void }>();

  const deliver = (answer: Answer, times: readonly number[], taken: number): void => {
    const asker = waiting.get(answer.seq);
    if (!asker) return;
    waiting.delete(answer.seq);
    markAnswer(answer.seq, asker.q, asker.asked, times, taken);
    if (answer.kind === 'matches') asker.resolve(answer.matches);
    else if (answer.kind === 'dropped') asker.reject(new ChannelDropped());
    else asker.reject(new Error(answer.message));
  };
  const take = (): void => {
    const taken = epochNow();
    const answer = readAnswer(buffer);
    const times = readTimes(buffer);
    release(buffer);
    if (answer) deliver(answer, times, taken);
    arm();
  };
  // Always armed: resolves when the worker fills the buffer.
  const arm = (): void => {
    const wait = whenChanged(words, STATE, EMPTY);
    if (wait) void wait.then(take);
    else take();
  };
  const dropAll = (): void => {
    const all = [...waiting.values()];
    waiting.clear();
    for (const w of all) w.reject(new ChannelDropped());
  };

  const warm = (): void => {
    if (worker) return;
    try {
      worker = make();
    } catch {
      return;
    }
    worker.onmessage = (event: MessageEvent<{ type?: string }>) => {
      open = event.data.type === 'open';
      if (!open) dropAll();
    };
    worker.onerror = () => {
      open = false;
      dropAll();
    };
    worker.postMessage({ type: 'start', buffer, url });
    arm();
  };

  return {
    warm,
    search: (q, limit) => {
      warm();
      if (!open || !worker) return null;
      seq = seq >= 0x7fffffff ? 1 : seq + 1;
      const id = seq;
      const answer = new Promise<SearchMatch[]>((resolve, reject) => { waiting.set(id, { q, asked: epochNow(), resolve, reject }); });
      worker.postMessage({ type: 'search', seq: id, q, limit });
      return answer;
    },
  };
}

export type CompletionPath = 'worker' | 'channel' | 'http';

export interface CompletionSearch {
  search: SearchFn;
  /** Starts what the first keystroke will use (the worker): on the input's focus. */
  warm: () => void;
  /** The way the last answer came (`orbitInspect.panels().completionPath`); `null` before one. */
  path(): CompletionPath | null;
}

export interface CompletionEnv {
  /** The page's channel's `search` (absent in an editor's webview, whose relay answers none). */
  channelSearch?: ChannelSearch;
  http: SearchFn;
  /** `crossOriginIsolated`, and `Atomics.waitAsync` exists. */
  isolated: boolean;
  /** The worker's way (made only when it is used). */
  worker: () => WorkerSearch;
}

/** The completion's ways, best first (see the module's comment). */
export function completionSearch(env: CompletionEnv): CompletionSearch {
  let last: CompletionPath | null = null;
  const noting = (path: CompletionPath, ask: ChannelSearch): ChannelSearch => (q, limit) =>
    ask(q, limit)?.then((matches) => {
      last = path;
      return matches;
    }) ?? null;
  const http: SearchFn = (q, limit) => noting('http', env.http)(q, limit) ?? Promise.resolve([]);
  let search = http;
  let warm = (): void => undefined;
  if (env.channelSearch) {
    search = channelFirst(noting('channel', env.channelSearch), http);
    if (env.isolated) {
      const worker = env.worker();
      warm = worker.warm;
      search = channelFirst(noting('worker', worker.search), search);
    }
  }
  return { search, warm, path: () => last };
}

/** Whether this page can take the worker's answers: cross-origin isolated, with `Atomics.waitAsync`, and not turned off. */
export function canHandOver(scope: { crossOriginIsolated?: boolean; location?: { search: string } } = globalThis): boolean {
  return scope.crossOriginIsolated === true &&
    typeof SharedArrayBuffer === 'function' &&
    hasWaitAsync() &&
    typeof Worker === 'function' &&
    new URLSearchParams(scope.location?.search ?? '').get('completion') !== 'channel';
}
