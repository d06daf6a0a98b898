import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterFirstFrame, firstFrameShown, holdUntilFirstFrame, whenMarked } from '../src/hud/later';
import { deferredFilePanel, deferredPanels, deferredSearch } from '../src/hud/deferred';

afterEach(() => {
  vi.unstubAllGlobals();
});

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !test(); i += 1) await tick(5);
  if (!test()) throw new Error(`never: ${what}`);
}

// One file, one hold: the page's start in order (the module's gate is shared, as in the page).
describe('the start in two steps', () => {
  it('holds the rest until the first frame is shown and the map has drawn, replaying what was asked meanwhile', async () => {
    holdUntilFirstFrame();
    const failures: string[] = [];
    const failed = (what: string, error: unknown): void => { failures.push(`${what}: ${String(error)}`); };
    let loaded = false;
    void afterFirstFrame(() => {
      loaded = true;
      return Promise.resolve();
    });

    // The stand-ins are in the page from the start.
    const fetchMock = vi.fn(() => Promise.resolve(new Response('one\ntwo', { status: 200, headers: { 'Content-Type': 'text/plain' } })));
    vi.stubGlobal('fetch', fetchMock);
    const file = deferredFilePanel('w', failed);
    const search = deferredSearch({ entries: () => [], reveal: () => undefined }, failed);
    const panels = deferredPanels({ workspaceId: 'w', send: () => 'a1', show: () => undefined, openFile: () => undefined, search: () => Promise.resolve([]) }, failed);
    const side = document.createElement('aside');
    const early = { toolbar: panels.toolbar, composer: panels.composer.el };
    side.append(panels.toolbar, panels.el, search.el, panels.composer.el);
    document.body.replaceChildren(side, file.el);
    search.bind(side);
    expect(file.el.hidden).toBe(true);
    expect(panels.toolbar.querySelectorAll('button')).toHaveLength(0);
    expect(panels.composer.attachments()).toEqual({ skills: [], files: [] });
    expect(panels.inspect()).toEqual({ open: null, skills: [], files: [], completionPath: null });

    // Before the code has arrived: a file asked for, Ctrl+F pressed.
    const opened = file.open('src/a.rs', 2);
    side.dispatchEvent(new KeyboardEvent('keydown', { key: 'f', ctrlKey: true, bubbles: true, cancelable: true }));
    await tick(20);
    expect(loaded).toBe(false);
    expect(fetchMock).not.toHaveBeenCalled();

    // The conversation's frame is shown; the map's first frame not yet: still held.
    let mapDrawn = (): void => undefined;
    firstFrameShown(new Promise<void>((resolve) => { mapDrawn = resolve; }));
    await tick(60);
    expect(loaded).toBe(false);

    mapDrawn();
    await until(() => loaded, 'the rest loaded');
    await opened;
    expect(fetchMock).toHaveBeenCalledWith('/w/w/file?path=src%2Fa.rs', { credentials: 'same-origin' });
    expect(file.el.hidden).toBe(false);
    expect(document.body.contains(file.el)).toBe(true);
    await until(() => search.inspect().open, 'the search bar opened by the early Ctrl+F');
    expect(side.querySelector('[role="search"]')).not.toBeNull();
    await until(() => panels.toolbar.querySelectorAll('button').length > 0, 'the panel buttons');
    expect(side.querySelector('[role="toolbar"][aria-label="Panels"]')).toBe(panels.toolbar);
    // The stand-ins' elements were replaced where they stood.
    expect(side.contains(early.toolbar) || side.contains(early.composer)).toBe(false);
    expect(side.contains(panels.composer.el)).toBe(true);
    expect(Array.from(panels.toolbar.querySelectorAll('button')).map((b) => b.textContent)).toContain('History');
    expect(failures).toEqual([]);
  });

  it('a mark resolves its wait, as does its patience running out', async () => {
    const marked = whenMarked('bench:test-mark', 10_000);
    let done = false;
    void marked.then(() => { done = true; });
    await tick(10);
    expect(done).toBe(false);
    performance.mark('bench:test-mark');
    await until(() => done, 'the mark seen');
    let late = false;
    void whenMarked('bench:never', 30).then(() => { late = true; });
    await until(() => late, 'the patience ran out');
  });
});
