// The effects' loop sleeps (scene/overlay.ts): "drawing only on change ...
// idle CPU under 1% within a second of the last change" (issue 16) and the
// effects end (issue 17). A timer and an animation frame pending count as
// awake (`wakers.effects`), so the loop must not schedule a frame that
// changes nothing, and must release its waker when the last effect ends,
// not at the next step of its frame cap (200 ms on a software GPU). Fake
// timers and animation frames, and the overlay's clock injected from them.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ActivityRecord } from '../src/protocol/types';
import { decodeMap } from '../src/scene/decode';
import { FADE_OUT_MS, FLASH_MS, TRAVEL_MS } from '../src/scene/effects';
import { MapModel } from '../src/scene/model';
import { SOFTWARE_OWN_FRAME_MS } from '../src/hud/ridealong';
import { FRAME_MS, Overlay, SOFTWARE_FLOW_OWN_MS, SOFTWARE_FRAME_MS, type OverlayMessage } from '../src/scene/overlay';
import { initialState } from '../src/state/store';
import { encodeMap, sampleFixture } from './mapFixture';

/** How long an animation frame waits after it is asked for (here). */
const RAF_MS = 16;

const rec = (kind: ActivityRecord['kind'], file: string | null): ActivityRecord => ({ kind, file, mcp: null, subagent: null });

/** `budget`: the page's frame budget on a software GPU (off here unless said: `?frames=all`, the loop as before it). */
function setup(software: boolean | (() => boolean), budget = false) {
  const ctx = { setTransform() {}, clearRect() {}, beginPath() {}, moveTo() {}, lineTo() {}, setLineDash() {}, stroke() {} };
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => ctx as unknown as RenderingContext);
  const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
  const root = model.folders.get('')?.rects[0];
  const overlay = new Overlay({
    model: () => model,
    camera: () => (root ? { x: root.x + root.w / 2, y: root.y + root.h / 2, zoom: 40 } : null),
    size: () => ({ width: 800, height: 600, dpr: 1, fitZoom: 40 }),
    now: () => Date.now(),
    software: typeof software === 'function' ? software : () => software,
    budget: () => budget,
    reducedMotion: () => false,
  });
  document.body.replaceChildren(overlay.canvas, overlay.starLayer);
  const send = (inTurn: boolean, records: ActivityRecord[]): void => {
    const messages: OverlayMessage[] = records.length === 0 ? [] : [{ type: 'activity', key: 'c1', tick: 1, graphHash: model.hash, records }];
    overlay.feed([{ key: 'c1', inTurn }], messages);
  };
  /** Runs the fake clock until the loop sleeps (at most `limit` ms); how long that took. */
  const untilAsleep = (limit = 5000): number => {
    const t0 = Date.now();
    while (overlay.awake() && Date.now() - t0 < limit) vi.advanceTimersByTime(1);
    return Date.now() - t0;
  };
  overlay.modelChanged();
  untilAsleep();
  return { overlay, send, untilAsleep };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(1_000_000);
  // An animation frame comes RAF_MS after it is asked for (the fake timers' own are not evenly spaced).
  vi.stubGlobal('requestAnimationFrame', (run: FrameRequestCallback) => setTimeout(() => { run(Date.now()); }, RAF_MS));
  vi.stubGlobal('cancelAnimationFrame', (handle: number) => { clearTimeout(handle); });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the effects loop sleeps', () => {
  it('draws no frame for a page change that changes no effect (a message for the panels)', () => {
    const s = setup(true);
    expect(s.overlay.awake()).toBe(false);
    const frames = s.overlay.frames;
    // The page re-renders for every channel message (here: no conversation at all).
    s.overlay.update({ ...initialState(), ready: true }, []);
    expect(s.overlay.awake()).toBe(false);
    // A conversation that is not in a turn: its star is drawn once, then nothing.
    s.send(false, []);
    expect(s.overlay.awake()).toBe(true);
    // Its star is put down at home, where it already is: no travel keeps the loop awake.
    expect(s.untilAsleep()).toBeLessThanOrEqual(SOFTWARE_FRAME_MS + RAF_MS);
    expect(s.overlay.frames).toBe(frames + 1);
    s.send(false, []);
    s.overlay.update({ ...initialState(), ready: true }, []);
    s.send(false, []);
    expect(s.overlay.awake()).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(s.overlay.frames).toBe(frames + 1);
  });

  for (const software of [true, false]) {
    const cap = software ? SOFTWARE_FRAME_MS : FRAME_MS;
    it(`releases its waker in the frame where the last effect ends, whatever the frame cap (${String(cap)} ms)`, () => {
      const s = setup(software);
      s.send(true, [rec('edit', 'src/main.ts'), rec('thinking', null)]);
      expect(s.overlay.inspect().flash).toBe(true);
      vi.advanceTimersByTime(2000);
      const before = s.overlay.frames;
      // Mid-turn, 50 ms after a frame of the flow (off the cap's steps), the turn ends.
      for (let ms = 0; s.overlay.frames === before && ms < 1000; ms += 1) vi.advanceTimersByTime(1);
      expect(s.overlay.frames).toBe(before + 1);
      vi.advanceTimersByTime(50);
      s.send(false, []);
      expect(s.overlay.inspect().lit).toEqual([]);
      const sleptMs = s.untilAsleep();
      // The glows fade for FADE_OUT_MS (the star's way home is shorter): the
      // loop sleeps in the frame at their end, not up to a cap's step later.
      expect(TRAVEL_MS).toBeLessThan(FADE_OUT_MS);
      expect(sleptMs).toBeGreaterThanOrEqual(FADE_OUT_MS);
      expect(sleptMs).toBeLessThanOrEqual(FADE_OUT_MS + RAF_MS);
      expect(s.overlay.inspect().stars).toEqual([{ key: 'c1', subagent: null, path: null }]);
      expect(s.overlay.starLayer.querySelectorAll('.map-lit')).toHaveLength(0);
      // While the glows faded, the cap held: one frame per cap step, and the last.
      expect(s.overlay.frames - before - 1).toBeLessThanOrEqual(Math.ceil(FADE_OUT_MS / cap) + 1);
    });
  }

  it('ends a thinking flash in a frame of its own between two of the cap', () => {
    const s = setup(true);
    // A card waits: in a turn, but the flow does not march (no frames for it).
    const waiting = { ...initialState(), ready: true };
    waiting.conversations = [{ key: 'c1', phase: 'waiting', title: null, sessionId: null, warm: true }];
    s.overlay.update(waiting, []);
    expect(s.untilAsleep()).toBeLessThanOrEqual(SOFTWARE_FRAME_MS + RAF_MS);
    const start = Date.now();
    s.overlay.update(waiting, [{ type: 'activity', key: 'c1', tick: 2, graphHash: sampleFixture().hash, records: [rec('thinking', null)] }]);
    expect(s.overlay.inspect().flash).toBe(true);
    const slept = s.untilAsleep();
    expect(s.overlay.inspect().flash).toBe(false);
    // FLASH_MS is not a multiple of the cap: the old loop slept at the next step (800 ms).
    expect(FLASH_MS % SOFTWARE_FRAME_MS).not.toBe(0);
    expect(slept).toBeGreaterThanOrEqual(FLASH_MS);
    expect(Date.now() - start).toBeLessThanOrEqual(FLASH_MS + RAF_MS);
  });
});

describe('the effects loop rides along with the page\'s own frames (hud/ridealong.ts)', () => {
  it('on a software GPU draws its next frame with a change of the page in the second half of its wait; not on a hardware GPU', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => Date.now());
    const FLOW_MS = 400;
    for (const software of [true, false]) {
      const s = setup(software);
      // A turn: the flow marches, a frame every SOFTWARE_FLOW_FRAME_MS (hardware: FLOW_FRAME_MS).
      s.send(true, []);
      await vi.advanceTimersByTimeAsync(RAF_MS + 1);
      const wait = software ? FLOW_MS : 83;
      const after = s.overlay.frames;
      const pageChange = async (): Promise<void> => {
        document.body.append(document.createElement('span'));
        await vi.advanceTimersByTimeAsync(RAF_MS + 1);
      };
      // Early in the wait: the page's change does not pull the frame.
      await pageChange();
      expect(s.overlay.frames).toBe(after);
      if (software) {
        // In its second half: drawn with the page's frame, long before its timer.
        await vi.advanceTimersByTimeAsync(wait / 2);
        await pageChange();
        expect(s.overlay.frames).toBe(after + 1);
      }
      s.send(false, []);
      s.untilAsleep();
    }
  });
});

describe('the page\'s frame budget on a software GPU (hud/ridealong.ts `frameBudget`)', () => {
  /** Runs a turn for `ms`: a read every 300 ms (a comet, the star's move), the page changing every `pageEvery` ms (0: never); frames drawn and frames of the overlay's own. */
  async function turn(budget: boolean, ms: number, pageEvery: number) {
    vi.spyOn(performance, 'now').mockImplementation(() => Date.now());
    const s = setup(true, budget);
    s.send(true, []);
    await vi.advanceTimersByTimeAsync(RAF_MS + 1);
    const frames = s.overlay.frames;
    const own = s.overlay.ownFrames;
    for (let t = 0; t < ms; t += 50) {
      if (t % 300 === 0) s.send(true, [rec('read', t % 600 === 0 ? 'src/main.ts' : 'README.md')]);
      if (pageEvery > 0 && t % pageEvery === 0) document.body.append(document.createElement('span'));
      await vi.advanceTimersByTimeAsync(50);
    }
    return { s, frames: s.overlay.frames - frames, own: s.overlay.ownFrames - own };
  }

  it('asks for at most two frames a second of its own while effects move, five without the budget', async () => {
    const held = await turn(true, 3000, 0);
    expect(held.s.overlay.inspect().effectOwnFrameMs).toBe(SOFTWARE_OWN_FRAME_MS);
    expect(held.own).toBeLessThanOrEqual(Math.ceil(3000 / SOFTWARE_OWN_FRAME_MS) + 1);
    expect(held.own).toBeGreaterThanOrEqual(3000 / SOFTWARE_OWN_FRAME_MS - 1);
    held.s.send(false, []);
    held.s.untilAsleep();
    vi.restoreAllMocks();
    const free = await turn(false, 3000, 0);
    expect(free.s.overlay.inspect().effectOwnFrameMs).toBe(SOFTWARE_FRAME_MS);
    expect(free.own).toBeGreaterThanOrEqual(3000 / SOFTWARE_FRAME_MS - 2);
  });

  it('steps with the page\'s own frames in between, at the frame cap', async () => {
    const t = await turn(true, 3000, 100);
    // Frames of its own at most twice a second; in all about five a second (the cap), the rest riding along.
    expect(t.own).toBeLessThanOrEqual(Math.ceil(3000 / SOFTWARE_OWN_FRAME_MS) + 1);
    expect(t.frames).toBeGreaterThanOrEqual(3000 / SOFTWARE_FRAME_MS - 2);
    expect(t.frames).toBeLessThanOrEqual(3000 / SOFTWARE_FRAME_MS + 4);
  });

  it('keeps the loop awake during a turn (the flow steps at least every SOFTWARE_FLOW_OWN_MS) and asleep as soon after it', () => {
    vi.spyOn(performance, 'now').mockImplementation(() => Date.now());
    const s = setup(true, true);
    s.send(true, [rec('edit', 'src/main.ts')]);
    for (let t = 0; t < 3000; t += 10) {
      vi.advanceTimersByTime(10);
      expect(s.overlay.awake()).toBe(true);
    }
    // Only the flow moves now: a frame of its own at most every SOFTWARE_FLOW_OWN_MS.
    const own = s.overlay.ownFrames;
    vi.advanceTimersByTime(3000);
    expect(s.overlay.ownFrames - own).toBeLessThanOrEqual(Math.ceil(3000 / SOFTWARE_FLOW_OWN_MS));
    expect(s.overlay.ownFrames - own).toBeGreaterThanOrEqual(2);
    // The turn ends 50 ms after a frame: the glows fade and the loop sleeps at their end, as without the budget.
    const before = s.overlay.frames;
    for (let ms = 0; s.overlay.frames === before && ms < 2000; ms += 1) vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(50);
    s.send(false, []);
    const slept = s.untilAsleep();
    expect(slept).toBeGreaterThanOrEqual(FADE_OUT_MS);
    expect(slept).toBeLessThanOrEqual(FADE_OUT_MS + RAF_MS);
    expect(s.overlay.inspect().lit).toEqual([]);
  });
});

describe('the page is told whether the frame budget holds (the caret then does not blink)', () => {
  for (const [software, budget] of [[true, true], [true, false], [false, true]] as const) {
    it(`after the effects' first frame: software GPU ${String(software)}, budget ${String(budget)}`, () => {
      document.documentElement.removeAttribute('data-frame-budget');
      setup(software, budget);
      expect(document.documentElement.hasAttribute('data-frame-budget')).toBe(software && budget);
    });
  }

  it('and told again once the GPU is known to be a software one (not known at the first frame)', () => {
    document.documentElement.removeAttribute('data-frame-budget');
    // As the scene answers before the map's first frame: not a software GPU, since not asked yet.
    let known = false;
    const s = setup(() => known, true);
    expect(document.documentElement.hasAttribute('data-frame-budget')).toBe(false);
    known = true;
    s.overlay.modelChanged();
    s.untilAsleep();
    expect(document.documentElement.hasAttribute('data-frame-budget')).toBe(true);
  });
});
