// A stand-in for the page's decoder (web/src/scene/decode.ts), used by the
// vite build ONLY when that file does not exist (the bench's result JSON then
// says `decoder: "stand-in"`). It reads the `/map` binary of
// docs/page-protocol.md ("The map") with bounds checks and returns the
// fields the bench pages draw.

/** The fields of the page's `MapSnapshot` that the bench pages read. */
export interface StandInMap {
  hash: string;
  paths: string[];
  positions: Float32Array;
  language: Uint8Array;
  edges: Uint32Array;
  folders: { path: string; x: number; y: number; w: number; h: number; parent: number | null }[];
}

const align4 = (n: number): number => (n + 3) & ~3;

export function decodeMap(buf: ArrayBuffer): StandInMap {
  const view = new DataView(buf);
  if (buf.byteLength < 32) throw new Error('map: shorter than its header');
  if (view.getUint32(0, false) !== 0x4f52424d) throw new Error('map: bad magic');
  if (view.getUint32(4, true) !== 1) throw new Error('map: unknown version');
  const n = view.getUint32(8, true);
  const e = view.getUint32(12, true);
  const f = view.getUint32(16, true);
  const s = view.getUint32(20, true);
  const h = view.getUint32(24, true);
  let at = 32;
  const take = (bytes: number): number => {
    const start = at;
    if (start + bytes > buf.byteLength) throw new Error('map: a section passes the end');
    at = align4(start + bytes);
    return start;
  };
  const hashAt = take(h);
  const positions = new Float32Array(buf, take(8 * n), 2 * n);
  const language = new Uint8Array(buf, take(n), n);
  take(4 * n); // nodeFolder
  const nodeName = new Uint32Array(buf, take(4 * n), n);
  const edges = new Uint32Array(buf, take(8 * e), 2 * e);
  take(4 * e); // edgeCount
  const folderRect = new Float32Array(buf, take(16 * f), 4 * f);
  take(4 * f); // folderParent
  take(4 * f); // folderName
  const stringsAt = take(s);
  for (const v of edges) if (v >= n) throw new Error('map: an edge names no node');
  for (const v of positions) if (!Number.isFinite(v)) throw new Error('map: a position is not finite');
  const text = new TextDecoder('utf-8', { fatal: true });
  const strings = new Uint8Array(buf, stringsAt, s);
  const paths: string[] = [];
  let start = 0;
  for (const end of nodeName) {
    if (end < start || end > s) throw new Error('map: a name offset decreases or passes the strings');
    paths.push(text.decode(strings.subarray(start, end)));
    start = end;
  }
  const hash = text.decode(new Uint8Array(buf, hashAt, h));
  const folders = [];
  for (let i = 0; i < f; i += 1) {
    const [x = 0, y = 0, w = 0, hh = 0] = folderRect.subarray(4 * i, 4 * i + 4);
    folders.push({ path: '', x, y, w, h: hh, parent: null });
  }
  return { hash, paths, positions, language, edges, folders };
}
