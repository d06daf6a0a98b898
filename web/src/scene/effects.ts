/**
 * Claude on the map: what the overlay draws, as state over time. Each
 * conversation has a star (its own colour) that sits at home and moves over
 * the files Claude touches; a `Read` sends a comet from the star to the
 * file, which lights cyan when it lands; an edit pulses the file amber and
 * its import neighbours at half strength, and rings the files that import
 * it (two levels: the blast radius); a created file glows like an edit once
 * the live update has added it; an MCP call brings its server's station out
 * beside the star with a pulse along the beam (red on error); a subagent is
 * a smaller star that comes out of its conversation's, moves over its own
 * files and goes back when it ends; a thinking block fires every import
 * line on screen violet. When a turn ends (well, stopped, or failed) the
 * glows fade and the star goes home.
 *
 * Pure state: no DOM, the caller passes the clock; {@link Effects.animating}
 * says whether a frame is needed. Positions are world units.
 */
import type { ActivityRecord, SubagentMessage } from '../protocol/types';
import type { MapModel, MapNode } from './model';

/** How long a star takes to move (eased). */
export const TRAVEL_MS = 450;
/** How long a comet flies from the star to the file it read. */
export const COMET_MS = 450;
/** How long an edit's pulse runs (then the file glows steadily until the turn ends). */
export const PULSE_MS = 1200;
/** How long the glows take to fade when a turn ends. */
export const FADE_OUT_MS = 600;
/** How long a thinking block's violet flash lasts. */
export const FLASH_MS = 700;
/** How long a pulse takes along an MCP beam. */
export const BEAM_MS = 450;
/** Levels of importers ringed around an edited file. */
export const BLAST_LEVELS = 2;

export type LitEffect = 'read' | 'edit' | 'create' | 'neighbour' | 'blast';
export type StationState = 'out' | 'back' | 'error';

export interface LitInfo {
  path: string;
  effect: LitEffect;
  key: string;
  subagent: string | null;
}

export interface StarInfo {
  key: string;
  subagent: string | null;
  /** The file it is over (or heading to); null at home. */
  path: string | null;
}

export interface StationInfo {
  key: string;
  server: string;
  state: StationState;
}

/** Conversations' star colours, in the order conversations appear (then round again). */
export const STAR_COLOURS = ['#ffd166', '#ff7ab6', '#7ee081', '#b69cff', '#5cc8ff', '#ff9f5a', '#f4f1bb', '#66e3c4'];

export interface Lit extends LitInfo {
  /** When it lit (for a read: when its comet lands). */
  at: number;
  /** When it started fading (the turn ended); null while it glows. */
  fadeAt: number | null;
}

export interface Star {
  key: string;
  subagent: string | null;
  colour: string;
  from: [number, number];
  to: [number, number];
  start: number;
  path: string | null;
  /** A subagent star going back to its conversation's: removed when it arrives. */
  leaving: boolean;
  /** What a subagent star's popup says. */
  description: string | null;
}

export interface Comet {
  key: string;
  subagent: string | null;
  from: [number, number];
  path: string;
  to: [number, number];
  start: number;
}

export interface Station {
  key: string;
  server: string;
  state: StationState;
  /** When the last pulse along its beam started. */
  pulseAt: number;
  fadeAt: number | null;
}

interface Conversation {
  key: string;
  index: number;
  inTurn: boolean;
  /** In a turn that is not paused on the user (a card waiting): the edges flow. */
  flows: boolean;
}

const ease = (t: number): number => (t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2);

const starId = (key: string, subagent: string | null): string => (subagent === null ? key : `${key}\u0000${subagent}`);

/** Whether a star travels (a star put down where it already is, like a new conversation's at home, does not). */
const travels = (star: Star): boolean => star.leaving || star.from[0] !== star.to[0] || star.from[1] !== star.to[1];

export interface Adjacency {
  /** Files each file imports and is imported by (one hop). */
  neighbours(path: string): string[];
  /** Files that import `path`, transitively to `levels` (not `path` itself). */
  importers(path: string, levels: number): string[];
}

/** The import neighbours of the model's files, built once per model version. */
export function adjacency(model: MapModel): Adjacency {
  const out = new Map<MapNode, MapNode[]>();
  const into = new Map<MapNode, MapNode[]>();
  for (const edge of model.edges.values()) {
    let list = out.get(edge.from);
    if (!list) out.set(edge.from, (list = []));
    list.push(edge.to);
    let back = into.get(edge.to);
    if (!back) into.set(edge.to, (back = []));
    back.push(edge.from);
  }
  return {
    neighbours(path) {
      const node = model.nodes.get(path);
      if (!node) return [];
      const seen = new Set<string>();
      for (const n of [...(out.get(node) ?? []), ...(into.get(node) ?? [])]) if (n !== node) seen.add(n.path);
      return Array.from(seen);
    },
    importers(path, levels) {
      const node = model.nodes.get(path);
      if (!node) return [];
      const seen = new Set<MapNode>([node]);
      let frontier = [node];
      const found: string[] = [];
      for (let level = 0; level < levels && frontier.length > 0; level += 1) {
        const next: MapNode[] = [];
        for (const f of frontier) {
          for (const importer of into.get(f) ?? []) {
            if (seen.has(importer)) continue;
            seen.add(importer);
            found.push(importer.path);
            next.push(importer);
          }
        }
        frontier = next;
      }
      return found;
    },
  };
}

export interface EffectsOptions {
  /** Whether travel (stars, comets, pulses, flow) is dropped: the lights stay. */
  reducedMotion: () => boolean;
}

export class Effects {
  readonly lit = new Map<string, Lit>();
  readonly stars = new Map<string, Star>();
  readonly comets: Comet[] = [];
  readonly stations = new Map<string, Station>();
  /** When the last thinking block began (violet flash); null when none runs. */
  flashAt: number | null = null;
  /** Files edited in the running turns, by conversation (their blast radius is ringed). */
  private edited = new Map<string, Set<string>>();
  private conversations = new Map<string, Conversation>();
  private nextIndex = 0;
  private model: MapModel | null = null;
  private adj: { version: number; adj: Adjacency } | null = null;
  /** Whether the blast radius is shown (the toggle). */
  blastOn = true;
  /** Bumped whenever something changed that the overlay must draw. */
  version = 0;

  constructor(private readonly options: EffectsOptions) {}

  private reduced(): boolean {
    return this.options.reducedMotion();
  }

  setModel(model: MapModel | null): void {
    this.model = model;
    if (!model) return;
    // Lights on files no longer on the map go out.
    for (const [id, l] of this.lit) if (!model.nodes.has(l.path)) this.lit.delete(id);
    this.version += 1;
  }

  private adjacency(): Adjacency | null {
    const model = this.model;
    if (!model) return null;
    if (this.adj?.version !== model.version) this.adj = { version: model.version, adj: adjacency(model) };
    return this.adj.adj;
  }

  /** Where a conversation's star rests: inside the map's top margin, from the right. */
  home(key: string): [number, number] {
    const index = this.conversations.get(key)?.index ?? 0;
    const root = this.model?.folders.get('')?.rects[0];
    if (!root) return [0, 0];
    const x = root.x + root.w - 0.5 - 1.2 * index;
    return [Math.max(root.x + 0.5, x), root.y + 0.5];
  }

  /** The star's position at `now`. */
  position(star: Star, now: number): [number, number] {
    const p = this.reduced() ? 1 : Math.min(1, Math.max(0, (now - star.start) / TRAVEL_MS));
    if (p >= 1) return star.to;
    const s = ease(p);
    return [star.from[0] + (star.to[0] - star.from[0]) * s, star.from[1] + (star.to[1] - star.from[1]) * s];
  }

  private moveStar(star: Star, to: [number, number], path: string | null, now: number): void {
    star.from = this.position(star, now);
    star.to = to;
    star.start = now;
    star.path = path;
  }

  /**
   * The conversations now and whether each is in a turn. A new one gets a
   * star at home; a turn's start lights nothing by itself; a turn's end
   * fades its glows and sends its star (and its subagents') home.
   */
  setConversations(list: { key: string; inTurn: boolean; flows?: boolean }[], now: number): void {
    const keys = new Set(list.map((c) => c.key));
    for (const key of Array.from(this.conversations.keys())) {
      if (keys.has(key)) continue;
      this.conversations.delete(key);
      for (const [id, star] of this.stars) if (star.key === key) this.stars.delete(id);
      for (const [id, l] of this.lit) if (l.key === key) this.lit.delete(id);
      for (const [id, s] of this.stations) if (s.key === key) this.stations.delete(id);
      this.edited.delete(key);
      this.version += 1;
    }
    for (const { key, inTurn, flows } of list) {
      let conv = this.conversations.get(key);
      if (!conv) {
        conv = { key, index: this.nextIndex++, inTurn: false, flows: false };
        this.conversations.set(key, conv);
        const home = this.home(key);
        this.stars.set(starId(key, null), {
          key,
          subagent: null,
          colour: STAR_COLOURS[conv.index % STAR_COLOURS.length] ?? '#ffd166',
          from: home,
          to: home,
          start: now,
          path: null,
          leaving: false,
          description: null,
        });
        this.version += 1;
      }
      if (conv.inTurn && !inTurn) this.endTurn(key, now);
      if (!conv.inTurn && inTurn) this.startTurn(key);
      conv.inTurn = inTurn;
      const flowsNow = inTurn && flows !== false;
      // The flow shows or hides: a frame is needed even though nothing moves.
      if (conv.flows !== flowsNow) this.version += 1;
      conv.flows = flowsNow;
    }
  }

  /** Whether any conversation is in a turn not paused on the user (the edges flow, the loop stays awake). */
  anyTurn(): boolean {
    for (const c of this.conversations.values()) if (c.flows) return true;
    return false;
  }

  private startTurn(key: string): void {
    // What still fades from the last turn goes now.
    for (const [id, l] of this.lit) if (l.key === key) this.lit.delete(id);
    for (const [id, s] of this.stations) if (s.key === key) this.stations.delete(id);
    this.edited.delete(key);
    this.version += 1;
  }

  private endTurn(key: string, now: number): void {
    for (const l of this.lit.values()) if (l.key === key && l.fadeAt === null) l.fadeAt = now;
    for (const s of this.stations.values()) if (s.key === key && s.fadeAt === null) s.fadeAt = now;
    for (let i = this.comets.length - 1; i >= 0; i -= 1) if (this.comets[i]?.key === key) this.comets.splice(i, 1);
    this.edited.delete(key);
    const home = this.home(key);
    for (const star of this.stars.values()) {
      if (star.key !== key) continue;
      if (star.subagent === null) this.moveStar(star, home, null, now);
      else {
        this.moveStar(star, home, null, now);
        star.leaving = true;
      }
    }
    this.version += 1;
  }

  private star(key: string, subagent: string | null, now: number): Star | null {
    const own = this.stars.get(starId(key, subagent));
    if (own) return own;
    if (subagent === null) return null;
    // A subagent that was not announced (its `started` came before this page): it comes out now.
    const parent = this.stars.get(starId(key, null));
    if (!parent) return null;
    return this.addSubagentStar(key, subagent, null, now);
  }

  private addSubagentStar(key: string, subagent: string, description: string | null, now: number): Star | null {
    const parent = this.stars.get(starId(key, null));
    if (!parent) return null;
    const at = this.position(parent, now);
    const star: Star = {
      key,
      subagent,
      colour: parent.colour,
      from: at,
      to: [at[0] + 0.6, at[1] + 0.6],
      start: now,
      path: null,
      leaving: false,
      description,
    };
    this.stars.set(starId(key, subagent), star);
    this.version += 1;
    return star;
  }

  /** A subagent started or ended (or its call returned). */
  subagent(message: SubagentMessage, now: number): void {
    const id = starId(message.key, message.id);
    if (message.event === 'started') {
      const held = this.stars.get(id);
      if (held) {
        held.leaving = false;
        held.description = message.description ?? held.description;
        this.version += 1;
      } else {
        this.addSubagentStar(message.key, message.id, message.description ?? null, now);
      }
      return;
    }
    if (message.event === 'ended') {
      const star = this.stars.get(id);
      const parent = this.stars.get(starId(message.key, null));
      if (!star) return;
      this.moveStar(star, parent ? this.position(parent, now) : this.home(message.key), null, now);
      star.leaving = true;
      for (const l of this.lit.values()) if (l.key === message.key && l.subagent === message.id && l.fadeAt === null) l.fadeAt = now;
      this.version += 1;
    }
  }

  private light(path: string, effect: LitEffect, key: string, subagent: string | null, at: number): void {
    const id = `${key}\u0000${subagent ?? ''}\u0000${effect}\u0000${path}`;
    this.lit.set(id, { path, effect, key, subagent, at, fadeAt: null });
  }

  /** One activity record of conversation `key` that passed the hash rule. */
  apply(key: string, record: ActivityRecord, now: number): void {
    const subagent = record.subagent ?? null;
    this.version += 1;
    switch (record.kind) {
      case 'thinking':
        this.flashAt = now;
        return;
      case 'mcp': {
        const mcp = record.mcp;
        if (!mcp) return;
        const id = `${key}\u0000${mcp.server}`;
        const held = this.stations.get(id);
        const state: StationState = mcp.direction;
        if (held) {
          // Red stays red when a call goes out after an error (or its `out` comes late); an answer clears it.
          held.state = held.state === 'error' && state === 'out' ? 'error' : state;
          held.pulseAt = now;
          held.fadeAt = null;
        } else {
          this.stations.set(id, { key, server: mcp.server, state, pulseAt: now, fadeAt: null });
        }
        return;
      }
      case 'read':
      case 'edit':
      case 'create': {
        const path = record.file;
        const node = path ? this.model?.nodes.get(path) : undefined;
        if (!path || !node) return;
        const star = this.star(key, subagent, now);
        const from: [number, number] = star ? this.position(star, now) : this.home(key);
        if (star) this.moveStar(star, [node.x + 0.35, node.y - 0.35], path, now);
        if (record.kind === 'read') {
          if (this.reduced()) this.light(path, 'read', key, subagent, now);
          else this.comets.push({ key, subagent, from, path, to: [node.x, node.y], start: now });
          return;
        }
        this.light(path, record.kind, key, subagent, now);
        const adj = this.adjacency();
        if (!adj) return;
        for (const n of adj.neighbours(path)) this.light(n, 'neighbour', key, subagent, now);
        let files = this.edited.get(key);
        if (!files) this.edited.set(key, (files = new Set()));
        files.add(path);
        for (const b of adj.importers(path, BLAST_LEVELS)) this.light(b, 'blast', key, subagent, now);
        return;
      }
    }
  }

  /** Advances to `now`: comets that landed light their file; what faded or went back is removed. */
  step(now: number): void {
    for (let i = this.comets.length - 1; i >= 0; i -= 1) {
      const c = this.comets[i];
      if (!c || now - c.start < COMET_MS) continue;
      this.comets.splice(i, 1);
      if (this.model?.nodes.has(c.path)) this.light(c.path, 'read', c.key, c.subagent, c.start + COMET_MS);
      this.version += 1;
    }
    for (const [id, l] of this.lit) {
      if (l.fadeAt !== null && now - l.fadeAt >= FADE_OUT_MS) {
        this.lit.delete(id);
        this.version += 1;
      }
    }
    for (const [id, s] of this.stations) {
      if (s.fadeAt !== null && now - s.fadeAt >= FADE_OUT_MS) {
        this.stations.delete(id);
        this.version += 1;
      }
    }
    for (const [id, star] of this.stars) {
      if (star.leaving && (this.reduced() || now - star.start >= TRAVEL_MS)) {
        this.stars.delete(id);
        this.version += 1;
      }
    }
    if (this.flashAt !== null && now - this.flashAt >= FLASH_MS) {
      this.flashAt = null;
      this.version += 1;
    }
  }

  /** Whether something moves at `now` (a frame is needed soon). */
  animating(now: number): boolean {
    if (this.comets.length > 0 || this.flashAt !== null) return true;
    for (const l of this.lit.values()) if (l.fadeAt !== null) return true;
    for (const s of this.stations.values()) if (s.fadeAt !== null) return true;
    if (this.reduced()) return false;
    for (const star of this.stars.values()) if (star.leaving || (now - star.start < TRAVEL_MS && travels(star))) return true;
    for (const l of this.lit.values()) if ((l.effect === 'edit' || l.effect === 'create') && now - l.at < PULSE_MS) return true;
    for (const s of this.stations.values()) if (now - s.pulseAt < BEAM_MS) return true;
    return false;
  }

  /**
   * When the last of the effects running now ends, if nothing new comes:
   * the overlay draws its last frame then (whatever its frame cap) and
   * sleeps. -Infinity when nothing runs; a time already past when what
   * runs has ended and waits for {@link step} to remove it.
   */
  settlesAt(): number {
    let end = -Infinity;
    const until = (t: number): void => {
      if (t > end) end = t;
    };
    for (const c of this.comets) until(c.start + COMET_MS);
    if (this.flashAt !== null) until(this.flashAt + FLASH_MS);
    for (const l of this.lit.values()) if (l.fadeAt !== null) until(l.fadeAt + FADE_OUT_MS);
    for (const s of this.stations.values()) if (s.fadeAt !== null) until(s.fadeAt + FADE_OUT_MS);
    if (!this.reduced()) {
      for (const star of this.stars.values()) if (travels(star)) until(star.start + TRAVEL_MS);
      for (const l of this.lit.values()) if ((l.effect === 'edit' || l.effect === 'create') && l.fadeAt === null) until(l.at + PULSE_MS);
      for (const s of this.stations.values()) until(s.pulseAt + BEAM_MS);
    }
    return end;
  }

  /** The files lit now (those fading out are not), blast rings only while the toggle is on. */
  litInfo(): LitInfo[] {
    const out: LitInfo[] = [];
    for (const l of this.lit.values()) {
      if (l.fadeAt !== null) continue;
      if (l.effect === 'blast' && !this.blastOn) continue;
      out.push({ path: l.path, effect: l.effect, key: l.key, subagent: l.subagent });
    }
    return out;
  }

  starInfo(): StarInfo[] {
    return Array.from(this.stars.values(), (s) => ({ key: s.key, subagent: s.subagent, path: s.path }));
  }

  stationInfo(): StationInfo[] {
    return Array.from(this.stations.values(), (s) => ({ key: s.key, server: s.server, state: s.state }));
  }

  /** The files ringed as the blast radius of the files being edited now (distinct). */
  blastFiles(): string[] {
    const files = new Set<string>();
    for (const l of this.lit.values()) if (l.effect === 'blast' && l.fadeAt === null) files.add(l.path);
    return Array.from(files);
  }

  /** The files being edited now, whose blast radius is shown. */
  editedFiles(): string[] {
    const files = new Set<string>();
    for (const set of this.edited.values()) for (const f of set) files.add(f);
    return Array.from(files);
  }
}
