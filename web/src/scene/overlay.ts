/**
 * The effects' layer: a light 2D canvas over the map's WebGL canvas, drawn
 * from {@link Effects} with the camera the map was last drawn with (the
 * scene's CSS transform moves both while the user drags). A running effect
 * redraws only this canvas (a few dozen shapes), never the map's points.
 * Its own loop runs at most {@link FRAME_MS} apart while something moves or
 * a turn runs, and sleeps otherwise.
 *
 * "Flow" is the turn's motion along the imports: idle, the lines do not
 * move (nothing is drawn, no frame runs); during a turn the strongest
 * {@link FLOW_LINES} import lines in view carry dashes that move, redrawn
 * on this canvas 12 times a second ({@link FLOW_FRAME_MS}) while nothing
 * else moves. The canvas is rastered on the CPU (`willReadFrequently`).
 *
 * Around it: a button per star (its accessible name says whose; a subagent's
 * opens its popup with what it returned), the blast radius line and its
 * toggle.
 */
import './effects.css';
import { clear, h } from '../hud/dom';
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
/** While only the turn's flow moves, a frame per this many ms (the dashes read as flowing at 12 a second). */
export const FLOW_FRAME_MS = 83;
/** Import lines that carry the turn's flow (the strongest in view). */
export const FLOW_LINES = 300;
/** Import lines fired violet by a thinking block, at most. */
export const FLASH_LINES = 20000;

export interface OverlayView {
  model: () => MapModel | null;
  /** The camera the map was last drawn with (the overlay draws in its frame). */
  camera: () => Camera | null;
  size: () => { width: number; height: number; dpr: number; fitZoom: number };
  now?: () => number;
  reducedMotion?: () => boolean;
  /** Called when the loop goes awake or asleep (the scene's inspection reads {@link Overlay.awake}). */
  onRead?: (key: string, path: string) => void;
}

/** What the overlay takes from the channel. */
export type OverlayMessage = (ActivityBatch & { type: 'activity' }) | (SubagentMessage & { type: 'subagent' });

export interface OverlayInspection {
  lit: LitInfo[];
  stars: StarInfo[];
  stations: StationInfo[];
}

const IN_TURN = new Set(['thinking', 'writing', 'reading', 'editing', 'asking', 'tool', 'waiting', 'compacting', 'stopping']);

const reducedFromPage = (): boolean =>
  typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

export class Overlay {
  readonly canvas: HTMLCanvasElement;
  /** Star buttons, positioned over the canvas. */
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
  private timer: ReturnType<typeof setTimeout> | null = null;
  private raf = 0;
  private lastFrame = -Infinity;
  /** Frames the overlay drew (not the map's). */
  frames = 0;
  private lines: { key: string; flow: Float32Array; flash: Float32Array } | null = null;
  private buttons = new Map<string, HTMLButtonElement>();
  private flashCache: { key: string; canvas: HTMLCanvasElement } | null = null;
  private subagents: Record<string, Record<string, SubagentInfo>> = {};
  private popupFor: { key: string; id: string } | null = null;
  private litReads = new Set<string>();
  private conversations: { key: string; inTurn: boolean; flows?: boolean }[] = [];
  private fed: { key: string; inTurn: boolean }[] = [];
  private frameTimes: number[] = [];

  constructor(private readonly view: OverlayView) {
    this.now = view.now ?? (() => performance.now());
    this.reduced = view.reducedMotion ?? reducedFromPage;
    this.effects = new Effects({ reducedMotion: this.reduced });
    this.canvas = h('canvas', { class: 'map-canvas map-effects', 'aria-hidden': 'true' });
    this.starLayer = h('div', { class: 'map-stars' });
    this.blastText = h('span', { class: 'map-blast-text', role: 'status' });
    this.blastToggle = h('input', { type: 'checkbox', checked: true, 'aria-label': 'Blast radius' });
    this.blastToggle.addEventListener('change', () => {
      this.effects.blastOn = this.blastToggle.checked;
      this.effects.version += 1;
      this.updateBlast();
      this.wake();
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
    this.wake();
  }

  /** Whether a frame or its timer is pending. */
  awake(): boolean {
    return this.timer !== null || this.raf !== 0;
  }

  /** The map was redrawn (the camera or the data changed): redraw the effects in its frame. */
  redraw(): void {
    this.lines = null;
    this.draw();
    this.wake();
  }

  /** Draws a frame soon (no sooner than `every` ms after the last). */
  wake(every = FRAME_MS): void {
    if (this.timer !== null || this.raf !== 0) return;
    const wait = Math.max(0, every - (this.now() - this.lastFrame));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.raf = requestAnimationFrame(() => {
        this.raf = 0;
        this.frame();
      });
    }, wait);
  }

  private frame(): void {
    this.draw();
    const now = this.now();
    if (this.effects.animating(now)) this.wake(FRAME_MS);
    else if (this.effects.anyTurn() && !this.reduced()) this.wake(FLOW_FRAME_MS);
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
    this.frames += 1;
    const { width, height, dpr, fitZoom } = this.view.size();
    const cam = this.view.camera();
    const model = this.view.model();
    // A canvas rastered on the CPU: a few hundred strokes a frame cost less
    // there than through a software GPU (SwiftShader) on a machine without one.
    const ctx = this.canvas.getContext('2d', { willReadFrequently: true });
    this.updateBlast();
    this.placeButtons(cam, width, height, now);
    this.noteReads();
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (!cam || !model || width === 0) return;
    const at = (x: number, y: number): [number, number] => worldToScreen(cam, width, height, x, y);
    const reduced = this.reduced();
    const flowing = this.effects.anyTurn() && !reduced;
    const flash = this.effects.flashAt;
    // The lines in view are found only while they are drawn (a turn, a thinking flash).
    const lines = flowing || flash !== null ? this.visibleLines(model, cam, width, height, fitZoom) : null;

    // The turn's flow along the strongest lines.
    if (flowing && lines && lines.flow.length > 0) {
      ctx.save();
      ctx.strokeStyle = 'rgba(140, 190, 255, 0.55)';
      ctx.lineWidth = 1.5;
      ctx.setLineDash([3, 9]);
      ctx.lineDashOffset = -((now / 40) % 12);
      ctx.beginPath();
      for (let i = 0; i + 3 < lines.flow.length; i += 4) {
        const [ax, ay] = at(lines.flow[i] ?? 0, lines.flow[i + 1] ?? 0);
        const [bx, by] = at(lines.flow[i + 2] ?? 0, lines.flow[i + 3] ?? 0);
        ctx.moveTo(ax, ay);
        ctx.lineTo(bx, by);
      }
      ctx.stroke();
      ctx.restore();
    }

    // Thinking: every import line in view fires violet, fading: the lines
    // are stroked once per view into a canvas of their own, then blended.
    if (flash !== null && lines && lines.flash.length > 0) {
      const alpha = 0.8 * (1 - Math.min(1, (now - flash) / FLASH_MS));
      const image = this.flashImage(lines, at, width, height, dpr);
      if (image) {
        ctx.save();
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.globalAlpha = alpha;
        ctx.drawImage(image, 0, 0);
        ctx.restore();
      }
    }

    const cell = Math.min(28, Math.max(2, cam.zoom * 0.7));
    // Lit files: blast rings, neighbours, reads, edits.
    const order: Record<string, number> = { blast: 0, neighbour: 1, read: 2, create: 3, edit: 3 };
    const lit = Array.from(this.effects.lit.values()).sort((a, b) => (order[a.effect] ?? 0) - (order[b.effect] ?? 0));
    for (const l of lit) {
      if (l.effect === 'blast' && !this.effects.blastOn) continue;
      const node = model.nodes.get(l.path);
      if (!node) continue;
      const fade = l.fadeAt === null ? 1 : Math.max(0, 1 - (now - l.fadeAt) / FADE_OUT_MS);
      const [sx, sy] = at(node.x, node.y);
      if (sx < -40 || sy < -40 || sx > width + 40 || sy > height + 40) continue;
      ctx.beginPath();
      if (l.effect === 'blast') {
        ctx.strokeStyle = `rgba(255, 120, 90, ${(0.45 * fade).toFixed(3)})`;
        ctx.lineWidth = 1;
        ctx.arc(sx, sy, cell / 2 + 5, 0, Math.PI * 2);
        ctx.stroke();
        continue;
      }
      let radius = cell / 2 + 3;
      let alpha = fade;
      let colour = '255, 176, 46';
      if (l.effect === 'read') colour = '64, 224, 255';
      if (l.effect === 'neighbour') alpha *= 0.5;
      if ((l.effect === 'edit' || l.effect === 'create') && !reduced) {
        const p = (now - l.at) / PULSE_MS;
        if (p < 1) radius += 6 * Math.sin(p * Math.PI * 3) ** 2 * (1 - p);
      }
      ctx.fillStyle = `rgba(${colour}, ${(0.35 * alpha).toFixed(3)})`;
      ctx.strokeStyle = `rgba(${colour}, ${(0.95 * alpha).toFixed(3)})`;
      ctx.lineWidth = 2;
      ctx.arc(sx, sy, radius, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
    }

    // Comets from the star to the file read.
    for (const c of this.effects.comets) {
      const p = Math.min(1, (now - c.start) / COMET_MS);
      const x = c.from[0] + (c.to[0] - c.from[0]) * p;
      const y = c.from[1] + (c.to[1] - c.from[1]) * p;
      const tail = Math.max(0, p - 0.25);
      const [hx, hy] = at(x, y);
      const [tx, ty] = at(c.from[0] + (c.to[0] - c.from[0]) * tail, c.from[1] + (c.to[1] - c.from[1]) * tail);
      const gradient = ctx.createLinearGradient(tx, ty, hx, hy);
      gradient.addColorStop(0, 'rgba(64, 224, 255, 0)');
      gradient.addColorStop(1, 'rgba(64, 224, 255, 0.95)');
      ctx.strokeStyle = gradient;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.moveTo(tx, ty);
      ctx.lineTo(hx, hy);
      ctx.stroke();
      ctx.fillStyle = '#e8fcff';
      ctx.beginPath();
      ctx.arc(hx, hy, 3, 0, Math.PI * 2);
      ctx.fill();
    }

    // Stations beside their conversation's star, with the beam and its pulse.
    const perKey = new Map<string, number>();
    for (const s of this.effects.stations.values()) {
      const star = this.effects.stars.get(s.key);
      if (!star) continue;
      const [px, py] = at(...this.effects.position(star, now));
      const n = perKey.get(s.key) ?? 0;
      perKey.set(s.key, n + 1);
      const sx = px + 46;
      const sy = py - 30 + 26 * n;
      const fade = s.fadeAt === null ? 1 : Math.max(0, 1 - (now - s.fadeAt) / FADE_OUT_MS);
      const colour = s.state === 'error' ? '255, 82, 82' : '120, 200, 255';
      ctx.strokeStyle = `rgba(${colour}, ${(0.6 * fade).toFixed(3)})`;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(px, py);
      ctx.lineTo(sx, sy);
      ctx.stroke();
      ctx.fillStyle = `rgba(${colour}, ${(0.9 * fade).toFixed(3)})`;
      ctx.fillRect(sx - 6, sy - 6, 12, 12);
      ctx.font = '11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      ctx.fillText(s.server, sx + 10, sy);
      const p = (now - s.pulseAt) / BEAM_MS;
      if (p < 1 && !reduced) {
        const q = s.state === 'out' ? p : 1 - p;
        ctx.beginPath();
        ctx.arc(px + (sx - px) * q, py + (sy - py) * q, 3.5, 0, Math.PI * 2);
        ctx.fill();
      }
    }

    // The stars, subagents' smaller.
    for (const star of this.effects.stars.values()) {
      const [sx, sy] = at(...this.effects.position(star, now));
      const r = star.subagent === null ? 7 : 4.5;
      // The glow: a translucent disc (a shadow blur costs a pass of its own).
      ctx.globalAlpha = 0.25;
      ctx.fillStyle = star.colour;
      ctx.beginPath();
      ctx.arc(sx, sy, r * 1.9, 0, Math.PI * 2);
      ctx.fill();
      ctx.globalAlpha = 1;
      drawStar(ctx, sx, sy, r);
    }
  }

  /** The violet lines of a thinking flash, stroked once for the view `lines` was made for. */
  private flashImage(
    lines: { key: string; flash: Float32Array },
    at: (x: number, y: number) => [number, number],
    width: number,
    height: number,
    dpr: number,
  ): HTMLCanvasElement | null {
    if (this.flashCache?.key === lines.key) return this.flashCache.canvas;
    const canvas = this.flashCache?.canvas ?? document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width * dpr));
    canvas.height = Math.max(1, Math.round(height * dpr));
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) return null;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.strokeStyle = 'rgb(178, 120, 255)';
    ctx.lineWidth = 1.2;
    ctx.beginPath();
    for (let i = 0; i + 3 < lines.flash.length; i += 4) {
      const [ax, ay] = at(lines.flash[i] ?? 0, lines.flash[i + 1] ?? 0);
      const [bx, by] = at(lines.flash[i + 2] ?? 0, lines.flash[i + 3] ?? 0);
      ctx.moveTo(ax, ay);
      ctx.lineTo(bx, by);
    }
    ctx.stroke();
    this.flashCache = { key: lines.key, canvas };
    return canvas;
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
      let button = this.buttons.get(id);
      if (!button) {
        const name = star.subagent === null
          ? `Claude's star (${star.key})`
          : `Subagent ${star.description ?? star.subagent} (${star.key})`;
        const sub = star.subagent;
        button = h('button', {
          type: 'button',
          class: `map-star${sub === null ? '' : ' map-star-sub'}`,
          'aria-label': name,
          'data-key': star.key,
          ...(sub === null ? {} : { 'data-subagent': sub }),
          onclick: () => {
            if (sub !== null) this.showPopup(star.key, sub);
          },
        });
        // The map's own drag and click do not see a press on a star.
        button.addEventListener('pointerdown', (e) => { e.stopPropagation(); });
        this.buttons.set(id, button);
        this.starLayer.append(button);
      }
      if (!cam) {
        button.hidden = true;
        continue;
      }
      const [sx, sy] = worldToScreen(cam, width, height, ...this.effects.position(star, now));
      button.hidden = false;
      button.style.transform = `translate(${Math.round(sx - 9)}px, ${Math.round(sy - 9)}px)`;
    }
    for (const [id, button] of this.buttons) {
      if (seen.has(id)) continue;
      button.remove();
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
    return { lit: this.effects.litInfo(), stars: this.effects.starInfo(), stations: this.effects.stationInfo() };
  }

  resize(width: number, height: number, dpr: number): void {
    this.canvas.width = Math.max(1, Math.round(width * dpr));
    this.canvas.height = Math.max(1, Math.round(height * dpr));
    this.lines = null;
    this.wake();
  }
}

function drawStar(ctx: CanvasRenderingContext2D, x: number, y: number, r: number): void {
  ctx.beginPath();
  for (let i = 0; i < 10; i += 1) {
    const a = (Math.PI / 5) * i - Math.PI / 2;
    const rr = i % 2 === 0 ? r : r * 0.45;
    const px = x + Math.cos(a) * rr;
    const py = y + Math.sin(a) * rr;
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.closePath();
  ctx.fill();
}
