/**
 * The effects' layer, over the map's WebGL canvas, drawn from {@link Effects}
 * with the camera the map was last drawn with (the scene's CSS transform
 * moves it with the map while the user drags). A running effect never
 * redraws the map's points, and, since on a software GPU (SwiftShader)
 * every frame Chromium presents costs about the same whatever changed in
 * it, an effect frame changes as little as it can: the moving parts
 * (stars, comets, edit pulses, MCP stations and their pulses) and the lit
 * files are small DOM elements placed with CSS transforms; the thinking
 * flash is stroked once per view into a canvas of its own whose opacity
 * fades; the turn's flow is stroked once per view into three canvases, its
 * dashes a third of a period apart, and shown one after the other. No
 * canvas is repainted while an effect runs in one view.
 *
 * Its own loop runs at most every {@link FRAME_MS} ms while something
 * moves (every {@link SOFTWARE_FRAME_MS} ms on a software GPU, where a
 * frame costs ~25 ms of CPU), steps the flow every {@link FLOW_FRAME_MS}
 * ms ({@link SOFTWARE_FLOW_FRAME_MS}) while only the turn's flow moves, and
 * sleeps otherwise. Its last frame comes when the last effect ends (not at
 * the next step of the cap), and a change of the page that changes no
 * effect (a message for the panels) draws no frame.
 *
 * On a software GPU its frames ride along with the page's own (a frame the
 * page presents for a change of its own draws the effects' next step too,
 * hud/ridealong.ts), and with the page's frame budget (`frameBudget`, on
 * unless `?frames=all`) a frame of its own, one the page would not have
 * presented, comes at most every {@link SOFTWARE_OWN_FRAME_MS} ms while
 * effects move and every {@link SOFTWARE_FLOW_OWN_MS} ms while only the
 * flow does: at a turn's start, when the claude CLI, Orbit and the page's
 * socket want the two cores, the effects' steps are drawn in the frames
 * the turn's messages present anyway (bench/README.md, branch `lat2`).
 * The last frame, when the effects end, still comes at its time.
 *
 * "Flow" is the turn's motion along the imports: idle, the lines do not
 * move (nothing is drawn, no frame runs); during a turn the strongest
 * {@link FLOW_LINES} import lines in view carry dashes that march.
 *
 * Around it: a button per star (its accessible name says whose; a subagent's
 * opens its popup with what it returned), the blast radius line and its
 * toggle.
 */
import './effects.css';
import { clear, h } from '../hud/dom';
import { frameBudget, rideAlong, showFrameBudget, SOFTWARE_OWN_FRAME_MS } from '../hud/ridealong';
import type { ActivityBatch, SubagentMessage } from '../protocol/types';
import type { PageState, SubagentInfo } from '../state/store';
import { viewRect, worldToScreen, type Camera } from './camera';
import {
  BEAM_MS,
  COMET_MS,
  Effects,
  FADE_OUT_MS,
  FLASH_MS,
  PULSE_MS,
  type LitInfo,
  type StarInfo,
  type StationInfo,
} from './effects';
import { ActivityGate, type GateMap } from './hashrule';
import { bundleDepth, bundleEdges, depthOf, fileEdgesInView, fileLevel } from './lod';
import type { MapModel } from './model';

/** At most one overlay frame per this many ms (30 per second). */
export const FRAME_MS = 33;
/** On a software GPU: at most one frame per this many ms while something moves (5 per second: there each frame costs Chromium ~30 ms of CPU). */
export const SOFTWARE_FRAME_MS = 200;
/** While only the turn's flow moves, its dashes step every this many ms. */
export const FLOW_FRAME_MS = 83;
/** On a software GPU: the flow's dashes step every this many ms. */
export const SOFTWARE_FLOW_FRAME_MS = 400;
/** On a software GPU, with the frame budget: the flow's step in a frame of its own at most every this many ms (in between it rides along). */
export const SOFTWARE_FLOW_OWN_MS = 1000;
/** Import lines that carry the turn's flow (the strongest in view). */
export const FLOW_LINES = 300;
/** Import lines fired violet by a thinking block, at most. */
export const FLASH_LINES = 20000;
/** Lit files drawn at most (the strongest effects first); `lit` in the inspection lists them all. */
export const MAX_LIT_DRAWN = 600;
/** The flow's dash pattern (px), and how many canvases step through it. */
const DASH = [3, 9];
const FLOW_PHASES = 3;

export interface OverlayView {
  model: () => MapModel | null;
  /** The camera the map was last drawn with (the overlay draws in its frame). */
  camera: () => Camera | null;
  size: () => { width: number; height: number; dpr: number; fitZoom: number };
  now?: () => number;
  reducedMotion?: () => boolean;
  /** Whether the map is drawn by a software GPU (every presented frame then costs the CPU ~25 ms). */
  software?: () => boolean;
  /** Whether the page keeps its frame budget on a software GPU (hud/ridealong.ts `frameBudget` by default). */
  budget?: () => boolean;
  /** A read's comet landed (the HUD lights the conversation's bubble). */
  onRead?: (key: string, path: string) => void;
}

/** What the overlay takes from the channel. */
export type OverlayMessage = (ActivityBatch & { type: 'activity' }) | (SubagentMessage & { type: 'subagent' });

export interface OverlayInspection {
  lit: LitInfo[];
  stars: StarInfo[];
  stations: StationInfo[];
  /** Whether a thinking block's violet flash shows now. */
  flash: boolean;
  /** Comets in flight. */
  comets: number;
  /** The effects' frame cap now (ms between frames while something moves). */
  effectFrameMs: number;
  /** The least time between two frames the effects ask for on their own (not riding along the page's): the frame cap, or the software GPU's frame budget. */
  effectOwnFrameMs: number;
  /** Frames the overlay drew ({@link Overlay.frames}), and of those its own ({@link Overlay.ownFrames}). */
  effectFrames: number;
  effectOwnFrames: number;
}

const IN_TURN = new Set(['thinking', 'writing', 'reading', 'editing', 'asking', 'tool', 'waiting', 'compacting', 'stopping']);

const reducedFromPage = (): boolean =>
  typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

/** A positioned element of the layer, written only when what it shows changed. */
class Sprite {
  private transform = '';
  private opacity = '';
  private cls = '';
  constructor(readonly el: HTMLElement) {}
  place(transform: string, opacity = 1, cls = ''): void {
    if (transform !== this.transform) {
      this.transform = transform;
      this.el.style.transform = transform;
    }
    // Always written out: the flow and flash canvases are hidden (0) by the style sheet.
    const o = opacity >= 1 ? '1' : opacity.toFixed(2);
    if (o !== this.opacity) {
      this.opacity = o;
      this.el.style.opacity = o;
    }
    if (cls !== this.cls) {
      this.cls = cls;
      this.el.className = cls;
    }
  }
}

/** Keyed sprites: those not placed in a frame are removed at its end. */
class SpritePool {
  private readonly sprites = new Map<string, Sprite>();
  private seen = new Set<string>();
  constructor(private readonly parent: HTMLElement, private readonly make: () => HTMLElement) {}
  get(id: string): Sprite {
    this.seen.add(id);
    let sprite = this.sprites.get(id);
    if (!sprite) {
      sprite = new Sprite(this.make());
      this.sprites.set(id, sprite);
      this.parent.append(sprite.el);
    }
    return sprite;
  }
  /** Removes the sprites not asked for since the last sweep. */
  sweep(): void {
    for (const [id, sprite] of this.sprites) {
      if (this.seen.has(id)) continue;
      sprite.el.remove();
      this.sprites.delete(id);
    }
    this.seen = new Set();
  }
  get size(): number {
    return this.sprites.size;
  }
}

const px = (n: number): string => `${Math.round(n * 10) / 10}px`;

export class Overlay {
  /** The thinking flash: every import line in view stroked violet once per view; its opacity fades. */
  readonly canvas: HTMLCanvasElement;
  /** The effects' elements and the star buttons, positioned over the map. */
  readonly starLayer: HTMLElement;
  /** The blast radius line and toggle (for the map's tools). */
  readonly blastEl: HTMLElement;
  /** A subagent's popup (its output). */
  readonly popup: HTMLElement;
  readonly effects: Effects;
  readonly gate = new ActivityGate();
  private readonly blastText: HTMLElement;
  private readonly blastToggle: HTMLInputElement;
  private readonly now: () => number;
  private readonly reduced: () => boolean;
  private readonly software: () => boolean;
  private readonly budget: () => boolean;
  /** The flow's canvases, a third of a dash period apart. */
  private readonly flowCanvases: HTMLCanvasElement[];
  private readonly flowSprites: Sprite[];
  private readonly flashSprite: Sprite;
  private readonly litPool: SpritePool;
  private readonly pulsePool: SpritePool;
  private readonly cometPool: SpritePool;
  private readonly stationPool: SpritePool;
  private readonly beamPool: SpritePool;
  private readonly beamPulsePool: SpritePool;
  private readonly starGroup: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When the pending timer fires (the overlay's clock). */
  private timerAt = Infinity;
  private raf = 0;
  /** Cancels the pending frame's ride along the page's own frames (software GPU), if any. */
  private unride: (() => void) | null = null;
  private lastFrame = -Infinity;
  /** When the last frame the overlay asked for on its own (its timer, not a ride along the page's frames) was drawn. */
  private lastOwnFrame = -Infinity;
  /** The effects' version the last frame drew; the view (size, map) changed since when null. */
  private drawnVersion: number | null = null;
  /** Frames the overlay drew (not the map's). */
  frames = 0;
  /** Of those, the frames it asked for on its own (its timer; not riding along the page's frames, not the map's redraws). */
  ownFrames = 0;
  /** What the page was last told of the frame budget (`showFrameBudget`; null: nothing yet). */
  private budgetShown: boolean | null = null;
  private lines: { key: string; flow: Float32Array; flash: Float32Array } | null = null;
  private buttons = new Map<string, { button: HTMLButtonElement; sprite: Sprite }>();
  /** For which view the flash and flow canvases were stroked. */
  private flashKey: string | null = null;
  private flowKey: string | null = null;
  private subagents: Record<string, Record<string, SubagentInfo>> = {};
  private popupFor: { key: string; id: string } | null = null;
  private litReads = new Set<string>();
  private conversations: { key: string; inTurn: boolean; flows?: boolean }[] = [];
  private fed: { key: string; inTurn: boolean }[] = [];
  private frameTimes: number[] = [];

  constructor(private readonly view: OverlayView) {
    this.now = view.now ?? (() => performance.now());
    this.reduced = view.reducedMotion ?? reducedFromPage;
    this.software = view.software ?? (() => false);
    this.budget = view.budget ?? frameBudget;
    this.effects = new Effects({ reducedMotion: this.reduced });
    this.canvas = h('canvas', { class: 'map-canvas map-effects map-flash', 'aria-hidden': 'true' });
    this.flashSprite = new Sprite(this.canvas);
    this.flashSprite.place('', 0, 'map-canvas map-effects map-flash');
    this.flowCanvases = Array.from({ length: FLOW_PHASES }, () => h('canvas', { class: 'map-canvas map-effects map-flow', 'aria-hidden': 'true' }));
    this.flowSprites = this.flowCanvases.map((c) => {
      const sprite = new Sprite(c);
      sprite.place('', 0, 'map-canvas map-effects map-flow');
      return sprite;
    });
    const fx = h('div', { class: 'map-fx', 'aria-hidden': 'true' });
    const div = (): HTMLElement => h('div', null);
    this.litPool = new SpritePool(fx, div);
    this.pulsePool = new SpritePool(fx, div);
    this.beamPool = new SpritePool(fx, div);
    this.beamPulsePool = new SpritePool(fx, div);
    this.cometPool = new SpritePool(fx, div);
    this.stationPool = new SpritePool(fx, () => h('div', null, h('span', { class: 'map-station-box' }), h('span', { class: 'map-station-name' })));
    this.starGroup = h('div', { class: 'map-star-group' });
    this.starLayer = h('div', { class: 'map-stars' }, ...this.flowCanvases, fx, this.starGroup);
    this.blastText = h('span', { class: 'map-blast-text', role: 'status' });
    this.blastToggle = h('input', { type: 'checkbox', checked: true, 'aria-label': 'Blast radius' });
    this.blastToggle.addEventListener('change', () => {
      this.effects.blastOn = this.blastToggle.checked;
      this.effects.version += 1;
      this.updateBlast();
      // The user's own change: drawn now, not at the frame budget's pace.
      this.cancel();
      this.wakeAt(-Infinity);
    });
    this.blastEl = h('div', { class: 'map-blast' }, h('label', null, this.blastToggle, ' Blast radius'), this.blastText);
    this.popup = h('div', { class: 'map-popup', role: 'dialog', 'aria-label': 'Subagent', hidden: true });
  }

  private gateMap(): GateMap | null {
    const model = this.view.model();
    return model ? { hash: model.hash, has: (path) => model.nodes.has(path) } : null;
  }

  /** The map changed (a delta, a fetched snapshot): held activity may now be drawn. */
  modelChanged(): void {
    const model = this.view.model();
    this.effects.setModel(model);
    if (model) this.gate.observe(model.hash);
    this.lines = null;
    this.drawnVersion = null;
    this.release();
    this.wake();
  }

  private release(): void {
    const now = this.now();
    for (const r of this.gate.release(this.gateMap(), now)) this.effects.apply(r.key, r.record, now);
  }

  /** The page's state changed: conversations, turns, and the activity received since. */
  update(state: PageState, messages: OverlayMessage[]): void {
    this.subagents = state.subagents;
    this.conversations = state.conversations.map((c) => {
      const phase = state.sessions[c.key]?.phase ?? c.phase;
      // A card waiting pauses the turn on the user: the lights stay, the edges stop flowing.
      return { key: c.key, inTurn: IN_TURN.has(phase), flows: phase !== 'waiting' };
    });
    this.take(messages);
  }

  /**
   * Benchmarks and tools only (`orbitInspect.sceneFeed`): conversations of
   * their own (beside the page's) and messages as the channel would bring
   * them, through the same hash rule and effects.
   */
  feed(conversations: { key: string; inTurn: boolean }[], messages: OverlayMessage[]): void {
    this.fed = conversations;
    this.take(messages);
  }

  private take(messages: OverlayMessage[]): void {
    const now = this.now();
    const own = new Set(this.conversations.map((c) => c.key));
    this.effects.setConversations([...this.conversations, ...this.fed.filter((c) => !own.has(c.key))], now);
    this.release();
    for (const m of messages) {
      if (m.type === 'subagent') this.effects.subagent(m, now);
      else for (const r of this.gate.offer(m, this.gateMap(), now)) this.effects.apply(r.key, r.record, now);
    }
    if (this.popupFor) this.showPopup(this.popupFor.key, this.popupFor.id);
    // The status says the blast radius as soon as the effects have it (a frame may be 200 ms away).
    this.updateBlast();
    // Only when the effects changed or move: the page re-renders for any message.
    if (this.needsFrame(now)) this.wake();
  }

  /** Whether a frame would change what the overlay shows. */
  private needsFrame(now: number): boolean {
    return this.drawnVersion !== this.effects.version || this.effects.animating(now) || this.flows();
  }

  /** Whether the turn's flow marches (the loop stays awake while it does). */
  private flows(): boolean {
    return this.effects.anyTurn() && !this.reduced();
  }

  /** Whether a frame or its timer is pending. */
  awake(): boolean {
    return this.timer !== null || this.raf !== 0;
  }

  /** The map was redrawn (the camera or the data changed): redraw the effects in its frame. */
  redraw(): void {
    this.lines = null;
    // This frame draws what a pending one would have.
    this.cancel();
    this.draw();
    this.next();
  }

  private cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.unride?.();
    this.unride = null;
    if (this.raf !== 0) cancelAnimationFrame(this.raf);
    this.raf = 0;
  }

  /** The frame cap now: 30 a second, 5 on a software GPU. */
  frameMs(): number {
    return this.software() ? SOFTWARE_FRAME_MS : FRAME_MS;
  }

  /** Whether frames of the overlay's own are held to the frame budget (a software GPU, the budget on). */
  private budgeted(): boolean {
    return this.software() && this.budget();
  }

  private flowMs(): number {
    return this.software() ? SOFTWARE_FLOW_FRAME_MS : FLOW_FRAME_MS;
  }

  /**
   * Draws a frame soon (no sooner than `every` ms after the last). Before
   * the first frame the cap says nothing, and is not asked (on a software
   * GPU's check, a round trip to the GPU process while the map starts).
   */
  wake(every?: number): void {
    if (this.lastFrame === -Infinity) this.wakeAt(-Infinity);
    else this.wakeAt(this.lastFrame + (every ?? this.frameMs()), this.lastOwnFrame + SOFTWARE_OWN_FRAME_MS);
  }

  /**
   * Draws a frame at `due` (the overlay's clock), or at once if that has
   * passed. On a software GPU a frame the page presents for a change of its
   * own in the second half of the wait draws this one too; with the frame
   * budget, a frame of the overlay's own comes no sooner than `own`.
   */
  private wakeAt(due: number, own = due): void {
    // A frame already on its way no later than this one serves (`due` is the soonest it can be).
    if (this.raf !== 0 || (this.timer !== null && this.timerAt <= due)) return;
    const now = this.now();
    const rides = this.lastFrame !== -Infinity && this.software();
    const at = rides && this.budget() ? Math.max(due, own) : due;
    // A later one (the flow's next step, held by the frame budget) gives way to this.
    if (this.timer !== null) {
      if (this.timerAt <= at) return;
      this.cancel();
    }
    const wait = Math.max(0, Math.ceil(at - now));
    this.timerAt = now + wait;
    const go = (rode: boolean): void => {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      this.unride?.();
      this.unride = null;
      this.raf = requestAnimationFrame(() => {
        this.raf = 0;
        this.frame(!rode);
      });
    };
    this.timer = setTimeout(() => { go(false); }, wait);
    // On a software GPU, a frame the page presents for a change of its own
    // in the second half of the wait draws this one too (hud/ridealong.ts):
    // one frame presented instead of two a moment apart.
    if (wait > 0 && rides) {
      this.unride = rideAlong.ride((due + this.lastFrame) / 2 - now, () => { go(true); });
    }
  }

  private frame(own: boolean): void {
    this.draw();
    // Asked after a frame has been drawn (the software check is a round trip to the GPU process),
    // and again at each frame until it is known: an early frame can come before the map's first
    // (the GPU not asked yet, so not a software one then).
    const budgeted = this.budgeted();
    if (budgeted !== this.budgetShown) {
      this.budgetShown = budgeted;
      showFrameBudget(budgeted);
    }
    if (own) {
      this.lastOwnFrame = this.lastFrame;
      this.ownFrames += 1;
    }
    this.next();
  }

  /**
   * After a frame: the next one at the frame cap while something moves,
   * but at the end of the last effect if that comes sooner (the loop then
   * sleeps as soon as nothing moves, whatever the cap); the flow's next
   * step during a turn; otherwise none.
   */
  private next(): void {
    const now = this.now();
    if (this.effects.animating(now)) {
      const settles = this.effects.settlesAt();
      const due = Math.min(this.lastFrame + this.frameMs(), settles);
      // The frame budget holds back the frames between, not the last one after a turn (the loop then
      // sleeps at once); during a turn the flow keeps the loop awake, and the effects' end waits its turn.
      const own = this.lastOwnFrame + SOFTWARE_OWN_FRAME_MS;
      this.wakeAt(due, this.flows() ? own : Math.min(settles, own));
    } else if (this.flows()) {
      this.wakeAt(this.lastFrame + this.flowMs(), this.lastOwnFrame + SOFTWARE_FLOW_OWN_MS);
    }
  }

  /** How long the last overlay frames took to draw (ms, at most 2000 kept), for benchmarks; taking them empties the list. */
  takeFrameTimes(): number[] {
    const times = this.frameTimes;
    this.frameTimes = [];
    return times;
  }

  private draw(): void {
    const t0 = performance.now();
    this.drawFrame();
    this.frameTimes.push(performance.now() - t0);
    if (this.frameTimes.length > 2000) this.frameTimes.shift();
  }

  private drawFrame(): void {
    const now = this.now();
    this.lastFrame = now;
    this.effects.step(now);
    this.drawnVersion = this.effects.version;
    this.frames += 1;
    const { width, height, dpr, fitZoom } = this.view.size();
    const cam = this.view.camera();
    const model = this.view.model();
    this.updateBlast();
    this.placeButtons(cam, width, height, now);
    this.noteReads();
    const ready = cam !== null && model !== null && width > 0;
    const reduced = this.reduced();
    const flowing = ready && this.effects.anyTurn() && !reduced;
    const flash = ready ? this.effects.flashAt : null;
    // The lines in view are found only while they are drawn (a turn, a thinking flash).
    const lines = ready && (flowing || flash !== null) ? this.visibleLines(model, cam, width, height, fitZoom) : null;
    const at = (x: number, y: number): [number, number] => (cam ? worldToScreen(cam, width, height, x, y) : [0, 0]);

    // The turn's flow: the canvas of the phase due now shows, the others hide.
    const phase = flowing && lines && lines.flow.length > 0 ? this.flowPhase(lines, at, width, height, dpr, now) : -1;
    this.flowSprites.forEach((sprite, i) => { sprite.place('', i === phase ? 1 : 0, 'map-canvas map-effects map-flow'); });

    // Thinking: every import line in view fires violet, fading (its canvas stroked once per view).
    let flashAlpha = 0;
    if (flash !== null && lines && lines.flash.length > 0 && this.strokeFlash(lines, at, width, height, dpr)) {
      // Stepped in fifths: a frame that changes nothing else costs nothing.
      flashAlpha = Math.ceil(5 * 0.8 * (1 - Math.min(1, (now - flash) / FLASH_MS))) / 5;
    }
    this.flashSprite.place('', flashAlpha, 'map-canvas map-effects map-flash');

    if (!ready) {
      for (const pool of [this.litPool, this.pulsePool, this.cometPool, this.stationPool, this.beamPool, this.beamPulsePool]) pool.sweep();
      return;
    }
    const cell = Math.min(28, Math.max(2, cam.zoom * 0.7));
    const onScreen = (sx: number, sy: number): boolean => sx >= -40 && sy >= -40 && sx <= width + 40 && sy <= height + 40;

    // Lit files: blast rings, neighbours, reads, edits (the strongest drawn last, on top; at most MAX_LIT_DRAWN).
    const order: Record<string, number> = { blast: 0, neighbour: 1, read: 2, create: 3, edit: 3 };
    const lit = Array.from(this.effects.lit.values())
      .filter((l) => l.effect !== 'blast' || this.effects.blastOn)
      .sort((a, b) => (order[b.effect] ?? 0) - (order[a.effect] ?? 0))
      .slice(0, MAX_LIT_DRAWN)
      .reverse();
    for (const l of lit) {
      const node = model.nodes.get(l.path);
      if (!node) continue;
      const [sx, sy] = at(node.x, node.y);
      if (!onScreen(sx, sy)) continue;
      // Fading out in thirds (the end of a turn): few frames.
      const fade = l.fadeAt === null ? 1 : Math.ceil(3 * Math.max(0, 1 - (now - l.fadeAt) / FADE_OUT_MS)) / 3;
      const radius = l.effect === 'blast' ? cell / 2 + 5 : cell / 2 + 3;
      const id = `${l.key}\u0000${l.subagent ?? ''}\u0000${l.effect}\u0000${l.path}`;
      const size = 2 * radius;
      this.litPool.get(id).place(`translate(${px(sx - radius)}, ${px(sy - radius)}) scale(${(size / 16).toFixed(3)})`, fade, `map-lit map-lit-${l.effect}`);
      // An edit's pulse: a ring that swells three times over PULSE_MS.
      if ((l.effect === 'edit' || l.effect === 'create') && !reduced && l.fadeAt === null) {
        const p = (now - l.at) / PULSE_MS;
        if (p < 1) {
          const r = radius + 6 * Math.sin(p * Math.PI * 3) ** 2 * (1 - p);
          this.pulsePool.get(id).place(`translate(${px(sx - r)}, ${px(sy - r)}) scale(${((2 * r) / 16).toFixed(3)})`, 1, 'map-pulse');
        }
      }
    }

    // Comets from the star to the file read: a head and its tail, turned along the way.
    for (const c of this.effects.comets) {
      const p = Math.min(1, (now - c.start) / COMET_MS);
      const [fx, fy] = at(...c.from);
      const [tx, ty] = at(...c.to);
      const hx = fx + (tx - fx) * p;
      const hy = fy + (ty - fy) * p;
      const length = Math.max(4, Math.hypot(tx - fx, ty - fy) * Math.min(0.25, p));
      const angle = Math.atan2(ty - fy, tx - fx);
      // The tail's end, from which the bar (transform-origin: its left middle) turns toward the head.
      const ex = hx - Math.cos(angle) * length;
      const ey = hy - Math.sin(angle) * length;
      this.cometPool.get(`${c.key}\u0000${c.subagent ?? ''}\u0000${c.path}\u0000${c.start}`)
        .place(`translate(${px(ex)}, ${px(ey - 1.5)}) rotate(${angle.toFixed(3)}rad) scale(${(length / 32).toFixed(3)}, 1)`, 1, 'map-comet');
    }

    // Stations beside their conversation's star, with the beam and its pulse.
    const perKey = new Map<string, number>();
    for (const s of this.effects.stations.values()) {
      const star = this.effects.stars.get(s.key);
      if (!star) continue;
      const [sx0, sy0] = at(...this.effects.position(star, now));
      const n = perKey.get(s.key) ?? 0;
      perKey.set(s.key, n + 1);
      const sx = sx0 + 46;
      const sy = sy0 - 30 + 26 * n;
      const fade = s.fadeAt === null ? 1 : Math.ceil(3 * Math.max(0, 1 - (now - s.fadeAt) / FADE_OUT_MS)) / 3;
      const id = `${s.key}\u0000${s.server}`;
      const colour = s.state === 'error' ? ' map-error' : '';
      const station = this.stationPool.get(id);
      const name = station.el.lastElementChild;
      if (name && name.textContent !== s.server) name.textContent = s.server;
      station.place(`translate(${px(sx - 6)}, ${px(sy - 6)})`, fade, `map-station${colour}`);
      const beam = Math.hypot(sx - sx0, sy - sy0);
      this.beamPool.get(id).place(`translate(${px(sx0)}, ${px(sy0 - 0.75)}) rotate(${Math.atan2(sy - sy0, sx - sx0).toFixed(3)}rad) scale(${(beam / 32).toFixed(3)}, 1)`, 0.6 * fade, `map-beam${colour}`);
      const p = (now - s.pulseAt) / BEAM_MS;
      if (p < 1 && !reduced) {
        const q = s.state === 'out' ? p : 1 - p;
        this.beamPulsePool.get(id).place(`translate(${px(sx0 + (sx - sx0) * q - 3.5)}, ${px(sy0 + (sy - sy0) * q - 3.5)})`, fade, `map-beam-pulse${colour}`);
      }
    }
    for (const pool of [this.litPool, this.pulsePool, this.cometPool, this.stationPool, this.beamPool, this.beamPulsePool]) pool.sweep();
  }

  /** The flow's canvas for `now`, its three canvases stroked once per view. */
  private flowPhase(
    lines: { key: string; flow: Float32Array },
    at: (x: number, y: number) => [number, number],
    width: number,
    height: number,
    dpr: number,
    now: number,
  ): number {
    if (this.flowKey !== lines.key) {
      this.flowKey = lines.key;
      const period = (DASH[0] ?? 3) + (DASH[1] ?? 9);
      this.flowCanvases.forEach((canvas, i) => {
        strokeLines(canvas, lines.flow, at, width, height, dpr, (ctx) => {
          ctx.strokeStyle = 'rgba(140, 190, 255, 0.55)';
          ctx.lineWidth = 1.5;
          ctx.setLineDash(DASH);
          ctx.lineDashOffset = -(period / FLOW_PHASES) * i;
        });
      });
    }
    return Math.floor(now / this.flowMs()) % FLOW_PHASES;
  }

  /** The violet lines of a thinking flash, stroked once for the view `lines` was made for. */
  private strokeFlash(
    lines: { key: string; flash: Float32Array },
    at: (x: number, y: number) => [number, number],
    width: number,
    height: number,
    dpr: number,
  ): boolean {
    if (this.flashKey === lines.key) return true;
    const ok = strokeLines(this.canvas, lines.flash, at, width, height, dpr, (ctx) => {
      ctx.strokeStyle = 'rgb(178, 120, 255)';
      ctx.lineWidth = 1.2;
    });
    this.flashKey = ok ? lines.key : null;
    return ok;
  }

  /** The import lines in view, as world segments: the strongest for the flow, all (capped) for a thinking flash. */
  private visibleLines(model: MapModel, cam: Camera, width: number, height: number, fitZoom: number): { key: string; flow: Float32Array; flash: Float32Array } {
    const key = `${model.version}:${cam.x}:${cam.y}:${cam.zoom}:${width}:${height}`;
    if (this.lines?.key === key) return this.lines;
    let all: Float32Array;
    let flow: Float32Array;
    if (fileLevel(cam.zoom, fitZoom, model.edges.size)) {
      all = fileEdgesInView(model, viewRect(cam, width, height), FLASH_LINES);
      flow = all.subarray(0, Math.min(all.length, FLOW_LINES * 4));
    } else {
      let maxDepth = 1;
      for (const f of model.folders.keys()) maxDepth = Math.max(maxDepth, depthOf(f));
      const bundles = bundleEdges(model, bundleDepth(cam.zoom, fitZoom, maxDepth)).sort((a, b) => b.count - a.count);
      all = new Float32Array(bundles.length * 4);
      bundles.forEach((b, i) => { all.set([b.ax, b.ay, b.bx, b.by], i * 4); });
      flow = all.subarray(0, Math.min(all.length, FLOW_LINES * 4));
    }
    this.lines = { key, flow, flash: all };
    return this.lines;
  }

  private placeButtons(cam: Camera | null, width: number, height: number, now: number): void {
    const seen = new Set<string>();
    for (const star of this.effects.stars.values()) {
      const id = star.subagent === null ? star.key : `${star.key}/${star.subagent}`;
      seen.add(id);
      let entry = this.buttons.get(id);
      const cls = `map-star${star.subagent === null ? '' : ' map-star-sub'}`;
      if (!entry) {
        const name = star.subagent === null
          ? `Claude's star (${star.key})`
          : `Subagent ${star.description ?? star.subagent} (${star.key})`;
        const sub = star.subagent;
        const button = h('button', {
          type: 'button',
          class: cls,
          'aria-label': name,
          'data-key': star.key,
          ...(sub === null ? {} : { 'data-subagent': sub }),
          onclick: () => {
            if (sub !== null) this.showPopup(star.key, sub);
          },
        });
        // Its colour, through the CSSOM (the page's CSP allows no inline style attribute).
        button.style.setProperty('--star', star.colour);
        // The map's own drag and click do not see a press on a star.
        button.addEventListener('pointerdown', (e) => { e.stopPropagation(); });
        entry = { button, sprite: new Sprite(button) };
        this.buttons.set(id, entry);
        this.starGroup.append(button);
      }
      if (!cam || width === 0) {
        entry.button.hidden = true;
        continue;
      }
      const [sx, sy] = worldToScreen(cam, width, height, ...this.effects.position(star, now));
      entry.button.hidden = false;
      const half = star.subagent === null ? 9 : 7;
      entry.sprite.place(`translate(${px(sx - half)}, ${px(sy - half)})`, 1, cls);
    }
    for (const [id, entry] of this.buttons) {
      if (seen.has(id)) continue;
      entry.button.remove();
      this.buttons.delete(id);
    }
  }

  /** A subagent's popup: its type, description, how it ended and what it returned. */
  showPopup(key: string, id: string): void {
    const info = this.subagents[key]?.[id];
    this.popupFor = { key, id };
    clear(this.popup);
    const close = h('button', { type: 'button', class: 'link-button', onclick: () => { this.hidePopup(); } }, 'Close');
    this.popup.setAttribute('aria-label', `Subagent ${info?.description ?? id}`);
    this.popup.append(
      h('h3', null, info?.agentType ?? 'Subagent', info?.description ? `: ${info.description}` : ''),
      h('p', { class: 'muted' }, info?.running ? 'Running' : `Ended${info?.status ? ` (${info.status})` : ''}`),
      h('pre', { class: 'map-popup-output' }, info?.output ?? 'No output yet.'),
      close,
    );
    this.popup.hidden = false;
  }

  hidePopup(): void {
    this.popupFor = null;
    this.popup.hidden = true;
  }

  private updateBlast(): void {
    const edited = this.effects.editedFiles();
    const files = this.effects.blastFiles();
    this.blastEl.hidden = edited.length === 0;
    if (edited.length === 0) {
      if (this.blastText.textContent !== '') this.blastText.textContent = '';
      return;
    }
    const text = this.effects.blastOn
      ? `${files.length} ${files.length === 1 ? 'file imports' : 'files import'} ${edited.length === 1 ? edited[0] ?? '' : `the ${edited.length} files being edited`} (two levels)`
      : 'Blast radius hidden';
    if (this.blastText.textContent !== text) this.blastText.textContent = text;
  }

  /** Tells the HUD once per read that landed (its bubble lights cyan). */
  private noteReads(): void {
    if (!this.view.onRead) return;
    for (const l of this.effects.lit.values()) {
      if (l.effect !== 'read' || l.subagent !== null || l.fadeAt !== null) continue;
      const id = `${l.key}\u0000${l.path}\u0000${l.at}`;
      if (this.litReads.has(id)) continue;
      this.litReads.add(id);
      if (this.litReads.size > 1000) this.litReads.clear();
      this.view.onRead(l.key, l.path);
    }
  }

  inspect(): OverlayInspection {
    this.effects.step(this.now());
    return {
      lit: this.effects.litInfo(),
      stars: this.effects.starInfo(),
      stations: this.effects.stationInfo(),
      flash: this.effects.flashAt !== null,
      comets: this.effects.comets.length,
      effectFrameMs: this.frameMs(),
      effectOwnFrameMs: this.budgeted() ? SOFTWARE_OWN_FRAME_MS : this.frameMs(),
      effectFrames: this.frames,
      effectOwnFrames: this.ownFrames,
    };
  }

  resize(width: number, height: number, dpr: number): void {
    for (const canvas of [this.canvas, ...this.flowCanvases]) {
      canvas.width = Math.max(1, Math.round(width * dpr));
      canvas.height = Math.max(1, Math.round(height * dpr));
    }
    this.lines = null;
    this.flashKey = null;
    this.flowKey = null;
    this.drawnVersion = null;
    this.wake();
  }
}

/** Strokes world segments `lines` (x0, y0, x1, y1, ...) into `canvas` as one path, cleared first; false without a 2D context. */
function strokeLines(
  canvas: HTMLCanvasElement,
  lines: Float32Array,
  at: (x: number, y: number) => [number, number],
  width: number,
  height: number,
  dpr: number,
  style: (ctx: CanvasRenderingContext2D) => void,
): boolean {
  const w = Math.max(1, Math.round(width * dpr));
  const hh = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== hh) canvas.height = hh;
  // Rastered on the CPU: stroked once per view, then only shown or faded.
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return false;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  style(ctx);
  ctx.beginPath();
  for (let i = 0; i + 3 < lines.length; i += 4) {
    const [ax, ay] = at(lines[i] ?? 0, lines[i + 1] ?? 0);
    const [bx, by] = at(lines[i + 2] ?? 0, lines[i + 3] ?? 0);
    ctx.moveTo(ax, ay);
    ctx.lineTo(bx, by);
  }
  ctx.stroke();
  return true;
}
