export interface EncoderFixture {
  hash: string;
  nodes: { path: string; x: number; y: number; language: number; folder: number }[];
  edges: [number, number, number][];
  folders: { path: string; rect: [number, number, number, number]; parent: number | null }[];
}
export function encodeMap(fx: EncoderFixture): ArrayBuffer;
export function syntheticMap(count: number, seed?: number): EncoderFixture;
