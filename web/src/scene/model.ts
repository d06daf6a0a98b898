/**
 * The map the page holds: a `/map` snapshot plus the `mapDelta`s chained
 * on it by hash ({@link MapModel}), and the rules that keep it in step
 * with the host ({@link MapSync}): deltas that arrive while a fetch runs
 * are held; after it, those already in the snapshot are dropped and the
 * rest applied in order; a delta that does not chain, a `mapReset`, or a
 * fresh channel snapshot makes it fetch again. No DOM here.
 */
import type { MapDelta, MapReset } from '../protocol/types';
import { decodeMap, type MapSnapshot } from './decode';
import { LANGUAGES, languageIndex } from './languages';

/** How long a new file fades in and a removed one fades out. */
export const FADE_MS = 400;

/** `mapDelta` (docs/page-protocol.md, "The map"), as the channel carries it. */
export type MapDeltaMessage = MapDelta & { type: 'mapDelta' };

/** `mapReset`: fetch the map again. */
export type MapResetMessage = MapReset & { type: 'mapReset' };

/** What the scene is told: a delta, a reset, or (`snapshot`) the channel started afresh. */
export type MapMessage = MapDeltaMessage | MapResetMessage | { type: 'snapshot' };

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface MapNode {
  /** The model's own number for it (edges are keyed by it). */
  id: number;
  path: string;
  x: number;
  y: number;
  /** Index into LANGUAGES. */
  lang: number;
  folder: string;
  /** Files this one imports, and that import it (distinct pairs). */
  out: number;
  in: number;
  /** When it appeared (for the fade-in); -Infinity for a snapshot's nodes. */
  bornAt: number;
}

export interface MapEdge {
  from: MapNode;
  to: MapNode;
  count: number;
}

export interface MapFolderRegion {
  path: string;
  parent: string | null;
  /** Its rectangles, oldest first; the latest carries the label (an annex is the same folder). */
  rects: Rect[];
}

export interface Fading {
  node: MapNode;
  diedAt: number;
}

/** An edge's key from its ends' ids (below 2^26 each, so the key is an exact integer). */
const edgeKey = (from: MapNode, to: MapNode): number => from.id * 0x4000000 + to.id;

/** How many hashes the model remembers (to drop a delta it already holds). */
const HISTORY = 64;

export class MapModel {
  hash: string;
  readonly folders = new Map<string, MapFolderRegion>();
  /** Removed nodes still fading out. */
  fading: Fading[] = [];
  /** Bumped on every change (renderer caches key on it). */
  version = 0;
  private readonly history: string[] = [];
  private nodeList: MapNode[] | null = null;
  private nextId = 0;
  private nodeMap: Map<string, MapNode> | null = null;
  private edgeMap: Map<number, MapEdge> | null = null;
  /**
   * The snapshot this model was made from, while nothing changed it: its
   * typed arrays are what the renderer uploads and bundles for the first
   * frame, with no object per file or import. The nodes and edges are
   * made from it when first asked for ({@link materialize}).
   */
  private pristine: MapSnapshot | null = null;

  constructor(hash: string) {
    this.hash = hash;
    this.history.push(hash);
    this.nodeMap = new Map();
    this.edgeMap = new Map();
  }

  /**
   * The model of a snapshot. Only its folders are made now; its nodes and
   * edges (an object each) when first needed, so that the first frame,
   * drawn from the snapshot's arrays, does not wait for them.
   */
  static fromSnapshot(snapshot: MapSnapshot): MapModel {
    const model = new MapModel(snapshot.hash);
    model.nodeMap = null;
    model.edgeMap = null;
    model.pristine = snapshot;
    for (const f of snapshot.folders) {
      const rect = { x: f.x, y: f.y, w: f.w, h: f.h };
      // An annex repeats its folder's path: another rectangle of the same folder.
      const held = model.folders.get(f.path);
      if (held) held.rects.push(rect);
      else model.folders.set(f.path, { path: f.path, parent: f.parent === null ? null : (snapshot.folders[f.parent]?.path ?? ''), rects: [rect] });
    }
    model.nextId = snapshot.paths.length;
    return model;
  }

  /** The files on the map, by path. */
  get nodes(): Map<string, MapNode> {
    return this.nodeMap ?? this.materialize().nodes;
  }

  /** The import pairs, by their ends' ids. */
  get edges(): Map<number, MapEdge> {
    return this.edgeMap ?? this.materialize().edges;
  }

  /** How many files (without making their objects). */
  get nodeCount(): number {
    return this.nodeMap?.size ?? this.pristine?.paths.length ?? 0;
  }

  /** How many import pairs (without making their objects). */
  get edgeCount(): number {
    return this.edgeMap?.size ?? this.pristine?.edgeCount.length ?? 0;
  }

  /** The snapshot's arrays while the model is exactly that snapshot (no delta applied yet); else null. */
  snapshot(): MapSnapshot | null {
    return this.pristine;
  }

  /** Whether the nodes and edges are objects yet. */
  materialized(): boolean {
    return this.nodeMap !== null;
  }

  /** Files per language (index into LANGUAGES). */
  languageCounts(): number[] {
    const counts = new Array<number>(LANGUAGES.length).fill(0);
    if (this.pristine && !this.nodeMap) {
      for (const lang of this.pristine.language) counts[lang] = (counts[lang] ?? 0) + 1;
    } else {
      for (const node of this.list()) counts[node.lang] = (counts[node.lang] ?? 0) + 1;
    }
    return counts;
  }

  /** Makes the snapshot's nodes and edges (once). */
  materialize(): { nodes: Map<string, MapNode>; edges: Map<number, MapEdge> } {
    if (this.nodeMap && this.edgeMap) return { nodes: this.nodeMap, edges: this.edgeMap };
    const snapshot = this.pristine;
    const nodes = new Map<string, MapNode>();
    const edges = new Map<number, MapEdge>();
    this.nodeMap = nodes;
    this.edgeMap = edges;
    if (!snapshot) return { nodes, edges };
    const folders = snapshot.folders;
    const list: MapNode[] = snapshot.paths.map((path, i) => ({
      id: i,
      path,
      x: snapshot.positions[2 * i] ?? 0,
      y: snapshot.positions[2 * i + 1] ?? 0,
      lang: snapshot.language[i] ?? LANGUAGES.length - 1,
      folder: folders[snapshot.nodeFolder[i] ?? 0]?.path ?? '',
      out: 0,
      in: 0,
      bornAt: -Infinity,
    }));
    for (const node of list) nodes.set(node.path, node);
    for (let i = 0; i < snapshot.edgeCount.length; i += 1) {
      const from = list[snapshot.edges[2 * i] ?? 0];
      const to = list[snapshot.edges[2 * i + 1] ?? 0];
      if (!from || !to) continue;
      this.link(from, to, snapshot.edgeCount[i] ?? 1);
    }
    this.nodeList = list;
    return { nodes, edges };
  }

  /** The nodes, in insertion order (cached until the next change). */
  list(): MapNode[] {
    this.nodeList ??= Array.from(this.nodes.values());
    return this.nodeList;
  }

  /** Whether this model already holds the graph `hash` (now or earlier). */
  knows(hash: string): boolean {
    return this.history.includes(hash);
  }

  private link(a: MapNode, b: MapNode, count: number): void {
    if (a === b) return;
    const key = edgeKey(a, b);
    const held = this.edges.get(key);
    if (held) {
      held.count = count;
      return;
    }
    this.edges.set(key, { from: a, to: b, count });
    a.out += 1;
    b.in += 1;
  }

  private setEdge(from: string, to: string, count: number): void {
    const a = this.nodes.get(from);
    const b = this.nodes.get(to);
    if (a && b) this.link(a, b, count);
  }

  private unlink(a: MapNode, b: MapNode): void {
    if (!this.edges.delete(edgeKey(a, b))) return;
    a.out -= 1;
    b.in -= 1;
  }

  private removeEdge(from: string, to: string): void {
    const a = this.nodes.get(from);
    const b = this.nodes.get(to);
    if (a && b) this.unlink(a, b);
  }

  /** Applies a delta that chains (`previousHash` is this model's hash). */
  apply(delta: MapDeltaMessage, now: number): void {
    this.materialize();
    this.pristine = null;
    for (const path of delta.edgesRemoved.map((e) => [e.from, e.to] as const)) this.removeEdge(path[0], path[1]);
    const removed = new Set(delta.removed);
    if (removed.size > 0) {
      for (const edge of Array.from(this.edges.values())) {
        if (removed.has(edge.from.path) || removed.has(edge.to.path)) this.unlink(edge.from, edge.to);
      }
    }
    for (const path of delta.removed) {
      const node = this.nodes.get(path);
      if (!node) continue;
      this.nodes.delete(path);
      this.fading.push({ node, diedAt: now });
    }
    for (const folder of delta.folders) {
      const rect = { x: folder.x, y: folder.y, w: folder.w, h: folder.h };
      const held = this.folders.get(folder.path);
      if (held) {
        const last = held.rects[held.rects.length - 1];
        // A folder that grew in place replaces its rectangle; an annex adds one.
        if (last && last.x === rect.x && last.y === rect.y) held.rects[held.rects.length - 1] = rect;
        else held.rects.push(rect);
      } else {
        this.folders.set(folder.path, { path: folder.path, parent: folder.parent ?? parentOf(folder.path), rects: [rect] });
      }
    }
    for (const path of delta.foldersRemoved) this.folders.delete(path);
    for (const a of delta.added) {
      const held = this.nodes.get(a.path);
      if (held) {
        held.x = a.x;
        held.y = a.y;
        held.lang = languageIndex(a.language);
        held.folder = a.folder;
        continue;
      }
      this.fading = this.fading.filter((f) => f.node.path !== a.path);
      this.nodes.set(a.path, { id: this.nextId++, path: a.path, x: a.x, y: a.y, lang: languageIndex(a.language), folder: a.folder, out: 0, in: 0, bornAt: now });
    }
    for (const e of delta.edgesAdded) this.setEdge(e.from, e.to, Math.max(1, e.count));
    this.hash = delta.hash;
    this.history.push(delta.hash);
    if (this.history.length > HISTORY) this.history.shift();
    this.touch();
  }

  /** Drops the removed nodes whose fade has ended; true while some still fade. */
  prune(now: number): boolean {
    const before = this.fading.length;
    this.fading = this.fading.filter((f) => now - f.diedAt < FADE_MS);
    if (this.fading.length !== before) this.version += 1;
    return this.fading.length > 0;
  }

  /** Whether an effect (a fade) is running at `now`. */
  animating(now: number): boolean {
    if (this.fading.some((f) => now - f.diedAt < FADE_MS)) return true;
    // A snapshot's files are all there from the start (no delta yet: none fades in).
    if (this.pristine) return false;
    for (const node of this.list()) if (now - node.bornAt < FADE_MS) return true;
    return false;
  }

  touch(): void {
    this.version += 1;
    this.nodeList = null;
  }
}

export function parentOf(path: string): string | null {
  if (path === '') return null;
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

export interface MapSyncOptions {
  /** Fetches `/map` (the body). */
  fetchMap: () => Promise<ArrayBuffer>;
  /** Called with the model after each change (a new snapshot: `fresh`). */
  onChange: (model: MapModel, fresh: boolean) => void;
  /** Called when the map cannot be loaded (null once it can again). */
  onError: (message: string | null) => void;
  now?: () => number;
}

/**
 * Keeps a {@link MapModel} in step with the host: one fetch at a time,
 * deltas held during it, a refetch whenever the chain breaks.
 */
export class MapSync {
  model: MapModel | null = null;
  /** Fetches made (for tests and inspection). */
  fetches = 0;
  private fetching = false;
  private again = false;
  private held: MapDeltaMessage[] = [];
  private readonly now: () => number;

  constructor(private readonly options: MapSyncOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Fetches the snapshot (again, after the running fetch, when one runs). */
  refetch(): void {
    if (this.fetching) {
      this.again = true;
      return;
    }
    void this.fetch();
  }

  isFetching(): boolean {
    return this.fetching;
  }

  receive(message: MapMessage): void {
    if (message.type !== 'mapDelta') {
      this.refetch();
      return;
    }
    if (this.fetching || !this.model) {
      this.held.push(message);
      if (!this.fetching) this.refetch();
      return;
    }
    this.applyLive(message);
  }

  private applyLive(delta: MapDeltaMessage): void {
    const model = this.model;
    if (!model) return;
    if (delta.previousHash === model.hash) {
      model.apply(delta, this.now());
      this.options.onChange(model, false);
    } else if (!model.knows(delta.hash)) {
      // Neither chained nor already held: the page missed something.
      this.held.push(delta);
      this.refetch();
    }
  }

  private async fetch(): Promise<void> {
    this.fetching = true;
    this.fetches += 1;
    let model: MapModel | null = null;
    try {
      const body = await this.options.fetchMap();
      model = MapModel.fromSnapshot(decodeMap(body));
      this.options.onError(null);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      this.options.onError(text);
    }
    this.fetching = false;
    if (this.again) {
      this.again = false;
      void this.fetch();
      return;
    }
    if (!model) {
      this.held = [];
      return;
    }
    this.model = model;
    const held = this.held;
    this.held = [];
    // Those up to the last one the snapshot already holds are dropped.
    let start = 0;
    held.forEach((d, i) => {
      if (d.hash === model.hash) start = i + 1;
    });
    const rest = held.slice(start);
    const first = rest.findIndex((d) => d.previousHash === model.hash);
    this.options.onChange(model, true);
    // None chains: they are all older than the snapshot.
    if (first < 0) return;
    for (const delta of rest.slice(first)) {
      if (this.isFetching()) {
        this.held.push(delta);
        continue;
      }
      this.applyLive(delta);
    }
  }
}
