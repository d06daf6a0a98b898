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

export { encodeMap, syntheticMap } from '../e2e/map-encoder.mjs';

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
