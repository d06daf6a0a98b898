import { describe, expect, it } from 'vitest';
import { fitCamera, flight, panBy, screenToWorld, transformBetween, worldToScreen, zoomAt, type Camera } from '../src/scene/camera';
import { decodeMap } from '../src/scene/decode';
import { CHAR_PX, HitGrid, LABEL_CELL, LABEL_HALF_H, MAX_LABELS, bundleDepth, bundleEdges, bundleObjects, bundleSnapshot, fileEdgesInView, fileLevel, pickLabels, type Bundle } from '../src/scene/lod';
import { MapModel } from '../src/scene/model';
import { encodeMap, sampleFixture, syntheticMap, type Fixture } from './mapFixture';

const W = 800;
const H = 600;

describe('the camera', () => {
  it('maps world and screen both ways, zooms about a point, pans with the pointer', () => {
    const cam: Camera = { x: 10, y: 5, zoom: 20 };
    const [sx, sy] = worldToScreen(cam, W, H, 12, 4);
    expect([sx, sy]).toEqual([440, 280]);
    expect(screenToWorld(cam, W, H, sx, sy)).toEqual([12, 4]);
    const zoomed = zoomAt(cam, W, H, 440, 280, 2);
    expect(zoomed.zoom).toBe(40);
    expect(worldToScreen(zoomed, W, H, 12, 4)).toEqual([440, 280]);
    const panned = panBy(cam, 40, -20);
    expect(worldToScreen(panned, W, H, 12, 4)).toEqual([480, 260]);
  });

  it('the CSS transform of the last frame puts every point where the new camera shows it', () => {
    const from: Camera = { x: 3, y: 7, zoom: 12 };
    const to: Camera = { x: 9, y: -2, zoom: 30 };
    const { k, tx, ty } = transformBetween(from, to, W, H);
    for (const [wx, wy] of [[0, 0], [10, 10], [-4, 3]] as const) {
      const [x0, y0] = worldToScreen(from, W, H, wx, wy);
      const [x1, y1] = worldToScreen(to, W, H, wx, wy);
      expect(k * x0 + tx).toBeCloseTo(x1, 6);
      expect(k * y0 + ty).toBeCloseTo(y1, 6);
    }
  });

  it('fits a rectangle, and a flight ends where it was going', () => {
    const cam = fitCamera({ x: 0, y: 0, w: 100, h: 50 }, W, H, 0);
    expect(cam).toEqual({ x: 50, y: 25, zoom: 8 });
    const a: Camera = { x: 0, y: 0, zoom: 1 };
    const b: Camera = { x: 10, y: 20, zoom: 16 };
    expect(flight(a, b, 0)).toEqual(a);
    expect(flight(a, b, 1)).toEqual(b);
    expect(flight(a, b, 0.5).zoom).toBeCloseTo(4);
  });
});

describe('level of detail', () => {
  const big = MapModel.fromSnapshot(decodeMap(encodeMap(syntheticMap(3000))));
  const fit = fitCamera(big.folders.get('')?.rects[0] ?? { x: 0, y: 0, w: 1, h: 1 }, W, H);

  it('bundles imports at the overview of a large graph, draws them file to file zoomed in or when few', () => {
    expect(fileLevel(fit.zoom, fit.zoom, big.edges.size)).toBe(false);
    expect(fileLevel(Math.max(6, fit.zoom * 2), fit.zoom, big.edges.size)).toBe(true);
    expect(fileLevel(0.1, 1, 30)).toBe(true);
    expect(bundleDepth(fit.zoom, fit.zoom, 5)).toBe(1);
    expect(bundleDepth(fit.zoom * 4, fit.zoom, 5)).toBe(3);
    expect(bundleDepth(fit.zoom * 1000, fit.zoom, 2)).toBe(2);
  });

  it('one bundle per folder pair, both directions, counts summed, none inside a folder', () => {
    const bundles = bundleEdges(big, 1);
    const total = Array.from(big.edges.values()).filter((e) => e.from.path.split('/')[0] !== e.to.path.split('/')[0]).reduce((n, e) => n + e.count, 0);
    expect(bundles.reduce((n, b) => n + b.count, 0)).toBe(total);
    const pairs = new Set(bundles.map((b) => [`${b.ax},${b.ay}`, `${b.bx},${b.by}`].sort().join('|')));
    expect(pairs.size).toBe(bundles.length);
    expect(bundles.every((b) => b.ax !== b.bx || b.ay !== b.by)).toBe(true);
    // At most `max`, the strongest.
    const few = bundleEdges(big, 1, 5);
    expect(few).toHaveLength(5);
    expect(Math.min(...few.map((b) => b.count))).toBeGreaterThanOrEqual(Math.max(...bundles.map((b) => b.count).sort((a, b) => b - a).slice(5)));
  });

  it('bundles the same from the snapshot\'s arrays as from the objects: root files, annexes, every depth', () => {
    // The sample, plus an annex of src/ui far away holding é.ts, a deeper
    // folder under it, and a second root file.
    const fx: Fixture = sampleFixture();
    fx.folders.push({ path: 'src/ui', rect: [20, 20, 2, 2], parent: 1 });
    fx.folders.push({ path: 'src/ui/deep', rect: [30, 30, 3, 3], parent: 2 });
    fx.nodes[4] = { path: 'src/ui/é.ts', x: 20.5, y: 20.5, language: 0, folder: 4 };
    fx.nodes.splice(4, 0, { path: 'src/ui/deep/x.ts', x: 30.5, y: 30.5, language: 0, folder: 5 });
    fx.nodes.splice(0, 0, { path: 'Cargo.toml', x: 1.5, y: 0.5, language: 10, folder: 0 });
    // Indices now: 0 Cargo.toml, 1 README.md, 2 docs/guide.md, 3 src/main.ts, 4 src/ui/app.ts, 5 src/ui/deep/x.ts, 6 src/ui/é.ts.
    fx.edges = [[0, 1, 2], [1, 0, 1], [2, 1, 1], [3, 4, 1], [3, 6, 3], [4, 6, 2], [5, 3, 1], [6, 5, 4], [0, 5, 1], [2, 6, 1]];
    const snapshot = decodeMap(encodeMap(fx));
    const model = MapModel.fromSnapshot(snapshot);
    const canon = (bundles: Bundle[]): string[] =>
      bundles.map((b) => `${[`${b.ax},${b.ay}`, `${b.bx},${b.by}`].sort().join('|')}=${b.count}`).sort();
    for (const depth of [1, 2, 3, 4]) {
      const fromArrays = canon(bundleSnapshot(snapshot, depth));
      expect(fromArrays).toEqual(canon(bundleObjects(model, depth)));
      expect(canon(bundleEdges(model, depth))).toEqual(fromArrays);
    }
    // Depth 1: the two root files are their own groups; src and docs by their regions' centres.
    expect(canon(bundleSnapshot(snapshot, 1))).toEqual(['0.5,0.5|1.5,0.5=3', '0.5,0.5|12,1=1', '1.5,0.5|4,6=1', '12,1|4,6=1'].sort());
    // Depth 2: é.ts's annex counts as src/ui (its region's centre, 6,6), deep/x.ts too: src to src/ui 1 + 3 + 1.
    expect(canon(bundleSnapshot(snapshot, 2))).toContain('4,6|6,6=5');
    // At most `max`, the strongest.
    expect(bundleSnapshot(snapshot, 3, 2).map((b) => b.count)).toEqual([4, 4]);
  });

  it('draws the file-level imports with an end in view only', () => {
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
    const lines = fileEdgesInView(model, { x: 9, y: 0, w: 3, h: 1 });
    // Only docs/guide.md (10.5, 0.5) is in view: its import of README.md.
    expect(Array.from(lines)).toEqual([10.5, 0.5, 0.5, 0.5]);
    expect(fileEdgesInView(model, { x: 0, y: 0, w: 100, h: 100 }).length).toBe(16);
    // The same from the objects (once a delta left the snapshot behind).
    model.apply({ type: 'mapDelta', previousHash: 'a1b2c3', hash: 'd4', added: [], removed: [], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [] }, 0);
    expect(model.snapshot()).toBeNull();
    expect(Array.from(fileEdgesInView(model, { x: 9, y: 0, w: 3, h: 1 }))).toEqual([10.5, 0.5, 0.5, 0.5]);
  });

  it('labels at most a few hundred, one per grid cell', () => {
    const zoomed: Camera = { ...fit, zoom: 30 };
    const labels = pickLabels(big, zoomed, W, H);
    expect(labels.length).toBeGreaterThan(10);
    expect(labels.length).toBeLessThanOrEqual(MAX_LABELS);
    const cells = labels.map((l) => `${Math.floor(l.sx / LABEL_CELL.w)},${Math.floor(l.sy / LABEL_CELL.h)}`);
    expect(new Set(cells).size).toBe(cells.length);
    expect(labels.some((l) => l.kind === 'file')).toBe(true);
    // At the overview: folder names only.
    expect(pickLabels(big, fit, W, H).every((l) => l.kind === 'folder')).toBe(true);
    expect(pickLabels(big, zoomed, W, H, 7)).toHaveLength(7);
  });

  it('never draws two labels over each other, also across a grid row\'s edge (a nested folder\'s name just under its parent\'s)', () => {
    // src at y 0 and src/lib 0.4 below it: at zoom 20 their names are 8 px apart, on either side of a row's edge.
    const nested: Fixture = {
      hash: 'abc123',
      nodes: [{ path: 'src/lib/a.ts', x: 2.5, y: 2.5, language: 0, folder: 2 }],
      edges: [],
      folders: [
        { path: '', rect: [0, 0, 40, 30], parent: null },
        { path: 'src', rect: [0, 0, 20, 10], parent: 0 },
        { path: 'src/lib', rect: [0.2, 0.4, 10, 5], parent: 1 },
      ],
    };
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(nested)));
    const overlaps = (labels: ReturnType<typeof pickLabels>): string[] => {
      const found: string[] = [];
      labels.forEach((a, i) => {
        for (const b of labels.slice(i + 1)) {
          const apart = a.sx + a.text.length * CHAR_PX <= b.sx || b.sx + b.text.length * CHAR_PX <= a.sx
            || Math.abs(a.sy - b.sy) >= 2 * LABEL_HALF_H;
          if (!apart) found.push(`${a.text} over ${b.text}`);
        }
      });
      return found;
    };
    for (let y = 0; y < 30; y += 0.05) {
      expect(overlaps(pickLabels(model, { x: 20, y, zoom: 20 }, W, H)), `camera y ${y}`).toEqual([]);
    }
    for (const zoom of [fit.zoom, 4, 9, 14, 30, 60]) {
      expect(overlaps(pickLabels(big, { ...fit, zoom }, W, H)), `zoom ${zoom}`).toEqual([]);
    }
  });

  it('finds the file under the pointer', () => {
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
    const grid = new HitGrid(model.list());
    expect(grid.nearest(4.6, 4.4, 0.5)?.path).toBe('src/ui/app.ts');
    expect(grid.nearest(5.2, 4.5, 0.5)?.path).toBe('src/ui/é.ts');
    expect(grid.nearest(2.5, 2.5, 0.5)).toBeNull();
  });
});
