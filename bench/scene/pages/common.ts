// What the two baseline pages share: the graph (the SAME `/map` bytes Orbit
// served, decoded by the page's decoder), the camera fit to the root folder,
// the language palette, the first-frame mark and the inspection hook the
// bench drives (`window.orbitInspect.sceneRedraw()`, as on Orbit's page).
import { decodeMap } from 'orbit-map-decoder';

export interface BenchGraph {
  nodes: number;
  edges: number;
  /** x0,y0,x1,y1,... cell centres in world units (y down). */
  positions: Float32Array;
  /** Language index per node (Language::ALL order). */
  language: Uint8Array;
  /** from0,to0,from1,to1,... node indices. */
  edgePairs: Uint32Array;
  /** The root folder's rectangle: everything is inside it. */
  root: { x: number; y: number; w: number; h: number };
  paths: string[];
  bytes: number;
}

export async function loadGraph(): Promise<BenchGraph> {
  const url = new URLSearchParams(location.search).get('map');
  if (!url) throw new Error('no ?map= address');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const buf = await response.arrayBuffer();
  const map = decodeMap(buf);
  const root = map.folders[0] ?? { x: 0, y: 0, w: 1, h: 1 };
  return {
    nodes: map.paths.length,
    edges: map.edges.length / 2,
    positions: map.positions,
    language: map.language,
    edgePairs: map.edges,
    root: { x: root.x, y: root.y, w: root.w, h: root.h },
    paths: map.paths,
    bytes: buf.byteLength,
  };
}

/** 17 colours, one per language (typescript=0 ... text=16). */
export const PALETTE: ReadonlyArray<readonly [number, number, number]> = [
  [0.19, 0.47, 0.78], [0.94, 0.82, 0.24], [0.25, 0.6, 0.3], [0.87, 0.45, 0.2],
  [0.55, 0.35, 0.75], [0.2, 0.7, 0.7], [0.8, 0.3, 0.4], [0.5, 0.6, 0.2],
  [0.9, 0.6, 0.7], [0.4, 0.4, 0.9], [0.6, 0.4, 0.2], [0.3, 0.8, 0.5],
  [0.7, 0.7, 0.3], [0.5, 0.5, 0.5], [0.85, 0.5, 0.85], [0.35, 0.55, 0.55],
  [0.6, 0.6, 0.65],
];

export const colourOf = (language: number): readonly [number, number, number] =>
  PALETTE[language] ?? PALETTE[PALETTE.length - 1] ?? [0.6, 0.6, 0.6];

export const hex = ([r, g, b]: readonly [number, number, number]): string =>
  `#${[r, g, b].map((c) => Math.round(c * 255).toString(16).padStart(2, '0')).join('')}`;

/**
 * The map's size in CSS pixels: `?w=&h=` (the bench passes the size of
 * Orbit's map canvas, so that every page fills as many pixels), else the
 * window.
 */
export function viewSize(): { width: number; height: number } {
  const q = new URLSearchParams(location.search);
  const w = Number(q.get('w'));
  const h = Number(q.get('h'));
  return {
    width: w > 0 ? Math.min(w, window.innerWidth) : window.innerWidth,
    height: h > 0 ? Math.min(h, window.innerHeight) : window.innerHeight,
  };
}

/** Pixels per world unit when the root region fills the canvas (95%). */
export function fitScale(graph: BenchGraph, width: number, height: number): number {
  return 0.95 * Math.min(width / Math.max(graph.root.w, 1e-6), height / Math.max(graph.root.h, 1e-6));
}

/**
 * Waits for the GPU as Orbit's page does (its renderer's `finish()`): one
 * 1-pixel `readPixels`, which returns only once every command before it has
 * run. The same wait on every page keeps the comparison fair (a `finish()`
 * before it would be one more round trip to the GPU process).
 */
export function waitGpu(gl: WebGL2RenderingContext | WebGLRenderingContext): void {
  const pixel = new Uint8Array(4);
  gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
}

export interface Inspect {
  sceneRedraw: () => number;
  scene: () => Record<string, unknown>;
}

declare global {
  interface Window {
    orbitInspect?: Inspect;
    benchError?: string;
  }
}

/** Loads the graph, runs `start`, marks the first frame; a failure is shown and kept for the bench. */
export async function boot(start: (graph: BenchGraph) => Inspect): Promise<void> {
  try {
    const graph = await loadGraph();
    window.orbitInspect = start(graph);
    performance.mark('orbit:first-frame');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    window.benchError = message;
    const p = document.createElement('p');
    p.setAttribute('role', 'alert');
    p.textContent = `bench page failed: ${message}`;
    document.body.append(p);
  }
}
