/**
 * Level of detail: what the map draws at a zoom. At an overview zoom the
 * imports are bundled between folders (one line per folder pair, at a
 * folder depth that fits the zoom); zoomed in, the file-level imports with
 * an end in view, and a few hundred labels chosen on a screen grid.
 * Pure functions of the model and the camera, no DOM.
 */
import { viewRect, worldToScreen, type Camera } from './camera';
import type { MapSnapshot } from './decode';
import type { MapFolderRegion, MapModel, MapNode, Rect } from './model';

/** From this zoom (CSS px per file cell) on, imports are drawn file to file. */
export const FILE_EDGE_ZOOM = 6;
/** From this zoom on, files get labels. */
export const LABEL_ZOOM = 14;
/** At most this many labels (files and folders). */
export const MAX_LABELS = 300;
/** The label grid's cell, CSS px. */
export const LABEL_CELL = { w: 100, h: 22 };
/** A label's width, estimated (CSS px per character at 11-12 px). */
export const CHAR_PX = 6.5;
/** Half a label's height (CSS px): its text is drawn centred on its `sy` (12 px type). */
export const LABEL_HALF_H = 7;
/** At most this many file-level lines are drawn (those nearest first are not sorted: any end in view). */
export const MAX_FILE_EDGES = 60000;

export interface Bundle {
  ax: number;
  ay: number;
  bx: number;
  by: number;
  /** Graph edges the line stands for (both directions). */
  count: number;
}

/** At most this many bundles are drawn, the strongest (a wide quad crossing the view costs fill). */
export const MAX_BUNDLES = 2000;

/** Up to this many imports, a graph is always drawn file to file. */
export const SMALL_GRAPH_EDGES = 400;

/** Whether imports are drawn file to file (else bundled between folders): a small graph, or zoomed in past the overview. */
export function fileLevel(zoom: number, fitZoom: number, edges: number): boolean {
  return edges <= SMALL_GRAPH_EDGES || (zoom >= FILE_EDGE_ZOOM && zoom >= 2 * fitZoom);
}

/** A folder's depth: 0 for the root, 1 for a top-level folder, one more per `/`. */
export function depthOf(folder: string): number {
  if (folder === '') return 0;
  let depth = 1;
  for (let at = folder.indexOf('/'); at >= 0; at = folder.indexOf('/', at + 1)) depth += 1;
  return depth;
}

/** The folder depth whose regions fit the zoom: 1 (top-level) at the overview, one more per doubling. */
export function bundleDepth(zoom: number, fitZoom: number, maxDepth: number): number {
  const d = 1 + Math.floor(Math.log2(Math.max(1, zoom / Math.max(fitZoom, 1e-9))));
  return Math.max(1, Math.min(d, Math.max(1, maxDepth)));
}

function ancestor(folder: string, depth: number): string {
  if (folder === '' || depth <= 0) return '';
  let at = -1;
  for (let i = 0; i < depth; i += 1) {
    at = folder.indexOf('/', at + 1);
    if (at < 0) return folder;
  }
  return folder.slice(0, at);
}

/** Keeps the `max` strongest of `all`. */
function strongest(all: Bundle[], max: number): Bundle[] {
  if (all.length <= max) return all;
  all.sort((a, b) => b.count - a.count);
  return all.slice(0, max);
}

/** Imports between folders at `depth`: one line per unordered pair between their regions' centres, the `max` strongest. */
export function bundleEdges(model: MapModel, depth: number, max = MAX_BUNDLES): Bundle[] {
  const snapshot = model.snapshot();
  return snapshot ? bundleSnapshot(snapshot, depth, max) : bundleObjects(model, depth, max);
}

/** {@link bundleEdges} from the model's node and edge objects (a model that deltas changed). */
export function bundleObjects(model: MapModel, depth: number, max = MAX_BUNDLES): Bundle[] {
  const centre = new Map<string, [number, number]>();
  for (const folder of model.folders.values()) {
    const r = folder.rects[0];
    if (r) centre.set(folder.path, [r.x + r.w / 2, r.y + r.h / 2]);
  }
  // Groups are numbered (a folder at `depth` by its path; a file at the
  // root is its own group) so that a pair's key is one number.
  const groupIds = new Map<string, number>();
  const groupOf = new Map<string, number>();
  const groupCentre: [number, number][] = [];
  const fileGroup = new Map<MapNode, number>();
  const group = (node: MapNode): number => {
    let g = groupOf.get(node.folder);
    if (g === undefined) {
      const path = ancestor(node.folder, depth);
      if (path === '') g = -1;
      else {
        g = groupIds.get(path);
        if (g === undefined) {
          g = groupCentre.length;
          groupIds.set(path, g);
          groupCentre.push(centre.get(path) ?? [node.x, node.y]);
        }
      }
      groupOf.set(node.folder, g);
    }
    if (g >= 0) return g;
    let own = fileGroup.get(node);
    if (own === undefined) {
      own = groupCentre.length;
      fileGroup.set(node, own);
      groupCentre.push([node.x, node.y]);
    }
    return own;
  };
  const pairs = new Map<number, Bundle>();
  for (const edge of model.edges.values()) {
    const ga = group(edge.from);
    const gb = group(edge.to);
    if (ga === gb) continue;
    const lo = Math.min(ga, gb);
    const hi = Math.max(ga, gb);
    const key = lo * 0x4000000 + hi;
    const held = pairs.get(key);
    if (held) {
      held.count += edge.count;
      continue;
    }
    const ca = groupCentre[lo] ?? [0, 0];
    const cb = groupCentre[hi] ?? [0, 0];
    pairs.set(key, { ax: ca[0], ay: ca[1], bx: cb[0], by: cb[1], count: edge.count });
  }
  return strongest(Array.from(pairs.values()), max);
}

/**
 * {@link bundleEdges} straight from a snapshot's arrays (the first frame
 * of a fetched map): folder entries and nodes by index, no object per
 * file or import.
 */
export function bundleSnapshot(snapshot: MapSnapshot, depth: number, max = MAX_BUNDLES): Bundle[] {
  const folders = snapshot.folders;
  const f = folders.length;
  const n = snapshot.paths.length;
  // Each entry's region entry (an annex names its folder's region by path).
  const regionOf = new Int32Array(f);
  const regionByPath = new Map<string, number>();
  for (let i = 0; i < f; i += 1) {
    const path = folders[i]?.path ?? '';
    const region = regionByPath.get(path);
    if (region === undefined) {
      regionByPath.set(path, i);
      regionOf[i] = i;
    } else regionOf[i] = region;
  }
  // Depth of each region entry (parents are region entries, the root is entry 0).
  const depthAt = new Int32Array(f).fill(-1);
  depthAt[0] = 0;
  const depthOfEntry = (i: number): number => {
    let j = i;
    let steps = 0;
    while ((depthAt[j] ?? 0) < 0 && steps <= f) {
      j = folders[j]?.parent ?? 0;
      steps += 1;
    }
    let d = (depthAt[j] ?? 0) + steps;
    let k = i;
    while ((depthAt[k] ?? 0) < 0) {
      depthAt[k] = d;
      d -= 1;
      k = folders[k]?.parent ?? 0;
    }
    return depthAt[i] ?? 0;
  };
  // Each entry's group: the region entry of its ancestor at `depth` (itself
  // when shallower); -1 for the root (its files are their own groups).
  const groupOfEntry = new Int32Array(f);
  for (let i = 0; i < f; i += 1) {
    let g = regionOf[i] ?? 0;
    let d = depthOfEntry(g);
    while (d > depth) {
      g = regionOf[folders[g]?.parent ?? 0] ?? 0;
      d -= 1;
    }
    groupOfEntry[i] = g === 0 ? -1 : g;
  }
  const centreX = (g: number): number => {
    const r = folders[g];
    return r ? r.x + r.w / 2 : 0;
  };
  const centreY = (g: number): number => {
    const r = folders[g];
    return r ? r.y + r.h / 2 : 0;
  };
  const { edges, edgeCount, nodeFolder, positions } = snapshot;
  const pairs = new Map<number, Bundle>();
  for (let i = 0; i < edgeCount.length; i += 1) {
    const a = edges[2 * i] ?? 0;
    const b = edges[2 * i + 1] ?? 0;
    // Groups: folders 0..f-1, a root file f + its index.
    const fa = groupOfEntry[nodeFolder[a] ?? 0] ?? -1;
    const fb = groupOfEntry[nodeFolder[b] ?? 0] ?? -1;
    const ga = fa >= 0 ? fa : f + a;
    const gb = fb >= 0 ? fb : f + b;
    if (ga === gb) continue;
    const count = edgeCount[i] ?? 1;
    const lo = Math.min(ga, gb);
    const hi = Math.max(ga, gb);
    const key = lo * (f + n) + hi;
    const held = pairs.get(key);
    if (held) {
      held.count += count;
      continue;
    }
    const ax = lo < f ? centreX(lo) : (positions[2 * (lo - f)] ?? 0);
    const ay = lo < f ? centreY(lo) : (positions[2 * (lo - f) + 1] ?? 0);
    const bx = hi < f ? centreX(hi) : (positions[2 * (hi - f)] ?? 0);
    const by = hi < f ? centreY(hi) : (positions[2 * (hi - f) + 1] ?? 0);
    pairs.set(key, { ax, ay, bx, by, count });
  }
  return strongest(Array.from(pairs.values()), max);
}

const inside = (r: Rect, x: number, y: number): boolean => x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h;

/** File-level imports with at least one end in `view` (at most `max`), as x1,y1,x2,y2 quadruples. */
export function fileEdgesInView(model: MapModel, view: Rect, max = MAX_FILE_EDGES): Float32Array {
  const out = new Float32Array(4 * Math.min(model.edgeCount, max));
  let n = 0;
  const snapshot = model.snapshot();
  if (snapshot) {
    const { edges, positions } = snapshot;
    const pairs = snapshot.edgeCount.length;
    for (let i = 0; i < pairs && n < max; i += 1) {
      const a = 2 * (edges[2 * i] ?? 0);
      const b = 2 * (edges[2 * i + 1] ?? 0);
      const ax = positions[a] ?? 0;
      const ay = positions[a + 1] ?? 0;
      const bx = positions[b] ?? 0;
      const by = positions[b + 1] ?? 0;
      if (!inside(view, ax, ay) && !inside(view, bx, by)) continue;
      out[4 * n] = ax;
      out[4 * n + 1] = ay;
      out[4 * n + 2] = bx;
      out[4 * n + 3] = by;
      n += 1;
    }
    return out.subarray(0, 4 * n);
  }
  for (const edge of model.edges.values()) {
    if (n >= max) break;
    const a = edge.from;
    const b = edge.to;
    if (!inside(view, a.x, a.y) && !inside(view, b.x, b.y)) continue;
    out[4 * n] = a.x;
    out[4 * n + 1] = a.y;
    out[4 * n + 2] = b.x;
    out[4 * n + 3] = b.y;
    n += 1;
  }
  return out.subarray(0, 4 * n);
}

export interface Label {
  text: string;
  /** CSS px, where the text starts (left, middle). */
  sx: number;
  sy: number;
  kind: 'file' | 'folder';
}

export const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

const folderOrder = new WeakMap<MapModel, { version: number; folders: MapFolderRegion[] }>();

/** The folders but the root, shallow first, then by path: the order they get labels in (kept per model version). */
function labelOrder(model: MapModel): MapFolderRegion[] {
  const held = folderOrder.get(model);
  if (held?.version === model.version) return held.folders;
  const keyed = Array.from(model.folders.values())
    .filter((f) => f.path !== '')
    .map((f) => ({ f, depth: depthOf(f.path) }));
  keyed.sort((a, b) => a.depth - b.depth || (a.f.path < b.f.path ? -1 : 1));
  const folders = keyed.map((k) => k.f);
  folderOrder.set(model, { version: model.version, folders });
  return folders;
}

/**
 * Labels for what the view shows: folders whose region is wide enough on
 * screen (shallow first), then, zoomed in, files by how connected they
 * are; a label takes the grid cells its text spans on its row, and only
 * free cells; at most `max`.
 */
export function pickLabels(model: MapModel, cam: Camera, width: number, height: number, max = MAX_LABELS): Label[] {
  const cols = Math.ceil(width / LABEL_CELL.w) + 1;
  const rows = Math.ceil(height / LABEL_CELL.h) + 1;
  const taken = new Uint8Array(cols * rows);
  const labels: Label[] = [];
  const place = (text: string, sx: number, sy: number, kind: Label['kind']): void => {
    if (labels.length >= max || sx < -LABEL_CELL.w || sy < 0 || sx > width || sy > height) return;
    const c0 = Math.max(0, Math.floor(sx / LABEL_CELL.w));
    const c1 = Math.min(cols - 1, Math.floor((sx + text.length * CHAR_PX) / LABEL_CELL.w));
    // Every row the text's height reaches: a label just under a row's edge takes the row
    // below too (a nested folder's name, a few px under its parent's, was drawn over it).
    const r0 = Math.max(0, Math.floor((sy - LABEL_HALF_H) / LABEL_CELL.h));
    const r1 = Math.min(rows - 1, Math.floor((sy + LABEL_HALF_H) / LABEL_CELL.h));
    if (r0 >= rows || c0 >= cols) return;
    for (let r = r0; r <= r1; r += 1) for (let c = c0; c <= c1; c += 1) if (taken[r * cols + c]) return;
    for (let r = r0; r <= r1; r += 1) for (let c = c0; c <= c1; c += 1) taken[r * cols + c] = 1;
    labels.push({ text, sx, sy, kind });
  };
  const view = viewRect(cam, width, height);
  for (const folder of labelOrder(model)) {
    const r = folder.rects[folder.rects.length - 1];
    if (!r || r.w * cam.zoom < 60) continue;
    if (r.x > view.x + view.w || r.y > view.y + view.h || r.x + r.w < view.x || r.y + r.h < view.y) continue;
    const [sx, sy] = worldToScreen(cam, width, height, Math.max(r.x, view.x), Math.max(r.y, view.y));
    place(`${baseName(folder.path)}/`, sx + 4, sy + 10, 'folder');
  }
  if (cam.zoom < LABEL_ZOOM) return labels;
  const visible = model.list().filter((n) => inside(view, n.x, n.y));
  visible.sort((a, b) => b.in + b.out - (a.in + a.out) || (a.path < b.path ? -1 : 1));
  for (const node of visible) {
    if (labels.length >= max) break;
    const [sx, sy] = worldToScreen(cam, width, height, node.x, node.y);
    place(baseName(node.path), sx + Math.min(14, cam.zoom * 0.35) + 4, sy, 'file');
  }
  return labels;
}

/** A grid over the world for finding the file under the pointer. */
export class HitGrid {
  private readonly cells = new Map<string, MapNode[]>();
  constructor(
    nodes: readonly MapNode[],
    private readonly size = 4,
  ) {
    for (const node of nodes) {
      const key = `${Math.floor(node.x / size)},${Math.floor(node.y / size)}`;
      const cell = this.cells.get(key);
      if (cell) cell.push(node);
      else this.cells.set(key, [node]);
    }
  }

  /** The node nearest (x, y) within `radius` world units. */
  nearest(x: number, y: number, radius: number): MapNode | null {
    let best: MapNode | null = null;
    let bestD = radius * radius;
    const r = Math.ceil(radius / this.size);
    const cx = Math.floor(x / this.size);
    const cy = Math.floor(y / this.size);
    for (let i = cx - r; i <= cx + r; i += 1) {
      for (let j = cy - r; j <= cy + r; j += 1) {
        for (const node of this.cells.get(`${i},${j}`) ?? []) {
          const d = (node.x - x) ** 2 + (node.y - y) ** 2;
          if (d <= bestD) {
            bestD = d;
            best = node;
          }
        }
      }
    }
    return best;
  }
}
