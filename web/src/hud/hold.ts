/**
 * The page's chrome held back while the map draws its first frame, on a
 * page that shows no conversation entries yet (a fresh open: the map is the
 * content). The class {@link HOLD_CLASS} on the root element hides
 * everything but the map's WebGL canvas (`hold.css`), so that the browser
 * presents no frame of the page before the map's: on a software GPU each
 * presented frame costs the GPU process ~20-40 ms, and every call the map
 * makes to the GPU process while it starts waits behind them.
 *
 * Released when the map marks its first frame, when `until` settles (the
 * caller's cap: never more than 2 s), or at {@link ChromeHold.release} (the
 * caller's: entries came to show); a map showing that it cannot be drawn or
 * loaded shows the page at once (`hold.css`). A page with entries to show is
 * never held.
 */
import './hold.css';

export const HOLD_CLASS = 'orbit-held';

export interface ChromeHold {
  /** Shows the chrome now (idempotent). */
  release(): void;
  /** Whether the chrome is held now. */
  held(): boolean;
}

/** Holds the chrome of `root` (the document's element) until `until` settles or {@link ChromeHold.release}. */
export function holdChrome(root: HTMLElement, until: Promise<unknown>): ChromeHold {
  let held = true;
  root.classList.add(HOLD_CLASS);
  const release = (): void => {
    if (!held) return;
    held = false;
    root.classList.remove(HOLD_CLASS);
  };
  void until.then(release, release);
  return { release, held: () => held };
}

/** What {@link mapFirst} looks at: the page's state once its preloaded snapshot is applied. */
export interface StartState {
  /** Whether the snapshot was whole (its `snapshotEnd` applied). */
  ready: boolean;
  transcripts: Record<string, readonly unknown[]>;
}

/**
 * Whether the page starts with its map (`main.ts`): a fresh open in a browser,
 * its snapshot whole and applied in the page's first task (`preloaded`: the
 * frames it carried, each a parsed frame; a frame given as text is checked in
 * the worker, later), and no conversation entries in it. The map's first
 * frame is then the first the page shows (its chrome held until then), so
 * the map is started first and the side column's contents and the socket
 * come after its first frame: until then the page's main thread and the GPU
 * process do the map's work alone. Otherwise (entries to show, a webview,
 * no snapshot) the conversation comes first, as before.
 */
export function mapFirst(state: StartState, preloaded: readonly unknown[] | null, webview: boolean): boolean {
  return !webview && preloaded !== null && state.ready
    && preloaded.every((frame) => typeof frame !== 'string')
    && Object.values(state.transcripts).every((entries) => entries.length === 0);
}
