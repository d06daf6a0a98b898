/**
 * The decoder of `GET /w/<id>/map`, the map's binary snapshot
 * (`docs/page-protocol.md`, "The map"). Every count, offset and index is
 * checked against the buffer before it is used: a bad buffer gives a
 * {@link MapDecodeError} naming what is wrong, never an out-of-range read
 * or another exception.
 */
import { LANGUAGES } from './languages';

export const MAP_MAGIC = 0x4d42524f; // "ORBM" read as a little-endian u32
export const MAP_VERSION = 1;
export const HEADER_BYTES = 32;
export const NO_PARENT = 0xffffffff;

export class MapDecodeError extends Error {
  constructor(
    /** The part of the snapshot that is wrong (`header`, `positions`, `strings`, ...). */
    readonly field: string,
    message: string,
  ) {
    super(`The map from Orbit is malformed (${field}): ${message}`);
    this.name = 'MapDecodeError';
  }
}

export interface MapFolder {
  path: string;
  x: number;
  y: number;
  w: number;
  h: number;
  /** The parent folder's index; `null` for the root. */
  parent: number | null;
}

export interface MapSnapshot {
  hash: string;
  /** Node i's path (nodes sorted by path, byte order). */
  paths: string[];
  /** x0, y0, x1, y1, ...: each node's cell centre. */
  positions: Float32Array;
  /** Index into {@link LANGUAGES}. */
  language: Uint8Array;
  /** Index of each node's folder. */
  nodeFolder: Uint32Array;
  /** from0, to0, from1, to1, ...: node indices. */
  edges: Uint32Array;
  /** How many graph edges each pair stands for. */
  edgeCount: Uint32Array;
  folders: MapFolder[];
}

const align4 = (n: number): number => (n + 3) & ~3;

/** Where each section starts, and the end; numbers, so nothing overflows (counts are u32). */
function layout(n: number, e: number, f: number, s: number, h: number): Record<string, number> {
  const at: Record<string, number> = {};
  let o = HEADER_BYTES;
  at.hash = o;
  o = align4(o + h);
  at.positions = o;
  o += 8 * n;
  at.language = o;
  o = align4(o + n);
  at.nodeFolder = o;
  o += 4 * n;
  at.nodeName = o;
  o += 4 * n;
  at.edges = o;
  o += 8 * e;
  at.edgeCount = o;
  o += 4 * e;
  at.folderRect = o;
  o += 16 * f;
  at.folderParent = o;
  o += 4 * f;
  at.folderName = o;
  o += 4 * f;
  at.strings = o;
  at.end = o + s;
  return at;
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function u32s(buf: ArrayBuffer, offset: number, count: number): Uint32Array {
  if (littleEndian) return new Uint32Array(buf, offset, count);
  const view = new DataView(buf, offset, count * 4);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i += 1) out[i] = view.getUint32(i * 4, true);
  return out;
}

function f32s(buf: ArrayBuffer, offset: number, count: number): Float32Array {
  if (littleEndian) return new Float32Array(buf, offset, count);
  const view = new DataView(buf, offset, count * 4);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 1) out[i] = view.getFloat32(i * 4, true);
  return out;
}

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8(bytes: Uint8Array, field: string, what: string): string {
  try {
    return fatal.decode(bytes);
  } catch {
    throw new MapDecodeError(field, `${what} is not valid UTF-8`);
  }
}

/** Whether `a` sorts strictly before `b` in byte order. */
function bytesBefore(area: Uint8Array, a0: number, a1: number, b0: number, b1: number): boolean {
  const la = a1 - a0;
  const lb = b1 - b0;
  const n = Math.min(la, lb);
  for (let i = 0; i < n; i += 1) {
    const x = area[a0 + i] ?? 0;
    const y = area[b0 + i] ?? 0;
    if (x !== y) return x < y;
  }
  return la < lb;
}

/**
 * Decodes a `/map` body. The typed arrays are views into `buf` (on a
 * little-endian machine), so the buffer must not be reused.
 */
export function decodeMap(buf: ArrayBuffer): MapSnapshot {
  if (!(buf instanceof ArrayBuffer)) throw new MapDecodeError('header', 'not an ArrayBuffer');
  if (buf.byteLength < HEADER_BYTES) {
    throw new MapDecodeError('header', `${buf.byteLength} bytes, shorter than the ${HEADER_BYTES}-byte header`);
  }
  const head = new DataView(buf, 0, HEADER_BYTES);
  if (head.getUint32(0, true) !== MAP_MAGIC) throw new MapDecodeError('magic', 'it does not start with "ORBM"');
  const version = head.getUint32(4, true);
  if (version !== MAP_VERSION) {
    throw new MapDecodeError('version', `format version ${version}, this page reads version ${MAP_VERSION} (reload the page or update Orbit)`);
  }
  const n = head.getUint32(8, true);
  const e = head.getUint32(12, true);
  const f = head.getUint32(16, true);
  const s = head.getUint32(20, true);
  const h = head.getUint32(24, true);
  if (head.getUint32(28, true) !== 0) throw new MapDecodeError('header', 'the reserved word is not 0');
  if (f < 1) throw new MapDecodeError('folderCount', 'no root folder');
  const at = layout(n, e, f, s, h);
  const end = at.end ?? 0;
  // The last section is the string area; at most 3 bytes of padding may follow it.
  if (end > buf.byteLength) {
    throw new MapDecodeError('counts', `${n} nodes, ${e} edges, ${f} folders and ${s} string bytes need ${end} bytes; the body has ${buf.byteLength}`);
  }
  if (buf.byteLength - end > 3) {
    throw new MapDecodeError('counts', `${buf.byteLength - end} bytes after the string area`);
  }

  const bytes = new Uint8Array(buf);
  const hashBytes = bytes.subarray(at.hash, (at.hash ?? 0) + h);
  for (const b of hashBytes) {
    const hex = (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
    if (!hex) throw new MapDecodeError('hash', 'not ASCII hex');
  }
  const hash = fatal.decode(hashBytes);

  const positions = f32s(buf, at.positions ?? 0, 2 * n);
  for (let i = 0; i < positions.length; i += 1) {
    if (!Number.isFinite(positions[i])) throw new MapDecodeError('positions', `node ${i >> 1} has a non-finite coordinate`);
  }
  const language = bytes.subarray(at.language, (at.language ?? 0) + n);
  for (let i = 0; i < n; i += 1) {
    if ((language[i] ?? 0) >= LANGUAGES.length) throw new MapDecodeError('language', `node ${i} has language ${language[i]}, past the ${LANGUAGES.length} known`);
  }
  const nodeFolder = u32s(buf, at.nodeFolder ?? 0, n);
  for (let i = 0; i < n; i += 1) {
    if ((nodeFolder[i] ?? 0) >= f) throw new MapDecodeError('nodeFolder', `node ${i} names folder ${nodeFolder[i]}, past the ${f} folders`);
  }
  const nodeName = u32s(buf, at.nodeName ?? 0, n);
  const edges = u32s(buf, at.edges ?? 0, 2 * e);
  for (let i = 0; i < e; i += 1) {
    const from = edges[2 * i] ?? 0;
    const to = edges[2 * i + 1] ?? 0;
    if (from >= n || to >= n) throw new MapDecodeError('edges', `edge ${i} names node ${Math.max(from, to)}, past the ${n} nodes`);
    if (from === to) throw new MapDecodeError('edges', `edge ${i} goes from node ${from} to itself`);
  }
  const edgeCount = u32s(buf, at.edgeCount ?? 0, e);
  for (let i = 0; i < e; i += 1) {
    if ((edgeCount[i] ?? 0) < 1) throw new MapDecodeError('edgeCount', `edge ${i} stands for no edge`);
  }
  const folderRect = f32s(buf, at.folderRect ?? 0, 4 * f);
  for (let i = 0; i < folderRect.length; i += 1) {
    if (!Number.isFinite(folderRect[i])) throw new MapDecodeError('folderRect', `folder ${i >> 2} has a non-finite rectangle`);
  }
  const folderParent = u32s(buf, at.folderParent ?? 0, f);
  const folderName = u32s(buf, at.folderName ?? 0, f);

  const area = bytes.subarray(at.strings, end);
  // All ASCII (the usual case) when the decoded text has one character per
  // byte: then a path's bytes are its characters and it is sliced from the
  // whole; otherwise each is decoded (and checked) alone.
  let whole = '';
  try {
    whole = fatal.decode(area);
  } catch {
    whole = '';
  }
  const ascii = whole.length === area.length;
  const text = (from: number, to: number, field: string, what: string): string =>
    ascii ? whole.slice(from, to) : utf8(area.subarray(from, to), field, what);

  const paths = new Array<string>(n);
  let prev = 0;
  let prevStart = 0;
  for (let i = 0; i < n; i += 1) {
    const stop = nodeName[i] ?? 0;
    if (stop < prev) throw new MapDecodeError('nodeName', `node ${i}'s path ends at ${stop}, before the previous one's end ${prev}`);
    if (stop > s) throw new MapDecodeError('nodeName', `node ${i}'s path ends at ${stop}, past the ${s}-byte string area`);
    if (stop === prev) throw new MapDecodeError('nodeName', `node ${i}'s path is empty`);
    if (i > 0 && !bytesBefore(area, prevStart, prev, prev, stop)) {
      throw new MapDecodeError('nodeName', `node ${i}'s path does not sort after node ${i - 1}'s`);
    }
    paths[i] = text(prev, stop, 'strings', `node ${i}'s path`);
    prevStart = prev;
    prev = stop;
  }
  const folders = new Array<MapFolder>(f);
  for (let i = 0; i < f; i += 1) {
    const stop = folderName[i] ?? 0;
    if (stop < prev) throw new MapDecodeError('folderName', `folder ${i}'s path ends at ${stop}, before the previous path's end ${prev}`);
    if (stop > s) throw new MapDecodeError('folderName', `folder ${i}'s path ends at ${stop}, past the ${s}-byte string area`);
    const parent = folderParent[i] ?? 0;
    if (i === 0) {
      if (parent !== NO_PARENT) throw new MapDecodeError('folderParent', 'the root folder has a parent');
      if (stop !== prev) throw new MapDecodeError('folderName', 'the root folder\'s path is not ""');
    } else if (parent >= f || parent === i) {
      throw new MapDecodeError('folderParent', `folder ${i} names parent ${parent === NO_PARENT ? 'none' : parent}; only the root has none`);
    }
    folders[i] = {
      path: text(prev, stop, 'strings', `folder ${i}'s path`),
      x: folderRect[4 * i] ?? 0,
      y: folderRect[4 * i + 1] ?? 0,
      w: folderRect[4 * i + 2] ?? 0,
      h: folderRect[4 * i + 3] ?? 0,
      parent: i === 0 ? null : parent,
    };
    prev = stop;
  }
  if (prev !== s) throw new MapDecodeError('strings', `${s - prev} bytes of the string area belong to no path`);
  // Every folder reaches the root (no cycle).
  const depth = new Int32Array(f).fill(-1);
  depth[0] = 0;
  for (let i = 1; i < f; i += 1) {
    let j = i;
    let steps = 0;
    while ((depth[j] ?? 0) < 0) {
      j = folders[j]?.parent ?? 0;
      steps += 1;
      if (steps > f) throw new MapDecodeError('folderParent', `folder ${i}'s parents form a cycle`);
    }
    // Fill in the chain's depths.
    let d = (depth[j] ?? 0) + steps;
    let k = i;
    while ((depth[k] ?? 0) < 0) {
      depth[k] = d;
      d -= 1;
      k = folders[k]?.parent ?? 0;
    }
  }
  return { hash, paths, positions, language, nodeFolder, edges, edgeCount, folders };
}
