/**
 * The page's start in two steps (`docs/ARCHITECTURE.md`, web layers): the
 * entry shows the first frame (the snapshot applied, the conversation's
 * window, the prompt box, the map started at once), and the code of
 * everything else (panels, search, file panel, keypad, notifications, the
 * frame checker's worker) is imported after that frame has been shown.
 *
 * `holdUntilFirstFrame()` is called by the entry before it mounts; until
 * `firstFrameShown()`, what waits with {@link afterFirstFrame} waits. Where
 * nothing holds (tests, tools mounting the HUD themselves), it loads at once.
 */

let held = false;
let release: (() => void) | null = null;
let gate: Promise<void> = Promise.resolve();

/** From now on, {@link afterFirstFrame} waits for {@link firstFrameShown}. */
export function holdUntilFirstFrame(): void {
  if (held) return;
  held = true;
  gate = new Promise<void>((resolve) => {
    release = resolve;
  });
}

/**
 * The first frame is in the DOM: once the browser has shown it (the next
 * animation frame, then a task after it) and `also` has settled (the map's
 * first frame), what waits is released.
 */
export function firstFrameShown(also: Promise<unknown> = Promise.resolve()): void {
  const open = (): void => {
    release?.();
    release = null;
  };
  void Promise.all([frameShown(), also.catch(() => undefined)]).then(open);
}

/** Resolves once the browser has shown the next frame (an animation frame, then a task after it). */
export function frameShown(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (typeof requestAnimationFrame !== 'function') resolve();
    else requestAnimationFrame(() => { setTimeout(resolve, 0); });
  });
}

/**
 * Resolves when the page marks `name` (`performance.mark`; the map's
 * `orbit:first-frame`), or after `patienceMs` (a map that cannot be drawn
 * holds nothing up for long).
 */
export function whenMarked(name: string, patienceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, patienceMs);
    let observer: PerformanceObserver | null = null;
    function done(): void {
      clearTimeout(timer);
      observer?.disconnect();
      resolve();
    }
    if (performance.getEntriesByName(name, 'mark').length > 0) {
      done();
      return;
    }
    if (typeof PerformanceObserver !== 'function') return;
    observer = new PerformanceObserver((list) => {
      if (list.getEntriesByName(name).length > 0) done();
    });
    observer.observe({ type: 'mark' });
  });
}

/** How long after the first frame the start-up work that shows nothing waits ({@link afterSettled}). */
export const SETTLED_MS = 1000;

/**
 * Runs `load` once the first frame has been shown and then {@link SETTLED_MS}
 * have passed and the page is idle: the parts whose code is not in the entry
 * (panels, search, file panel, keypad: their buttons appear then, and what is
 * asked of them meanwhile is replayed, `deferred.ts`) and the start-up work
 * that shows nothing (the frame checker's worker, the stored outbox, the
 * notification permission's watch, the service worker). Done at once after
 * the first frame, each part was one more frame for the browser to present
 * (20-40 ms of the GPU process's time each on a software GPU) while it was
 * still presenting the page's first frames, and a reload in that moment (the
 * map's benchmark reloads as soon as it sees the first frame) waited for the
 * page it replaces (bench/README.md, branch `ff2`). At once when nothing
 * holds (tests, tools mounting the HUD themselves).
 */
export function afterSettled<T>(load: () => Promise<T>): Promise<T> {
  if (!held) return gate.then(load);
  return gate.then(() => new Promise<void>((resolve) => {
    setTimeout(() => {
      if (typeof requestIdleCallback === 'function') requestIdleCallback(() => { resolve(); }, { timeout: SETTLED_MS });
      else resolve();
    }, SETTLED_MS);
  })).then(load);
}

/** Runs `load` once the first frame has been shown (at once when nothing holds). */
export function afterFirstFrame<T>(load: () => Promise<T>): Promise<T> {
  return gate.then(load);
}
