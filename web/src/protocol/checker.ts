/**
 * Where host frames are checked: in a worker when the browser has one (a
 * big frame's validation never blocks the page), else on the main thread.
 * Answers come back in the order the frames were given.
 */
export type CheckResult = { ok: true } | { ok: false; error: string };

export interface FrameChecker {
  check(text: string): Promise<CheckResult>;
}

/** The worker's checker; `null` where workers are unavailable. */
export function workerChecker(): FrameChecker | null {
  if (typeof Worker === 'undefined') return null;
  let worker: Worker;
  try {
    worker = new Worker(new URL('./validate.worker.ts', import.meta.url), { type: 'module' });
  } catch {
    return null;
  }
  let next = 0;
  const waiting = new Map<number, (result: CheckResult) => void>();
  worker.onmessage = (event: MessageEvent<{ n: number; ok: boolean; error: string | null }>) => {
    const { n, ok, error } = event.data;
    const resolve = waiting.get(n);
    waiting.delete(n);
    resolve?.(ok ? { ok: true } : { ok: false, error: error ?? 'A frame from Orbit was refused.' });
  };
  worker.onerror = () => {
    for (const resolve of waiting.values()) resolve({ ok: false, error: 'The page’s frame checker stopped; reload the page.' });
    waiting.clear();
  };
  return {
    check: (text) =>
      new Promise((resolve) => {
        next += 1;
        waiting.set(next, resolve);
        worker.postMessage({ n: next, text });
      }),
  };
}

/**
 * The worker's checker, its worker started only when `start` resolves or a
 * frame needs it first: the page's start-up does not share the two cores
 * with the worker's (its script and the schema). `null` where workers are
 * unavailable.
 */
export function deferredChecker(start: Promise<unknown>, make: () => FrameChecker | null = workerChecker): FrameChecker | null {
  if (typeof Worker === 'undefined') return null;
  let made: FrameChecker | null | undefined;
  const get = (): FrameChecker | null => {
    made ??= make();
    return made;
  };
  void start.then(get);
  return {
    check: (text) => get()?.check(text) ?? Promise.resolve({ ok: false, error: 'The page’s frame checker could not start; reload the page.' }),
  };
}
