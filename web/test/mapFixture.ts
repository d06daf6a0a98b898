/** Builds `/map` bodies by hand, byte by byte as docs/page-protocol.md ("The map") lays them out. */
export interface FixtureNode {
  path: string;
  x: number;
  y: number;
  language: number;
  folder: number;
}

export interface FixtureFolder {
  path: string;
  rect: [number, number, number, number];
  parent: number | null;
}

export interface Fixture {
  hash: string;
  nodes: FixtureNode[];
  edges: [number, number, number][];
  folders: FixtureFolder[];
}

const pad4 = (n: number): number => (n + 3) & ~3;

export function encodeMap(fx: Fixture): ArrayBuffer {
  const enc = new TextEncoder();
  const n = fx.nodes.length;
  const e = fx.edges.length;
  const f = fx.folders.length;
  const hash = enc.encode(fx.hash);
  const nodePaths = fx.nodes.map((node) => enc.encode(node.path));
  const folderPaths = fx.folders.map((folder) => enc.encode(folder.path));
  const s = [...nodePaths, ...folderPaths].reduce((sum, b) => sum + b.length, 0);
  let size = 32;
  size = pad4(size + hash.length);
  size += 8 * n;
  size = pad4(size + n);
  size += 4 * n + 4 * n + 8 * e + 4 * e + 16 * f + 4 * f + 4 * f + s;
  const buf = new ArrayBuffer(size);
  const v = new DataView(buf);
  const bytes = new Uint8Array(buf);
  [0x4f, 0x52, 0x42, 0x4d].forEach((b, i) => v.setUint8(i, b));
  v.setUint32(4, 1, true);
  v.setUint32(8, n, true);
  v.setUint32(12, e, true);
  v.setUint32(16, f, true);
  v.setUint32(20, s, true);
  v.setUint32(24, hash.length, true);
  v.setUint32(28, 0, true);
  let o = 32;
  bytes.set(hash, o);
  o = pad4(o + hash.length);
  for (const node of fx.nodes) {
    v.setFloat32(o, node.x, true);
    v.setFloat32(o + 4, node.y, true);
    o += 8;
  }
  fx.nodes.forEach((node, i) => v.setUint8(o + i, node.language));
  o = pad4(o + n);
  for (const node of fx.nodes) {
    v.setUint32(o, node.folder, true);
    o += 4;
  }
  let end = 0;
  for (const p of nodePaths) {
    end += p.length;
    v.setUint32(o, end, true);
    o += 4;
  }
  for (const [from, to] of fx.edges) {
    v.setUint32(o, from, true);
    v.setUint32(o + 4, to, true);
    o += 8;
  }
  for (const [, , count] of fx.edges) {
    v.setUint32(o, count, true);
    o += 4;
  }
  for (const folder of fx.folders) {
    folder.rect.forEach((x, i) => v.setFloat32(o + 4 * i, x, true));
    o += 16;
  }
  for (const folder of fx.folders) {
    v.setUint32(o, folder.parent ?? 0xffffffff, true);
    o += 4;
  }
  for (const p of folderPaths) {
    end += p.length;
    v.setUint32(o, end, true);
    o += 4;
  }
  for (const p of [...nodePaths, ...folderPaths]) {
    bytes.set(p, o);
    o += p.length;
  }
  return buf;
}

/** A small workspace: the root, `src`, `src/ui` and `docs`, five files, four edges. */
export function sampleFixture(): Fixture {
  return {
    hash: 'a1b2c3',
    nodes: [
      { path: 'README.md', x: 0.5, y: 0.5, language: 9, folder: 0 },
      { path: 'docs/guide.md', x: 10.5, y: 0.5, language: 9, folder: 3 },
      { path: 'src/main.ts', x: 0.5, y: 4.5, language: 0, folder: 1 },
      { path: 'src/ui/app.ts', x: 4.5, y: 4.5, language: 0, folder: 2 },
      { path: 'src/ui/é.ts', x: 5.5, y: 4.5, language: 0, folder: 2 },
    ],
    edges: [
      [2, 3, 1],
      [3, 4, 2],
      [2, 4, 1],
      [1, 0, 1],
    ],
    folders: [
      { path: '', rect: [0, 0, 16, 10], parent: null },
      { path: 'src', rect: [0, 4, 8, 4], parent: 0 },
      { path: 'src/ui', rect: [4, 4, 4, 4], parent: 1 },
      { path: 'docs', rect: [10, 0, 4, 2], parent: 0 },
    ],
  };
}

/** A seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
