import { describe, expect, it } from 'vitest';
import type { ActivityBatch, ActivityRecord } from '../src/protocol/types';
import { decodeMap } from '../src/scene/decode';
import { COMET_MS, Effects, FADE_OUT_MS, PULSE_MS, TRAVEL_MS, adjacency } from '../src/scene/effects';
import { ActivityGate, HOLD_MS, type GateMap } from '../src/scene/hashrule';
import { MapModel, type MapDeltaMessage } from '../src/scene/model';
import { encodeMap, sampleFixture } from './mapFixture';

const model = (): MapModel => MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));

const gateMap = (m: MapModel): GateMap => ({ hash: m.hash, has: (p) => m.nodes.has(p) });

const rec = (kind: ActivityRecord['kind'], file: string | null, subagent: string | null = null): ActivityRecord => ({ kind, file, mcp: null, subagent });

const batch = (graphHash: string, records: ActivityRecord[], key = 'c1'): ActivityBatch => ({ key, tick: 1, graphHash, records });

function addFile(m: MapModel, hash: string, path: string): void {
  const delta: MapDeltaMessage = {
    type: 'mapDelta', previousHash: m.hash, hash,
    added: [{ path, x: 6.5, y: 4.5, language: 'typescript', folder: 'src/ui' }],
    removed: [], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [],
  };
  m.apply(delta, 0);
}

describe('the hash rule', () => {
  it('draws a record at the current hash on the file it names, and drops a path not on the map', () => {
    const m = model();
    const gate = new ActivityGate();
    gate.observe(m.hash);
    const out = gate.offer(batch(m.hash, [rec('read', 'src/main.ts'), rec('read', 'src/gone.ts')]), gateMap(m), 0);
    expect(out.map((r) => r.record.file)).toEqual(['src/main.ts']);
    expect(gate.dropped).toBe(1);
    expect(gate.heldCount()).toBe(0);
  });

  it('holds a hash the map has not reached until the delta arrives, then draws it', () => {
    const m = model();
    const gate = new ActivityGate();
    gate.observe(m.hash);
    const out = gate.offer(batch('next', [rec('create', 'src/ui/new.ts')]), gateMap(m), 0);
    expect(out).toEqual([]);
    expect(gate.heldCount()).toBe(1);
    // Another change elsewhere releases nothing.
    expect(gate.release(gateMap(m), 10)).toEqual([]);
    addFile(m, 'next', 'src/ui/new.ts');
    gate.observe(m.hash);
    const released = gate.release(gateMap(m), 20);
    expect(released).toEqual([{ key: 'c1', record: rec('create', 'src/ui/new.ts') }]);
    expect(gate.heldCount()).toBe(0);
  });

  it('draws a hash the map passed through when the file still exists, never another file', () => {
    const m = model();
    const gate = new ActivityGate();
    const old = m.hash;
    gate.observe(old);
    addFile(m, 'h2', 'src/ui/new.ts');
    gate.observe(m.hash);
    const out = gate.offer(batch(old, [rec('edit', 'src/main.ts'), rec('edit', 'src/ui/new.ts')]), gateMap(m), 0);
    expect(out.map((r) => r.record.file)).toEqual(['src/main.ts', 'src/ui/new.ts']);
    // A file removed since is not lit (and nothing else in its place).
    m.apply({ type: 'mapDelta', previousHash: 'h2', hash: 'h3', added: [], removed: ['src/main.ts'], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [] }, 0);
    gate.observe('h3');
    expect(gate.offer(batch(old, [rec('edit', 'src/main.ts')]), gateMap(m), 0)).toEqual([]);
  });

  it('passes records naming no file at once, whatever the hash', () => {
    const gate = new ActivityGate();
    const mcp: ActivityRecord = { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'out' }, subagent: null };
    const out = gate.offer(batch('unknown', [mcp, rec('thinking', null), rec('read', 'README.md')]), null, 0);
    expect(out.map((r) => r.record.kind)).toEqual(['mcp', 'thinking']);
    expect(gate.heldCount()).toBe(1);
  });

  it('drops a held batch whose hash never comes', () => {
    const m = model();
    const gate = new ActivityGate();
    gate.observe(m.hash);
    gate.offer(batch('never', [rec('read', 'README.md')]), gateMap(m), 0);
    expect(gate.release(gateMap(m), HOLD_MS - 1)).toEqual([]);
    expect(gate.heldCount()).toBe(1);
    expect(gate.release(gateMap(m), HOLD_MS)).toEqual([]);
    expect(gate.heldCount()).toBe(0);
    expect(gate.dropped).toBe(1);
  });
});

describe('the effects', () => {
  const setup = (reduced = false): { fx: Effects; m: MapModel } => {
    const m = model();
    const fx = new Effects({ reducedMotion: () => reduced });
    fx.setModel(m);
    fx.setConversations([{ key: 'c1', inTurn: true }], 0);
    return { fx, m };
  };
  const lit = (fx: Effects): string[] => fx.litInfo().map((l) => `${l.effect}:${l.path}`).sort();

  it('finds neighbours both ways and importers two levels up', () => {
    const adj = adjacency(model());
    expect(adj.neighbours('src/ui/app.ts').sort()).toEqual(['src/main.ts', 'src/ui/é.ts']);
    expect(adj.importers('src/ui/é.ts', 2).sort()).toEqual(['src/main.ts', 'src/ui/app.ts']);
    expect(adj.importers('README.md', 2)).toEqual(['docs/guide.md']);
    expect(adj.importers('docs/guide.md', 2)).toEqual([]);
  });

  it('lights a read only once its comet has landed, and moves the star over the file', () => {
    const { fx } = setup();
    fx.apply('c1', rec('read', 'src/main.ts'), 100);
    expect(fx.starInfo()).toEqual([{ key: 'c1', subagent: null, path: 'src/main.ts' }]);
    fx.step(100 + COMET_MS - 1);
    expect(lit(fx)).toEqual([]);
    expect(fx.animating(100 + COMET_MS - 1)).toBe(true);
    fx.step(100 + COMET_MS);
    expect(lit(fx)).toEqual(['read:src/main.ts']);
  });

  it('pulses an edit, its neighbours at half strength, and rings two levels of importers', () => {
    const { fx } = setup();
    fx.apply('c1', rec('edit', 'src/ui/é.ts'), 0);
    expect(lit(fx)).toEqual([
      'blast:src/main.ts',
      'blast:src/ui/app.ts',
      'edit:src/ui/é.ts',
      'neighbour:src/main.ts',
      'neighbour:src/ui/app.ts',
    ]);
    expect(fx.blastFiles().sort()).toEqual(['src/main.ts', 'src/ui/app.ts']);
    fx.blastOn = false;
    expect(lit(fx).filter((l) => l.startsWith('blast'))).toEqual([]);
  });

  it('keeps a subagent apart: its own star moves, the conversation star stays home', () => {
    const { fx } = setup();
    fx.subagent({ key: 'c1', id: 'toolu_1', event: 'started', agentType: 'general-purpose', description: 'look' }, 0);
    fx.apply('c1', rec('read', 'README.md', 'toolu_1'), 10);
    fx.step(10 + COMET_MS);
    expect(fx.starInfo()).toEqual([
      { key: 'c1', subagent: null, path: null },
      { key: 'c1', subagent: 'toolu_1', path: 'README.md' },
    ]);
    expect(fx.litInfo()).toEqual([{ path: 'README.md', effect: 'read', key: 'c1', subagent: 'toolu_1' }]);
    fx.subagent({ key: 'c1', id: 'toolu_1', event: 'ended', status: 'completed' }, 1000);
    fx.step(1000 + TRAVEL_MS);
    expect(fx.starInfo()).toEqual([{ key: 'c1', subagent: null, path: null }]);
  });

  it('brings out a station per server, red on error', () => {
    const { fx } = setup();
    fx.apply('c1', { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'out' }, subagent: null }, 0);
    expect(fx.stationInfo()).toEqual([{ key: 'c1', server: 'docs', state: 'out' }]);
    fx.apply('c1', { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'error' }, subagent: null }, 10);
    expect(fx.stationInfo()).toEqual([{ key: 'c1', server: 'docs', state: 'error' }]);
    // A call going out after the error keeps it red; an answer clears it.
    fx.apply('c1', { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'out' }, subagent: null }, 20);
    expect(fx.stationInfo()[0]?.state).toBe('error');
    fx.apply('c1', { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'back' }, subagent: null }, 30);
    expect(fx.stationInfo()[0]?.state).toBe('back');
  });

  it('fades everything and sends the star home when the turn ends; then nothing animates', () => {
    const { fx } = setup();
    fx.apply('c1', rec('edit', 'src/main.ts'), 0);
    fx.apply('c1', { kind: 'mcp', file: null, mcp: { server: 'docs', tool: 'search', direction: 'back' }, subagent: null }, 0);
    fx.step(2000);
    expect(fx.animating(2000)).toBe(false);
    fx.setConversations([{ key: 'c1', inTurn: false }], 2000);
    expect(fx.litInfo()).toEqual([]);
    expect(fx.starInfo()).toEqual([{ key: 'c1', subagent: null, path: null }]);
    expect(fx.animating(2000)).toBe(true);
    fx.step(2000 + FADE_OUT_MS);
    expect(fx.lit.size).toBe(0);
    expect(fx.stations.size).toBe(0);
    expect(fx.animating(2000 + Math.max(FADE_OUT_MS, TRAVEL_MS))).toBe(false);
  });

  it('says when what runs has all ended; a star put down at home does not travel', () => {
    const { fx } = setup();
    // c1's star was put down at home at 0: nothing moves.
    expect(fx.animating(0)).toBe(false);
    expect(fx.settlesAt()).toBe(-Infinity);
    fx.setConversations([{ key: 'c1', inTurn: true }, { key: 'c2', inTurn: false }], 100);
    expect(fx.animating(100)).toBe(false);
    // A read: the comet and the star's travel end at the same time; an edit's pulse runs longer.
    fx.apply('c1', rec('read', 'src/main.ts'), 100);
    expect(fx.settlesAt()).toBe(100 + Math.max(COMET_MS, TRAVEL_MS));
    fx.apply('c1', rec('edit', 'README.md'), 200);
    expect(fx.settlesAt()).toBe(200 + PULSE_MS);
    fx.step(200 + PULSE_MS - 1);
    expect(fx.animating(200 + PULSE_MS - 1)).toBe(true);
    fx.step(200 + PULSE_MS);
    expect(fx.animating(200 + PULSE_MS)).toBe(false);
    // The turn ends: the glows fade out, then nothing runs.
    fx.setConversations([{ key: 'c1', inTurn: false }, { key: 'c2', inTurn: false }], 2000);
    expect(fx.settlesAt()).toBe(2000 + FADE_OUT_MS);
    fx.step(2000 + FADE_OUT_MS);
    expect(fx.animating(2000 + FADE_OUT_MS)).toBe(false);
  });

  it('gives each conversation its own star and colour', () => {
    const { fx } = setup();
    fx.setConversations([{ key: 'c1', inTurn: true }, { key: 'c2', inTurn: true }], 0);
    fx.apply('c1', rec('edit', 'src/main.ts'), 0);
    fx.apply('c2', rec('edit', 'README.md'), 0);
    const stars = fx.starInfo();
    expect(stars).toEqual([{ key: 'c1', subagent: null, path: 'src/main.ts' }, { key: 'c2', subagent: null, path: 'README.md' }]);
    const colours = Array.from(fx.stars.values(), (s) => s.colour);
    expect(new Set(colours).size).toBe(2);
    expect(fx.litInfo().filter((l) => l.effect === 'edit').map((l) => `${l.key}:${l.path}`).sort()).toEqual(['c1:src/main.ts', 'c2:README.md']);
  });

  it('with reduced motion keeps the lights and drops the travel', () => {
    const { fx } = setup(true);
    fx.apply('c1', rec('read', 'src/main.ts'), 0);
    expect(lit(fx)).toEqual(['read:src/main.ts']);
    expect(fx.comets).toEqual([]);
    const star = fx.stars.get('c1');
    expect(star && fx.position(star, 0)).toEqual(star?.to);
    expect(fx.animating(0)).toBe(false);
  });

  it('a card waiting pauses the flow but keeps the lights; the turn has not ended', () => {
    const { fx } = setup();
    fx.apply('c1', rec('edit', 'src/main.ts'), 0);
    expect(fx.anyTurn()).toBe(true);
    fx.setConversations([{ key: 'c1', inTurn: true, flows: false }], 10);
    expect(fx.anyTurn()).toBe(false);
    expect(lit(fx)).toContain('edit:src/main.ts');
    fx.setConversations([{ key: 'c1', inTurn: true }], 20);
    expect(fx.anyTurn()).toBe(true);
  });

  it('a thinking block flashes, then stops', () => {
    const { fx } = setup();
    fx.apply('c1', rec('thinking', null), 0);
    expect(fx.flashAt).toBe(0);
    fx.step(5000);
    expect(fx.flashAt).toBeNull();
  });
});
