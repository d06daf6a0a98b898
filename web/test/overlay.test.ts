import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ActivityBatch, SessionState } from '../src/protocol/types';
import { createScene, type Scene } from '../src/scene/scene';
import type { MapMessage } from '../src/scene/model';
import { initialState, type ActivityInboxItem, type PageState } from '../src/state/store';
import { encodeMap, sampleFixture } from './mapFixture';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, predicate: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

interface Harness {
  scene: Scene;
  maps: MapMessage[];
  activity: ActivityInboxItem[];
  state: PageState;
}

function session(key: string, phase: SessionState['phase']): SessionState {
  return {
    key, phase, label: null, file: null, pending: [], turns: 1, turnCostUsd: null, totalCostUsd: null, model: null,
    permissionMode: null, sessionId: null, lastOutcome: null, error: null, subagents: 0,
  } as unknown as SessionState;
}

function harness(): Harness {
  const maps: MapMessage[] = [];
  const activity: ActivityInboxItem[] = [];
  const body = encodeMap(sampleFixture());
  const scene = createScene({
    workspaceId: '0123456789abcdef',
    openFile: () => {},
    rearrange: () => {},
    takeMapMessages: () => maps.splice(0, maps.length),
    takeActivity: () => activity.splice(0, activity.length),
    fetch: () => Promise.resolve(new Response(body, { status: 200 })),
  });
  document.body.replaceChildren(scene.el);
  const state: PageState = { ...initialState(), ready: true };
  return { scene, maps, activity, state };
}

function inTurn(h: Harness, key: string, phase: SessionState['phase']): void {
  if (!h.state.conversations.some((c) => c.key === key)) {
    h.state.conversations = [...h.state.conversations, { key, phase, title: null, sessionId: null, warm: true }];
  }
  h.state.sessions[key] = session(key, phase);
}

const batch = (graphHash: string, file: string, kind: 'read' | 'edit' | 'create' = 'read', key = 'c1'): ActivityBatch & { type: 'activity' } => ({
  type: 'activity', key, tick: 1, graphHash, records: [{ kind, file, mcp: null, subagent: null }],
});

beforeEach(() => {
  vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue({ x: 0, y: 0, left: 0, top: 0, width: 800, height: 600, right: 800, bottom: 600, toJSON: () => ({}) });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('Claude on the map (the scene)', () => {
  it('lights a read after its comet, holds a hash not reached until its delta, and sleeps after the turn', async () => {
    const h = harness();
    h.scene.render(h.state);
    await until('the map', () => h.scene.inspect().nodes === 5);
    inTurn(h, 'c1', 'reading');
    h.activity.push(batch('a1b2c3', 'src/main.ts'));
    h.scene.render(h.state);
    expect(h.scene.inspect().stars).toEqual([{ key: 'c1', subagent: null, path: 'src/main.ts' }]);
    expect(h.scene.inspect().lit).toEqual([]);
    expect(h.scene.inspect().loop).toBe('awake');
    await until('the comet to land', () => h.scene.inspect().lit.length > 0);
    expect(h.scene.inspect().lit).toEqual([{ path: 'src/main.ts', effect: 'read', key: 'c1', subagent: null }]);

    // A created file at a hash the map has not reached: held, then drawn with the delta.
    h.activity.push(batch('d2', 'src/ui/new.ts', 'create'));
    h.scene.render(h.state);
    expect(h.scene.inspect().heldActivity).toBe(1);
    expect(h.scene.inspect().lit.some((l) => l.path === 'src/ui/new.ts')).toBe(false);
    h.maps.push({
      type: 'mapDelta', previousHash: 'a1b2c3', hash: 'd2',
      added: [{ path: 'src/ui/new.ts', x: 6.5, y: 4.5, language: 'typescript', folder: 'src/ui' }],
      removed: [], folders: [], foldersRemoved: [], edgesAdded: [{ from: 'src/ui/new.ts', to: 'src/main.ts', count: 1 }], edgesRemoved: [],
    });
    h.scene.render(h.state);
    const lit = h.scene.inspect().lit;
    expect(h.scene.inspect().heldActivity).toBe(0);
    expect(lit).toContainEqual({ path: 'src/ui/new.ts', effect: 'create', key: 'c1', subagent: null });
    expect(lit).toContainEqual({ path: 'src/main.ts', effect: 'neighbour', key: 'c1', subagent: null });
    expect(h.scene.inspect().stars[0]?.path).toBe('src/ui/new.ts');

    // The turn ends: nothing lit, the star home, the loop asleep within a second.
    inTurn(h, 'c1', 'idle');
    h.scene.render(h.state);
    expect(h.scene.inspect().lit).toEqual([]);
    expect(h.scene.inspect().stars).toEqual([{ key: 'c1', subagent: null, path: null }]);
    await until('the loop to sleep', () => h.scene.inspect().loop === 'asleep', 1000);
  });

  it('says the blast radius and hides it with its toggle', async () => {
    const h = harness();
    h.scene.render(h.state);
    await until('the map', () => h.scene.inspect().nodes === 5);
    inTurn(h, 'c1', 'editing');
    h.activity.push(batch('a1b2c3', 'src/ui/é.ts', 'edit'));
    h.scene.render(h.state);
    const blast = (): string[] => h.scene.inspect().lit.filter((l) => l.effect === 'blast').map((l) => l.path).sort();
    expect(blast()).toEqual(['src/main.ts', 'src/ui/app.ts']);
    await until('the status', () => (h.scene.el.querySelector('.map-blast-text')?.textContent ?? '') !== '');
    expect(h.scene.el.querySelector('.map-blast-text')?.textContent).toBe('2 files import src/ui/é.ts (two levels)');
    const toggle = h.scene.el.querySelector<HTMLInputElement>('input[aria-label="Blast radius"]');
    expect(toggle?.checked).toBe(true);
    if (!toggle) return;
    toggle.checked = false;
    toggle.dispatchEvent(new Event('change'));
    expect(blast()).toEqual([]);
    expect(h.scene.inspect().lit.some((l) => l.effect === 'edit')).toBe(true);
  });

  it("a subagent's star is a button whose popup shows its output", async () => {
    const h = harness();
    h.scene.render(h.state);
    await until('the map', () => h.scene.inspect().nodes === 5);
    inTurn(h, 'c1', 'tool');
    h.state.subagents = { c1: { toolu_9: { id: 'toolu_9', agentType: 'general-purpose', description: 'Read the docs', running: false, status: 'completed', output: 'The docs say hello.' } } };
    h.activity.push({ type: 'subagent', key: 'c1', id: 'toolu_9', event: 'started', agentType: 'general-purpose', description: 'Read the docs' });
    h.scene.render(h.state);
    expect(h.scene.inspect().stars.map((s) => s.subagent)).toEqual([null, 'toolu_9']);
    await until('the star buttons', () => h.scene.el.querySelector('button[aria-label^="Subagent"]') !== null);
    const button = h.scene.el.querySelector<HTMLButtonElement>('button[aria-label^="Subagent"]');
    expect(button?.getAttribute('aria-label')).toBe('Subagent Read the docs (c1)');
    button?.click();
    const dialog = h.scene.el.querySelector('[role="dialog"]');
    expect(dialog?.hasAttribute('hidden')).toBe(false);
    expect(dialog?.textContent).toContain('The docs say hello.');
  });
});
