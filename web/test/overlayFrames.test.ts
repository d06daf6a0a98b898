// The effects' frames (scene/overlay.ts): what a frame changes. On a
// software GPU every presented frame costs Chromium ~30 ms of CPU, so a
// frame moves elements and shows, hides or fades canvases stroked once per
// view; it never strokes a canvas again while the view stays.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ActivityRecord } from '../src/protocol/types';
import { decodeMap } from '../src/scene/decode';
import { COMET_MS, FLASH_MS } from '../src/scene/effects';
import { MapModel } from '../src/scene/model';
import { FRAME_MS, Overlay, SOFTWARE_FLOW_FRAME_MS, SOFTWARE_FRAME_MS, type OverlayMessage } from '../src/scene/overlay';
import { encodeMap, sampleFixture } from './mapFixture';

const rec = (kind: ActivityRecord['kind'], file: string | null): ActivityRecord => ({ kind, file, mcp: null, subagent: null });

function setup(software: boolean, reduced = false) {
  const strokes = { count: 0 };
  const ctx = {
    setTransform() {}, clearRect() {}, beginPath() {}, moveTo() {}, lineTo() {}, setLineDash() {},
    stroke() { strokes.count += 1; },
  };
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => ctx as unknown as RenderingContext);
  const model = MapModel.fromSnapshot(decodeMap(encodeMap(sampleFixture())));
  const root = model.folders.get('')?.rects[0];
  let t = 1000;
  const overlay = new Overlay({
    model: () => model,
    camera: () => (root ? { x: root.x + root.w / 2, y: root.y + root.h / 2, zoom: 40 } : null),
    size: () => ({ width: 800, height: 600, dpr: 1, fitZoom: 40 }),
    now: () => t,
    software: () => software,
    reducedMotion: () => reduced,
  });
  document.body.replaceChildren(overlay.canvas, overlay.starLayer);
  overlay.modelChanged();
  const send = (records: ActivityRecord[]): void => {
    const message: OverlayMessage = { type: 'activity', key: 'c1', tick: 1, graphHash: model.hash, records };
    overlay.feed([{ key: 'c1', inTurn: true }], [message]);
  };
  return {
    overlay, strokes, send,
    at: (ms: number) => { t = ms; },
    // One frame as the loop draws it (redraw() would take the view as new).
    frame: () => { (overlay as unknown as { draw(): void }).draw(); },
  };
}

const opacity = (el: Element | null | undefined): string => (el instanceof HTMLElement ? el.style.opacity : '');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the effects frames', () => {
  it('strokes the flow and flash canvases once per view, then only shows, hides and fades them', () => {
    const s = setup(false);
    s.send([rec('thinking', null), rec('read', 'src/main.ts')]);
    s.frame();
    const stroked = s.strokes.count;
    // Three flow canvases and the flash, stroked once each.
    expect(stroked).toBe(4);
    expect(s.overlay.inspect().flash).toBe(true);
    expect(Number(opacity(s.overlay.canvas))).toBeGreaterThan(0.5);
    const flows = Array.from(s.overlay.starLayer.querySelectorAll('.map-flow'));
    expect(flows.filter((c) => opacity(c) === '1')).toHaveLength(1);
    const shownFirst = flows.findIndex((c) => opacity(c) === '1');
    // A comet flies as an element, turned toward the file.
    expect(s.overlay.starLayer.querySelectorAll('.map-comet')).toHaveLength(1);
    for (let ms = 1000; ms <= 1000 + FLASH_MS + COMET_MS; ms += FRAME_MS) {
      s.at(ms);
      s.frame();
    }
    expect(s.strokes.count).toBe(stroked);
    expect(s.overlay.inspect().flash).toBe(false);
    expect(opacity(s.overlay.canvas)).toBe('0.00');
    expect(s.overlay.starLayer.querySelectorAll('.map-comet')).toHaveLength(0);
    expect(s.overlay.inspect().lit).toEqual([{ path: 'src/main.ts', effect: 'read', key: 'c1', subagent: null }]);
    expect(s.overlay.starLayer.querySelectorAll('.map-lit-read')).toHaveLength(1);
    // The flow marched: another of its canvases shows now.
    expect(flows.filter((c) => opacity(c) === '1')).toHaveLength(1);
    expect(flows.findIndex((c) => opacity(c) === '1')).not.toBe(shownFirst);
  });

  it('runs at 30 frames a second, at 5 on a software GPU', () => {
    expect(setup(false).overlay.inspect().effectFrameMs).toBe(FRAME_MS);
    vi.restoreAllMocks();
    const s = setup(true);
    expect(s.overlay.inspect().effectFrameMs).toBe(SOFTWARE_FRAME_MS);
    expect(SOFTWARE_FRAME_MS).toBeGreaterThanOrEqual(5 * FRAME_MS);
    expect(SOFTWARE_FLOW_FRAME_MS).toBeGreaterThan(SOFTWARE_FRAME_MS);
  });

  it('asks whether the GPU is a software one only once a frame has been drawn (not while the map starts)', () => {
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(() => null);
    let asked = 0;
    const overlay = new Overlay({
      model: () => null,
      camera: () => null,
      size: () => ({ width: 800, height: 600, dpr: 1, fitZoom: 1 }),
      now: () => 1000,
      software: () => { asked += 1; return true; },
    });
    // The scene's first render: the overlay wakes for its first frame without the cap.
    overlay.feed([], []);
    expect(asked).toBe(0);
    (overlay as unknown as { draw(): void }).draw();
    overlay.wake();
    expect(asked).toBe(1);
  });

  it('with reduced motion: no comet element, no flow; the read lights at once', () => {
    const s = setup(false, true);
    s.send([rec('read', 'src/main.ts')]);
    s.frame();
    expect(s.overlay.starLayer.querySelectorAll('.map-comet')).toHaveLength(0);
    expect(Array.from(s.overlay.starLayer.querySelectorAll('.map-flow')).every((c) => opacity(c) === '0.00')).toBe(true);
    expect(s.overlay.inspect().comets).toBe(0);
    expect(s.overlay.inspect().lit.map((l) => l.path)).toEqual(['src/main.ts']);
  });
});
