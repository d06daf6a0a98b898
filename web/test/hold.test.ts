import { describe, expect, it } from 'vitest';
import { HOLD_CLASS, holdChrome, mapFirst } from '../src/hud/hold';
import { deferredScene } from '../src/hud/deferred';

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the chrome held while the map draws its first frame', () => {
  it('hides the page but the map until `until` settles, then shows it', async () => {
    const root = document.createElement('html');
    let done: () => void = () => undefined;
    const hold = holdChrome(root, new Promise<void>((resolve) => { done = resolve; }));
    expect(root.classList.contains(HOLD_CLASS)).toBe(true);
    expect(hold.held()).toBe(true);
    await tick();
    expect(root.classList.contains(HOLD_CLASS)).toBe(true);
    done();
    await tick();
    expect(root.classList.contains(HOLD_CLASS)).toBe(false);
    expect(hold.held()).toBe(false);
  });

  it('is shown at once when released (entries came), and when `until` fails', async () => {
    const root = document.createElement('html');
    const hold = holdChrome(root, new Promise<void>(() => undefined));
    hold.release();
    expect(root.classList.contains(HOLD_CLASS)).toBe(false);
    hold.release();
    expect(hold.held()).toBe(false);
    const failing = holdChrome(root, Promise.reject(new Error('no map')));
    expect(failing.held()).toBe(true);
    await tick();
    expect(root.classList.contains(HOLD_CLASS)).toBe(false);
  });
});

describe('when the map starts', () => {
  const options = {
    workspaceId: 'w',
    openFile: () => undefined,
    rearrange: () => undefined,
    takeMapMessages: () => [],
    fetchMap: () => new Promise<ArrayBuffer>(() => undefined),
  };

  it('at the end of the task that mounts it when nothing else is shown first (no task later)', async () => {
    const scene = deferredScene(options, () => undefined, () => null);
    const placeholder = scene.el;
    document.body.replaceChildren(placeholder);
    expect(scene.el).toBe(placeholder);
    await Promise.resolve();
    // Made in a microtask of the same task: in the page, in place of its stand-in.
    expect(scene.el).not.toBe(placeholder);
    expect(scene.el.isConnected).toBe(true);
    expect(scene.inspect().fetches).toBe(1);
  });

  it('after what it is told to wait for (the entries\' first frame shown)', async () => {
    let shown: () => void = () => undefined;
    const scene = deferredScene(options, () => undefined, () => new Promise<void>((resolve) => { shown = resolve; }));
    const placeholder = scene.el;
    document.body.replaceChildren(placeholder);
    await tick(10);
    expect(scene.el).toBe(placeholder);
    expect(scene.inspect().fetches).toBe(0);
    shown();
    await tick();
    expect(scene.el).not.toBe(placeholder);
    expect(scene.inspect().fetches).toBe(1);
  });
});

describe('whether the page starts with its map', () => {
  const whole = { ready: true, transcripts: { c1: [] } };
  const frames = [{ seq: null, body: { type: 'snapshotEnd' } }];

  it('on a fresh open in a browser: the snapshot whole and applied, no entries in it', () => {
    expect(mapFirst(whole, frames, false)).toBe(true);
    expect(mapFirst({ ready: true, transcripts: {} }, frames, false)).toBe(true);
  });

  it('not with entries to show, in a webview, without a whole snapshot, or with a frame still to check', () => {
    expect(mapFirst({ ready: true, transcripts: { c1: [], c2: [{ seq: 1 }] } }, frames, false)).toBe(false);
    expect(mapFirst(whole, frames, true)).toBe(false);
    expect(mapFirst({ ready: false, transcripts: {} }, [], false)).toBe(false);
    // The snapshot in the page could not be read.
    expect(mapFirst(whole, null, false)).toBe(false);
    // A long frame is checked in the worker, later: its entries are not in the state yet.
    expect(mapFirst(whole, ['{"seq":1,"body":{"type":"transcript"}}'], false)).toBe(false);
  });
});
