import { describe, expect, it } from 'vitest';
import { decodeMap } from '../src/scene/decode';
import { FADE_MS, MapModel, MapSync, type MapDeltaMessage } from '../src/scene/model';
import { encodeMap, rng, sampleFixture } from './mapFixture';

function delta(previousHash: string, hash: string, over: Partial<MapDeltaMessage> = {}): MapDeltaMessage {
  return { type: 'mapDelta', previousHash, hash, added: [], removed: [], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [], ...over };
}

const addFile = (prev: string, hash: string, path: string, x = 6.5): MapDeltaMessage =>
  delta(prev, hash, { added: [{ path, x, y: 4.5, language: 'typescript', folder: 'src/ui' }], edgesAdded: [{ from: path, to: 'src/main.ts', count: 2 }] });

/** A fetch the test resolves by hand. */
function manualFetch(): { fetchMap: () => Promise<ArrayBuffer>; resolve: (hash: string) => void; reject: (e: Error) => void; calls: () => number } {
  const waiting: { resolve: (b: ArrayBuffer) => void; reject: (e: Error) => void }[] = [];
  let calls = 0;
  return {
    fetchMap: () => {
      calls += 1;
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    resolve: (hash) => {
      const fx = sampleFixture();
      fx.hash = hash;
      waiting.shift()?.resolve(encodeMap(fx));
    },
    reject: (e) => waiting.shift()?.reject(e),
    calls: () => calls,
  };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

function syncWith(fetcher: ReturnType<typeof manualFetch>): { sync: MapSync; changes: boolean[]; errors: (string | null)[] } {
  const changes: boolean[] = [];
  const errors: (string | null)[] = [];
  let now = 1000;
  const sync = new MapSync({ fetchMap: fetcher.fetchMap, onChange: (_m, fresh) => changes.push(fresh), onError: (e) => errors.push(e), now: () => (now += 1) });
  return { sync, changes, errors };
}

describe('the map model', () => {
  it('holds a snapshot with its import counts', () => {
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
    expect(model.hash).toBe('a1b2c3');
    expect(model.nodes.size).toBe(5);
    expect(model.edges.size).toBe(4);
    const main = model.nodes.get('src/main.ts');
    expect([main?.out, main?.in]).toEqual([2, 0]);
    const e = model.nodes.get('src/ui/é.ts');
    expect([e?.out, e?.in, e?.folder]).toEqual([0, 2, 'src/ui']);
    expect(model.folders.get('src/ui')?.parent).toBe('src');
  });

  it('makes no object per file or import until one is asked for: counts, languages and the arrays come from the snapshot', () => {
    const snapshot = decodeMap(encodeMap(sampleFixture()));
    const model = MapModel.fromSnapshot(snapshot);
    expect(model.materialized()).toBe(false);
    expect([model.nodeCount, model.edgeCount]).toEqual([5, 4]);
    // README.md and docs/guide.md are markdown (9), the three others TypeScript (0).
    const counts = model.languageCounts();
    expect([counts[0], counts[9], counts.reduce((a, b) => a + b, 0)]).toEqual([3, 2, 5]);
    expect(model.snapshot()).toBe(snapshot);
    expect(model.folders.size).toBe(4);
    // Nothing of a snapshot fades in.
    expect(model.animating(0)).toBe(false);
    expect(model.materialized()).toBe(false);
    // Asked for, the nodes are made once, in the snapshot's order, and the counts agree.
    expect(model.list().map((n) => n.path)).toEqual(snapshot.paths);
    expect(model.materialized()).toBe(true);
    expect([model.nodeCount, model.edgeCount, model.nodes.size, model.edges.size]).toEqual([5, 4, 5, 4]);
    expect(model.languageCounts()).toEqual(counts);
    // A delta leaves the snapshot behind: from then on the objects are the map.
    model.apply(addFile('a1b2c3', 'f9', 'src/ui/new.ts'), 10);
    expect(model.snapshot()).toBeNull();
    expect([model.nodeCount, model.edgeCount]).toEqual([6, 5]);
    expect(model.languageCounts()[0]).toBe(4);
  });

  it('applies a delta to a model whose objects were never asked for', () => {
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
    model.apply(addFile('a1b2c3', 'f9', 'src/ui/new.ts'), 10);
    expect(model.nodes.get('src/ui/new.ts')).toMatchObject({ x: 6.5, y: 4.5, out: 1 });
    expect(model.nodes.get('src/main.ts')?.in).toBe(1);
    expect(model.nodes.get('src/main.ts')?.out).toBe(2);
  });

  it('keeps an annex (a folder entry repeating its path) as another rectangle of the folder', () => {
    const fx = sampleFixture();
    fx.folders.push({ path: 'src/ui', rect: [12, 6, 2, 2], parent: 1 });
    fx.nodes[4] = { ...fx.nodes[4], path: 'src/ui/é.ts', x: 12.5, y: 6.5, language: 0, folder: 4 };
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(fx)));
    expect(model.folders.get('src/ui')?.rects).toEqual([{ x: 4, y: 4, w: 4, h: 4 }, { x: 12, y: 6, w: 2, h: 2 }]);
    expect(model.nodes.get('src/ui/é.ts')?.folder).toBe('src/ui');
    expect(model.folders.size).toBe(4);
  });

  it('applies a delta: the new file at its place, the others unmoved, the removed one fading out', () => {
    const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
    const before = new Map(Array.from(model.nodes.values(), (n) => [n.path, [n.x, n.y]]));
    model.apply(
      delta('a1b2c3', 'f2', {
        added: [{ path: 'src/ui/new.ts', x: 6.5, y: 4.5, language: 'typescript', folder: 'src/ui' }],
        removed: ['docs/guide.md'],
        foldersRemoved: ['docs'],
        folders: [{ path: 'src/ui', x: 8, y: 4, w: 2, h: 4, parent: 'src' }],
        edgesAdded: [{ from: 'src/ui/new.ts', to: 'src/main.ts', count: 3 }],
      }),
      5000,
    );
    expect(model.hash).toBe('f2');
    expect(model.nodes.get('src/ui/new.ts')).toMatchObject({ x: 6.5, y: 4.5, bornAt: 5000, out: 1 });
    expect(model.nodes.has('docs/guide.md')).toBe(false);
    for (const [path, pos] of before) if (path !== 'docs/guide.md') expect([model.nodes.get(path)?.x, model.nodes.get(path)?.y]).toEqual(pos);
    // The removed file's edge went with it.
    expect(model.nodes.get('README.md')?.in).toBe(0);
    expect(Array.from(model.edges.values(), (e) => `${e.from.path} ${e.to.path}`)).not.toContain('docs/guide.md README.md');
    expect(model.folders.has('docs')).toBe(false);
    expect(model.folders.get('src/ui')?.rects).toHaveLength(2);
    expect(model.nodes.get('src/main.ts')?.in).toBe(1);
    expect(model.animating(5000 + FADE_MS - 1)).toBe(true);
    expect(model.prune(5000 + FADE_MS - 1)).toBe(true);
    expect(model.prune(5000 + FADE_MS)).toBe(false);
    expect(model.animating(5000 + FADE_MS)).toBe(false);
    // An edge removed by pair.
    model.apply(delta('f2', 'f3', { edgesRemoved: [{ from: 'src/ui/new.ts', to: 'src/main.ts' }] }), 6000);
    expect(model.nodes.get('src/ui/new.ts')?.out).toBe(0);
    expect(model.knows('f2')).toBe(true);
  });
});

describe('keeping the map in step', () => {
  it('holds deltas during the fetch, drops those the snapshot holds, applies those that chain', async () => {
    const f = manualFetch();
    const { sync, changes } = syncWith(f);
    sync.refetch();
    sync.receive(addFile('f0', 'f1', 'src/ui/one.ts'));
    sync.receive(addFile('f1', 'f2', 'src/ui/two.ts', 7.5));
    sync.receive(addFile('f2', 'f3', 'src/ui/three.ts', 8.5));
    f.resolve('f1');
    await tick();
    expect(f.calls()).toBe(1);
    const model = sync.model;
    expect(model?.hash).toBe('f3');
    expect(model?.nodes.has('src/ui/one.ts')).toBe(false); // already in the snapshot (the fixture lacks it: proof it was not applied)
    expect(model?.nodes.has('src/ui/two.ts')).toBe(true);
    expect(model?.nodes.has('src/ui/three.ts')).toBe(true);
    expect(changes).toEqual([true, false, false]);
  });

  it('drops held deltas all older than the snapshot', async () => {
    const f = manualFetch();
    const { sync } = syncWith(f);
    sync.refetch();
    sync.receive(addFile('f0', 'f1', 'src/ui/one.ts'));
    f.resolve('f5');
    await tick();
    expect(sync.model?.hash).toBe('f5');
    expect(sync.model?.nodes.has('src/ui/one.ts')).toBe(false);
    expect(f.calls()).toBe(1);
  });

  it('applies live deltas that chain, ignores one it holds, refetches when one does not chain', async () => {
    const f = manualFetch();
    const { sync } = syncWith(f);
    sync.refetch();
    f.resolve('f0');
    await tick();
    sync.receive(addFile('f0', 'f1', 'src/ui/one.ts'));
    expect(sync.model?.hash).toBe('f1');
    sync.receive(addFile('f0', 'f1', 'src/ui/one.ts'));
    expect(f.calls()).toBe(1);
    // A gap: h1 -> h2 was missed.
    sync.receive(addFile('f2', 'f3', 'src/ui/three.ts'));
    expect(f.calls()).toBe(2);
    expect(sync.isFetching()).toBe(true);
    f.resolve('f2');
    await tick();
    expect(sync.model?.hash).toBe('f3');
    expect(sync.model?.nodes.has('src/ui/three.ts')).toBe(true);
  });

  it('refetches on mapReset and on a fresh channel snapshot, once more when one arrives during a fetch', async () => {
    const f = manualFetch();
    const { sync } = syncWith(f);
    sync.refetch();
    f.resolve('f0');
    await tick();
    sync.receive({ type: 'mapReset', hash: 'f9', reason: 'rearranged' });
    expect(f.calls()).toBe(2);
    sync.receive({ type: 'snapshot' });
    expect(f.calls()).toBe(2);
    f.resolve('f9');
    await tick();
    expect(f.calls()).toBe(3);
    f.resolve('f9');
    await tick();
    expect(sync.model?.hash).toBe('f9');
    expect(sync.isFetching()).toBe(false);
  });

  it('reports a fetch or decode failure, and clears it once a fetch works', async () => {
    const f = manualFetch();
    const { sync, errors } = syncWith(f);
    sync.refetch();
    f.reject(new Error('401 Unauthorized'));
    await tick();
    expect(errors).toEqual(['401 Unauthorized']);
    expect(sync.model).toBeNull();
    sync.refetch();
    f.resolve('f0');
    await tick();
    expect(errors.at(-1)).toBeNull();
    expect(sync.model?.hash).toBe('f0');
  });
});

describe('keeping the map in step, whatever the order (seeded)', () => {
  type State = Map<string, [number, number]>;
  const hashOf = (i: number): string => (0x1000 + i).toString(16);
  const bodyOf = (state: State, i: number): ArrayBuffer => {
    const paths = Array.from(state.keys()).sort();
    return encodeMap({
      hash: hashOf(i),
      nodes: paths.map((path) => {
        const [x, y] = state.get(path) ?? [0, 0];
        return { path, x, y, language: 0, folder: 0 };
      }),
      edges: [],
      folders: [{ path: '', rect: [0, 0, 64, 64], parent: null }],
    });
  };

  it('ends at the last state after drops, duplicates and fetches racing deltas', async () => {
    const random = rng(0x5eed);
    for (let round = 0; round < 40; round += 1) {
      // The host's history: states 0..n and the deltas between them.
      const states: State[] = [new Map([['a.ts', [0.5, 0.5]]])];
      const deltas: MapDeltaMessage[] = [];
      for (let i = 1; i <= 12; i += 1) {
        const prev = states[i - 1] ?? new Map<string, [number, number]>();
        const next: State = new Map(prev);
        const added: MapDeltaMessage['added'] = [];
        const removed: string[] = [];
        const path = `f${Math.floor(random() * 20)}.ts`;
        if (next.has(path)) {
          next.delete(path);
          removed.push(path);
        } else {
          const at: [number, number] = [Math.floor(random() * 60) + 0.5, Math.floor(random() * 60) + 0.5];
          next.set(path, at);
          added.push({ path, x: at[0], y: at[1], language: 'typescript', folder: '' });
        }
        states.push(next);
        deltas.push(delta(hashOf(i - 1), hashOf(i), { added, removed }));
      }
      let serverAt = 0;
      const pending: (() => void)[] = [];
      const sync = new MapSync({
        fetchMap: () => new Promise((resolve) => pending.push(() => {
          resolve(bodyOf(states[serverAt] ?? new Map<string, [number, number]>(), serverAt));
        })),
        onChange: () => {},
        onError: (e) => {
          if (e !== null) throw new Error(e);
        },
        now: () => 0,
      });
      sync.refetch();
      for (const [i, d] of deltas.entries()) {
        serverAt = i + 1;
        const last = i === deltas.length - 1;
        if (random() < 0.3 && pending.length > 0) {
          pending.shift()?.();
          await tick();
        }
        if (last || random() > 0.15) sync.receive(d);
        if (random() < 0.1) sync.receive(d);
      }
      while (pending.length > 0) {
        pending.shift()?.();
        await tick();
      }
      const final = states[states.length - 1] ?? new Map<string, [number, number]>();
      const model = sync.model;
      expect(model?.hash, `round ${round}`).toBe(hashOf(deltas.length));
      expect(new Map(Array.from(model?.nodes.values() ?? [], (n) => [n.path, [n.x, n.y]])), `round ${round}`).toEqual(final);
    }
  });
});
