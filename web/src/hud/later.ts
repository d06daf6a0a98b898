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

/** Runs `load` once the first frame has been shown (at once when nothing holds). */
export function afterFirstFrame<T>(load: () => Promise<T>): Promise<T> {
  return gate.then(load);
}
