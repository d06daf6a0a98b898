/**
 * Decorative steps that ride along with the page's own frames (issue 15).
 *
 * On a software GPU (SwiftShader) every frame Chromium presents costs its
 * GPU process about the same CPU whatever changed in it (the whole frame is
 * composited again: 16-23 ms at 1280x800, measured by
 * bench/page/frame-cost), and at a turn's start those frames take a core
 * from the claude CLI and from the socket's frames on their way to the
 * page. So a decorative step that is due soon (the map effects' next frame,
 * a bubble's next fly-in step) is taken in the frame the page presents
 * anyway for a change of its own, not in a frame of its own a moment later.
 *
 * A change of the page is a DOM mutation that can be seen: nodes added or
 * removed, text or an attribute given another value (not `aria-*` or
 * `title`, and not the same value written again). The watch starts with
 * the first rider.
 */

interface Rider {
  earliest: number;
  go: () => void;
}

export class RideAlong {
  private readonly riders = new Set<Rider>();
  private observer: MutationObserver | null = null;

  constructor(
    private readonly root: () => Node | null = () => (typeof document === 'undefined' ? null : document.body),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Runs `go` once, at the first change of the page `afterMs` from now or
   * later; the returned function cancels it. The caller keeps its own
   * timer for when no change comes.
   */
  ride(afterMs: number, go: () => void): () => void {
    this.watch();
    const rider: Rider = { earliest: this.now() + afterMs, go };
    this.riders.add(rider);
    return () => {
      this.riders.delete(rider);
    };
  }

  /** Riders waiting (for tests and inspection). */
  get waiting(): number {
    return this.riders.size;
  }

  /** The page changed (the observer's records, or a test): the riders due go. */
  changed(): void {
    if (this.riders.size === 0) return;
    const now = this.now();
    for (const rider of [...this.riders]) {
      if (rider.earliest > now) continue;
      this.riders.delete(rider);
      rider.go();
    }
  }

  private watch(): void {
    if (this.observer !== null || typeof MutationObserver === 'undefined') return;
    const root = this.root();
    if (!root) return;
    this.observer = new MutationObserver((records) => {
      if (this.riders.size > 0 && records.some(seen)) this.changed();
    });
    this.observer.observe(root, { subtree: true, childList: true, characterData: true, characterDataOldValue: true, attributes: true, attributeOldValue: true });
  }
}

/** Whether a mutation can change what is drawn. */
export function seen(record: MutationRecord): boolean {
  switch (record.type) {
    case 'childList':
      return record.addedNodes.length > 0 || record.removedNodes.length > 0;
    case 'characterData':
      return record.oldValue !== record.target.nodeValue;
    default: {
      const name = record.attributeName ?? '';
      if (name === 'title' || name.startsWith('aria-')) return false;
      const el = record.target as Element;
      return record.oldValue !== el.getAttribute(name);
    }
  }
}

/** The page's one watch. */
export const rideAlong = new RideAlong();

let budgetOff: boolean | null = null;

/**
 * Whether the page keeps its frame budget on a software GPU: the
 * decorative steps' frames of their own (not riding along one the page
 * presents anyway) at most every {@link SOFTWARE_OWN_FRAME_MS} ms
 * (scene/overlay.ts, hud/bubbles.ts). On, unless the page's address says
 * `?frames=all` (the latency bench's A/B: bench/page/latency.mjs,
 * `ORBIT_LATENCY_QUERY=frames=all`). Read once.
 */
export function frameBudget(): boolean {
  if (budgetOff === null) {
    const search = typeof location === 'undefined' ? '' : location.search;
    budgetOff = new URLSearchParams(search).get('frames') === 'all';
  }
  return !budgetOff;
}

/**
 * Marks the page's root while the frame budget holds on a software GPU
 * (`data-frame-budget`), for what the style sheet does then: a text
 * field's caret stays lit instead of blinking (`caret-animation: manual`,
 * scene/effects.css). Each blink, twice a second while the composer has
 * the focus, is a frame Chromium presents, ~16-25 ms of its GPU process's
 * CPU on SwiftShader (bench/page/frame-cost: frames every 500 ms with no
 * change of the page's).
 */
export function showFrameBudget(on: boolean): void {
  if (typeof document === 'undefined') return;
  document.documentElement.toggleAttribute('data-frame-budget', on);
}

/** Tests only: read the page's address again. */
export function resetFrameBudget(): void {
  budgetOff = null;
}

/**
 * On a software GPU, with the frame budget: at most one frame a decorative
 * step asks for on its own per this many ms (2 a second); in between it
 * rides along the page's own frames (bench/README.md, branch `lat2`).
 */
export const SOFTWARE_OWN_FRAME_MS = 500;
