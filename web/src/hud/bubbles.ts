/**
 * The HUD's bubbles: each turn's prompt flies into a new bubble that shows
 * the conversation's phase label, says at the end how the turn went (with
 * its duration and cost) and leaves; a failed bubble stays until opened.
 */
import type { PageState } from '../state/store';
import { formatCost, formatDuration, h, setText } from './dom';
import { frameBudget, rideAlong, SOFTWARE_OWN_FRAME_MS } from './ridealong';

/** How long a finished bubble stays, in ms. */
export const BUBBLE_LINGER_MS = 4000;

/** How long a bubble glows cyan after a read's comet landed. */
export const READ_GLOW_MS = 2000;

/**
 * On a software GPU the fly-in is drawn in steps, this far apart: two
 * steps (`fly-step-0`, `fly-step-1`) then the bubble in place, three
 * frames. The CSS animation (`fly-in`, 420 ms) asks for a frame every
 * vsync, and there each presented frame costs the CPU ~25 ms (SwiftShader
 * composites the whole window): 17-25 frames, at the moment a turn's first
 * messages are on their way to the page (bench/page/README.md, latency).
 * A step rides along with a frame the page presents for a change of its
 * own from half this wait; with the page's frame budget (hud/ridealong.ts)
 * it has a frame of its own only after {@link SOFTWARE_OWN_FRAME_MS} ms.
 */
export const FLY_STEP_MS = 140;

/** The classes of the stepped fly-in, in order (the bubble then has none). */
export const FLY_STEPS = ['fly-step-0', 'fly-step-1'] as const;

export interface BubblesOptions {
  /** Whether a software GPU draws the page (the fly-in then goes in {@link FLY_STEPS}); read when a bubble is made. */
  software?: () => boolean;
  /** Timers (tests inject their own). */
  /** Runs a step sooner, with a frame the page presents anyway (hud/ridealong.ts); the page's one watch by default. */
  ride?: (afterMs: number, go: () => void) => () => void;
  /** Whether the page keeps its frame budget on a software GPU (`frameBudget` by default). */
  budget?: () => boolean;
  setTimeout?: (fn: () => void, ms: number) => ReturnType<typeof setTimeout>;
  clearTimeout?: (handle: ReturnType<typeof setTimeout>) => void;
}

interface Bubble {
  key: string;
  turn: number;
  el: HTMLButtonElement;
  text: HTMLElement;
  label: HTMLElement;
  finished: boolean;
  failed: boolean;
  timer: ReturnType<typeof setTimeout> | null;
  /** The stepped fly-in's next step, while it runs. */
  flyTimer: ReturnType<typeof setTimeout> | null;
  /** Cancels the next fly-in step's ride along the page's own frames. */
  unride: (() => void) | null;
}

function promptOf(state: PageState, key: string, turn: number): string | null {
  const entries = state.transcripts[key] ?? [];
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const e = entries[i];
    if (e?.turn === turn && e.body.kind === 'prompt') return e.body.text;
    if (e && e.turn < turn) break;
  }
  return null;
}

function endOf(state: PageState, key: string, turn: number): { durationMs: number | null; costUsd: number } | null {
  const entries = state.transcripts[key] ?? [];
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const e = entries[i];
    if (e?.turn === turn && e.body.kind === 'turnEnd') return { durationMs: e.body.durationMs ?? null, costUsd: e.body.costUsd };
    if (e && e.turn < turn) break;
  }
  return null;
}

function shorten(text: string, max = 140): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export class Bubbles {
  readonly el: HTMLElement;
  private bubbles = new Map<string, Bubble>();
  /** `key:turn` of failed bubbles the user opened. */
  private dismissed = new Set<string>();

  private readonly software: () => boolean;
  private readonly ride: (afterMs: number, go: () => void) => () => void;
  private readonly budget: () => boolean;
  private readonly setTimer: (fn: () => void, ms: number) => ReturnType<typeof setTimeout>;
  private readonly clearTimer: (handle: ReturnType<typeof setTimeout>) => void;

  constructor(private readonly open: (key: string) => void, options: BubblesOptions = {}) {
    this.el = h('div', { class: 'bubbles', role: 'region', 'aria-label': 'Turns in progress' });
    this.software = options.software ?? (() => false);
    this.ride = options.ride ?? ((afterMs, go) => rideAlong.ride(afterMs, go));
    this.budget = options.budget ?? frameBudget;
    this.setTimer = options.setTimeout ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = options.clearTimeout ?? ((handle) => { clearTimeout(handle); });
  }

  private make(key: string, turn: number): Bubble {
    const text = h('span', { class: 'bubble-text' });
    const label = h('span', { class: 'bubble-label' });
    const stepped = this.software();
    const el = h('button', { type: 'button', class: `bubble ${stepped ? FLY_STEPS[0] : 'fly-in'}`, 'data-key': key }, text, label);
    const bubble: Bubble = { key, turn, el, text, label, finished: false, failed: false, timer: null, flyTimer: null, unride: null };
    if (stepped) this.step(bubble, 0);
    el.addEventListener('click', () => {
      this.open(key);
      if (bubble.finished) {
        if (bubble.failed) this.dismissed.add(`${key}:${turn}`);
        this.remove(bubble);
      }
    });
    this.el.appendChild(el);
    this.bubbles.set(key, bubble);
    return bubble;
  }

  /** The stepped fly-in: from step `i` to the next after {@link FLY_STEP_MS}, then in place. */
  private step(bubble: Bubble, i: number): void {
    const advance = (): void => {
      if (bubble.flyTimer !== null) this.clearTimer(bubble.flyTimer);
      bubble.flyTimer = null;
      bubble.unride?.();
      bubble.unride = null;
      const current = FLY_STEPS[i];
      if (current !== undefined) bubble.el.classList.remove(current);
      const next = FLY_STEPS[i + 1];
      if (next !== undefined) {
        bubble.el.classList.add(next);
        this.step(bubble, i + 1);
      }
    };
    // Only stepped on a software GPU: with the frame budget, a frame of its own waits longer.
    bubble.flyTimer = this.setTimer(advance, this.budget() ? SOFTWARE_OWN_FRAME_MS : FLY_STEP_MS);
    // Sooner if the page presents a frame for a change of its own in the second half of the wait (hud/ridealong.ts).
    bubble.unride = this.ride(FLY_STEP_MS / 2, advance);
  }

  private remove(bubble: Bubble): void {
    if (bubble.timer !== null) clearTimeout(bubble.timer);
    if (bubble.flyTimer !== null) this.clearTimer(bubble.flyTimer);
    bubble.flyTimer = null;
    bubble.unride?.();
    bubble.unride = null;
    bubble.el.classList.add('leaving');
    bubble.el.remove();
    if (this.bubbles.get(bubble.key) === bubble) this.bubbles.delete(bubble.key);
  }

  /** A read's comet landed on the map: the conversation's running bubble lights cyan for {@link READ_GLOW_MS}. */
  lightRead(key: string): void {
    const bubble = this.bubbles.get(key);
    if (!bubble || bubble.finished) return;
    const el = bubble.el;
    el.dataset.lit = 'read';
    const since = Date.now();
    el.dataset.litAt = String(since);
    setTimeout(() => {
      if (el.dataset.litAt === String(since)) delete el.dataset.lit;
    }, READ_GLOW_MS);
  }

  render(state: PageState): void {
    if (!state.ready) return;
    for (const [key, session] of Object.entries(state.sessions)) {
      let bubble = this.bubbles.get(key);
      const turn = session.turns;
      const busy = session.phase !== 'idle' && session.phase !== 'failed';
      if (busy) {
        if (!bubble || bubble.turn !== turn) {
          if (bubble) this.remove(bubble);
          bubble = this.make(key, turn);
        }
        setText(bubble.text, shorten(promptOf(state, key, turn) ?? '…'));
        setText(bubble.label, session.label ?? '');
        bubble.el.dataset.phase = session.phase;
        continue;
      }
      if (session.phase === 'failed') {
        if (this.dismissed.has(`${key}:${turn}`)) continue;
        if (!bubble || bubble.turn !== turn) {
          if (bubble) this.remove(bubble);
          bubble = this.make(key, turn);
          bubble.text.textContent = shorten(promptOf(state, key, turn) ?? '');
        }
        if (!bubble.failed) {
          const end = endOf(state, key, turn);
          bubble.finished = true;
          bubble.failed = true;
          bubble.el.dataset.phase = 'failed';
          bubble.label.textContent = ['Failed', session.error ?? '', end ? formatCost(end.costUsd) : ''].filter(Boolean).join(' · ');
          bubble.el.setAttribute('aria-label', `Failed: ${bubble.text.textContent}. Open the conversation`);
        }
        continue;
      }
      // Idle: a bubble still running finishes, says how it went, and leaves.
      if (bubble && !bubble.finished) {
        const end = endOf(state, key, bubble.turn);
        const outcome = session.lastOutcome === 'interrupted' ? 'Stopped' : session.lastOutcome === 'failed' ? 'Failed' : 'Done';
        bubble.finished = true;
        bubble.el.dataset.phase = 'done';
        bubble.label.textContent = [outcome, end ? formatDuration(end.durationMs) : '', end ? formatCost(end.costUsd) : formatCost(session.turnCostUsd)]
          .filter(Boolean)
          .join(' · ');
        const done = bubble;
        bubble.timer = setTimeout(() => { this.remove(done); }, BUBBLE_LINGER_MS);
      }
    }
    for (const bubble of [...this.bubbles.values()]) {
      if (!(bubble.key in state.sessions)) this.remove(bubble);
    }
  }
}
