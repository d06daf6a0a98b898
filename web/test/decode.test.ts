import { describe, expect, it } from 'vitest';
import { MapDecodeError, decodeMap } from '../src/scene/decode';
import { encodeMap, rng, sampleFixture, type Fixture, type FixtureFolder, type FixtureNode } from './mapFixture';

function refused(buf: ArrayBuffer): MapDecodeError {
  try {
    decodeMap(buf);
  } catch (error) {
    expect(error).toBeInstanceOf(MapDecodeError);
    return error as MapDecodeError;
  }
  throw new Error('the decoder took it');
}

function node(c: Fixture, i: number): FixtureNode {
  const n = c.nodes[i];
  if (!n) throw new Error(`no node ${i}`);
  return n;
}

function folder(c: Fixture, i: number): FixtureFolder {
  const f = c.folders[i];
  if (!f) throw new Error(`no folder ${i}`);
  return f;
}

function mutate(fx: Fixture, change: (fx: Fixture) => void): ArrayBuffer {
  const copy = structuredClone(fx);
  change(copy);
  return encodeMap(copy);
}

describe('the /map decoder', () => {
  it('decodes a hand-built snapshot', () => {
    const map = decodeMap(encodeMap(sampleFixture()));
    expect(map.hash).toBe('a1b2c3');
    expect(map.paths).toEqual(['README.md', 'docs/guide.md', 'src/main.ts', 'src/ui/app.ts', 'src/ui/é.ts']);
    expect(Array.from(map.positions)).toEqual([0.5, 0.5, 10.5, 0.5, 0.5, 4.5, 4.5, 4.5, 5.5, 4.5]);
    expect(Array.from(map.language)).toEqual([9, 9, 0, 0, 0]);
    expect(Array.from(map.nodeFolder)).toEqual([0, 3, 1, 2, 2]);
    expect(Array.from(map.edges)).toEqual([2, 3, 3, 4, 2, 4, 1, 0]);
    expect(Array.from(map.edgeCount)).toEqual([1, 2, 1, 1]);
    expect(map.folders.map((f) => [f.path, f.parent, f.x, f.y, f.w, f.h])).toEqual([
      ['', null, 0, 0, 16, 10],
      ['src', 0, 0, 4, 8, 4],
      ['src/ui', 1, 4, 4, 4, 4],
      ['docs', 0, 10, 0, 4, 2],
    ]);
  });

  it('decodes an empty workspace (the root only)', () => {
    const map = decodeMap(encodeMap({ hash: '', nodes: [], edges: [], folders: [{ path: '', rect: [0, 0, 0, 0], parent: null }] }));
    expect(map.paths).toEqual([]);
    expect(map.folders).toHaveLength(1);
  });

  it('refuses every truncation of a valid snapshot', () => {
    const whole = encodeMap(sampleFixture());
    for (let len = 0; len < whole.byteLength; len += 1) {
      const error = refused(whole.slice(0, len));
      expect(error.message).toMatch(/^The map from Orbit is malformed/);
    }
  });

  it('names what is wrong', () => {
    const fx = sampleFixture();
    const cases: [ArrayBuffer, string, RegExp][] = [
      [mutate(fx, () => {}).slice(0, 10), 'header', /shorter than the 32-byte header/],
      [(() => { const b = encodeMap(fx); new DataView(b).setUint8(0, 0x58); return b; })(), 'magic', /ORBM/],
      [(() => { const b = encodeMap(fx); new DataView(b).setUint32(4, 2, true); return b; })(), 'version', /format version 2/],
      [(() => { const b = encodeMap(fx); new DataView(b).setUint32(8, 0xffffffff, true); return b; })(), 'counts', /need \d+ bytes/],
      [(() => { const b = encodeMap(fx); new DataView(b).setUint32(28, 1, true); return b; })(), 'header', /reserved/],
      [mutate(fx, (c) => { c.hash = 'xyz!'; }), 'hash', /hex/],
      [mutate(fx, (c) => { node(c, 1).x = Number.NaN; }), 'positions', /node 1 has a non-finite/],
      [mutate(fx, (c) => { node(c, 0).y = Number.POSITIVE_INFINITY; }), 'positions', /node 0/],
      [mutate(fx, (c) => { node(c, 2).language = 17; }), 'language', /language 17/],
      [mutate(fx, (c) => { node(c, 2).folder = 4; }), 'nodeFolder', /folder 4, past the 4/],
      [mutate(fx, (c) => { c.edges[1] = [3, 5, 1]; }), 'edges', /node 5, past the 5 nodes/],
      [mutate(fx, (c) => { c.edges[1] = [3, 3, 1]; }), 'edges', /to itself/],
      [mutate(fx, (c) => { c.edges[0] = [2, 3, 0]; }), 'edgeCount', /stands for no edge/],
      [mutate(fx, (c) => { folder(c, 1).rect[2] = Number.NaN; }), 'folderRect', /folder 1/],
      [mutate(fx, (c) => { folder(c, 0).parent = 1; }), 'folderParent', /root folder has a parent/],
      [mutate(fx, (c) => { folder(c, 2).parent = null; }), 'folderParent', /only the root/],
      [mutate(fx, (c) => { folder(c, 2).parent = 9; }), 'folderParent', /parent 9/],
      [mutate(fx, (c) => { folder(c, 1).parent = 2; }), 'folderParent', /cycle/],
      [mutate(fx, (c) => { folder(c, 0).path = 'x'; }), 'folderName', /root folder's path/],
      [mutate(fx, (c) => { [c.nodes[1], c.nodes[2]] = [node(c, 2), node(c, 1)]; }), 'nodeName', /does not sort after/],
      [mutate(fx, (c) => { node(c, 1).path = node(c, 0).path; }), 'nodeName', /does not sort after/],
      [mutate(fx, (c) => { node(c, 3).path = ''; }), 'nodeName', /empty/],
    ];
    for (const [buf, field, message] of cases) {
      const error = refused(buf);
      expect(error.field, error.message).toBe(field);
      expect(error.message).toMatch(message);
    }
  });

  it('refuses offsets that decrease or pass the string area, and invalid UTF-8', () => {
    const fx = sampleFixture();
    const buf = encodeMap(fx);
    const v = new DataView(buf);
    // nodeName starts after header(32) + hash(6->8) + positions(40) + language(5->8) + nodeFolder(20).
    const nodeName = 32 + 8 + 40 + 8 + 20;
    const decreasing = buf.slice(0);
    new DataView(decreasing).setUint32(nodeName + 8, 2, true);
    expect(refused(decreasing).message).toMatch(/before the previous one's end/);
    const past = buf.slice(0);
    new DataView(past).setUint32(nodeName + 16, 10000, true);
    expect(refused(past).message).toMatch(/past the \d+-byte string area/);
    // The é of src/ui/é.ts, its first byte made a lone continuation byte.
    const bytes = new Uint8Array(buf.slice(0));
    const at = bytes.findIndex((b, i) => b === 0xc3 && bytes[i + 1] === 0xa9);
    bytes[at] = 0xff;
    expect(refused(bytes.buffer).field).toBe('strings');
    expect(v.getUint32(0, true)).toBe(0x4d42524f);
    // Bytes left after the string area.
    const longer = new Uint8Array(buf.byteLength + 8);
    longer.set(new Uint8Array(buf));
    expect(refused(longer.buffer).message).toMatch(/bytes after the string area/);
  });

  it('never throws anything but its own error on random mutations (seeded)', () => {
    const whole = new Uint8Array(encodeMap(sampleFixture()));
    const random = rng(0x0b17);
    let accepted = 0;
    for (let round = 0; round < 3000; round += 1) {
      const bytes = whole.slice();
      const flips = 1 + Math.floor(random() * 4);
      for (let k = 0; k < flips; k += 1) {
        const at = Math.floor(random() * bytes.length);
        bytes[at] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
      }
      try {
        const map = decodeMap(bytes.buffer);
        accepted += 1;
        // What it accepts is whole: every index in range.
        for (const i of map.edges) expect(i).toBeLessThan(map.paths.length);
        for (const i of map.nodeFolder) expect(i).toBeLessThan(map.folders.length);
      } catch (error) {
        expect(error, `round ${round}`).toBeInstanceOf(MapDecodeError);
      }
    }
    expect(accepted).toBeLessThan(3000);
  });
});

describe('the languages', () => {
  it('have a label and a colour each, the colours all different (the legend tells them apart)', async () => {
    const { LANGUAGES, LANGUAGE_COLOURS, LANGUAGE_LABELS, colourCss } = await import('../src/scene/languages');
    expect(Object.keys(LANGUAGE_LABELS)).toEqual([...LANGUAGES]);
    expect(LANGUAGE_COLOURS).toHaveLength(LANGUAGES.length);
    expect(new Set(LANGUAGES.map((_, i) => colourCss(i))).size).toBe(LANGUAGES.length);
  });
});
