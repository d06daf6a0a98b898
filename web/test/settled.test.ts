import { describe, expect, it, vi } from 'vitest';
import { SETTLED_MS, afterFirstFrame, afterSettled, firstFrameShown, holdUntilFirstFrame } from '../src/hud/later';

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// One file, one gate (the module's, as in the page): held, then opened once.
describe('once the page has settled after its first frame', () => {
  it('the parts and the work that shows nothing come SETTLED_MS after the first frame, what waits for the frame alone at once', async () => {
    holdUntilFirstFrame();
    let settled = 0;
    let first = 0;
    void afterSettled(() => {
      settled += 1;
      return Promise.resolve();
    });
    void afterFirstFrame(() => {
      first += 1;
      return Promise.resolve();
    });
    await tick(20);
    expect([first, settled]).toEqual([0, 0]);

    firstFrameShown(Promise.resolve());
    for (let i = 0; i < 50 && first === 0; i += 1) await tick(10);
    expect(first).toBe(1);
    await tick(SETTLED_MS / 2);
    expect(settled).toBe(0);
    for (let i = 0; i < 100 && settled === 0; i += 1) await tick(20);
    expect(settled).toBe(1);
  });

  it('at once where nothing holds (tests, tools mounting the HUD themselves)', async () => {
    vi.resetModules();
    const later = await import('../src/hud/later');
    let ran = false;
    await later.afterSettled(() => {
      ran = true;
      return Promise.resolve();
    });
    expect(ran).toBe(true);
  });
});
