import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HASH_GRACE_MS, LABELS_AFTER_MS, MAX_DPR, createScene, type Scene } from '../src/scene/scene';
import { workspace } from './fixtures';
import type { MapMessage } from '../src/scene/model';
import { initialState, type PageState } from '../src/state/store';
import { encodeMap, sampleFixture } from './mapFixture';
import { anyGl } from './anyGl';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Harness {
  scene: Scene;
  inbox: MapMessage[];
  opened: string[];
  rearranged: number;
  fetches: string[];
  ready: PageState;
}

function harness(answers: Record<string, () => Response>): Harness {
  const fetches: string[] = [];
  const fetchMock = vi.fn((input: RequestInfo | URL) => {
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    fetches.push(url);
    const key = Object.keys(answers).find((k) => url.includes(k));
    return Promise.resolve(key ? (answers[key]?.() ?? new Response('', { status: 404 })) : new Response('', { status: 404 }));
  });
  const inbox: MapMessage[] = [];
  const h: Harness = {
    inbox,
    opened: [],
    rearranged: 0,
    fetches,
    ready: { ...initialState(), ready: true },
    scene: undefined as unknown as Scene,
  };
  h.scene = createScene({
    workspaceId: '0123456789abcdef',
    openFile: (path) => h.opened.push(path),
    rearrange: () => {
      h.rearranged += 1;
    },
    takeMapMessages: () => inbox.splice(0, inbox.length),
    fetch: fetchMock,
  });
  document.body.replaceChildren(h.scene.el);
  return h;
}

/** A scene put in the page through its `mount` (its canvas sized before its context), every fetch answered 404. */
function mountedScene(): Scene {
  const holder = document.createElement('div');
  document.body.replaceChildren(holder);
  return createScene({
    workspaceId: '0123456789abcdef',
    openFile: () => undefined,
    rearrange: () => undefined,
    takeMapMessages: () => [],
    fetch: () => Promise.resolve(new Response('', { status: 404 })),
    mount: (el) => { holder.replaceWith(el); },
  });
}

/** The harness's map rendered (its 5 files in), and its view. */
async function mapView(h: Harness): Promise<HTMLElement> {
  h.scene.render(h.ready);
  await until('the map', () => h.scene.inspect().nodes === 5);
  const view = h.scene.el.querySelector<HTMLElement>('[aria-label="Map view"]');
  if (!view) throw new Error('no view');
  return view;
}

const mapAnswer = (body: ArrayBuffer) => () => new Response(body, { status: 200, headers: { 'Content-Type': 'application/octet-stream' } });

async function until(what: string, predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (predicate()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeEach(() => {
  // happy-dom lays nothing out: the map's view is 800 x 600.
  vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue({ x: 0, y: 0, left: 0, top: 0, width: 800, height: 600, right: 800, bottom: 600, toJSON: () => ({}) });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the map scene', () => {
  it('says visibly when WebGL2 is missing, and still holds the map', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    const alert = h.scene.el.querySelector('[role="alert"]');
    expect(alert?.hasAttribute('hidden')).toBe(false);
    expect(alert?.textContent).toContain('The map cannot be drawn');
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    expect(h.fetches).toEqual(['/w/0123456789abcdef/map']);
    expect(h.scene.inspect()).toMatchObject({ graphHash: 'a1b2c3', nodes: 5, edges: 4, firstFrame: false, selected: null });
    expect(h.scene.redraw()).toBeNull();
  });

  it('asks the GPU process nothing before its first frame but its programs\' links, their uniforms and the pixel read that ends it; its name only after', async () => {
    const { gl, calls } = anyGl();
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((kind: string) => (kind === 'webgl2' ? gl : null));
    performance.clearMarks('orbit:first-frame');
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    expect(h.scene.software()).toBe(false);
    h.scene.render(h.ready);
    await until('the first frame', () => h.scene.inspect().firstFrame);
    expect(performance.getEntriesByName('orbit:first-frame')).toHaveLength(1);
    // Every call that waits for an answer (a round trip on Chromium), in order, up to the pixel read before the mark.
    const drawn = calls.findIndex(([name]) => name === 'readPixels');
    const asks = calls.slice(0, drawn + 1).map(([name, args]) => `${name}${name === 'getExtension' ? ` ${String(args[0])}` : ''}`)
      .filter((name) => /^(get|readPixels|finish|checkFramebufferStatus|isContextLost)/.test(name) && name !== 'getUniformLocation' && name !== 'isContextLost');
    expect(asks).toEqual(['getExtension KHR_parallel_shader_compile', 'getProgramParameter', 'getProgramParameter', 'readPixels']);
    expect(calls.filter(([name]) => name === 'getUniformLocation').length).toBeGreaterThan(0);
    expect(calls.slice(drawn).filter(([name]) => name === 'getUniformLocation')).toEqual([]);
    // After it, the effects may ask whether a software GPU draws them (once: the answer is kept).
    expect(h.scene.software()).toBe(false);
    expect(h.scene.software()).toBe(false);
    expect(calls.filter(([name, args]) => name === 'getExtension' && args[0] === 'WEBGL_debug_renderer_info')).toHaveLength(1);
    expect(calls.filter(([name]) => name === 'getParameter')).toHaveLength(1);
  });

  it('follows the page\'s colour scheme when it changes while the map is open (the next frame is in the new colours)', async () => {
    let light = true;
    const listeners: (() => void)[] = [];
    vi.spyOn(window, 'matchMedia').mockImplementation((query: string) => ({
      matches: query.includes('light') ? light : false,
      media: query,
      addEventListener: (_type: string, listener: () => void) => { if (query.includes('color-scheme')) listeners.push(listener); },
      removeEventListener: () => undefined,
    }) as unknown as MediaQueryList);
    const { gl, calls } = anyGl();
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((kind: string) => (kind === 'webgl2' ? gl : null));
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    h.scene.render(h.ready);
    await until('the first frame', () => h.scene.inspect().firstFrame);
    const lastClear = (): unknown[] | undefined => calls.filter(([name]) => name === 'clearColor').at(-1)?.[1];
    expect(lastClear()).toEqual([1, 1, 1, 1]);
    light = false;
    const before = calls.length;
    for (const listener of listeners) listener();
    await until('a frame after the change', () => calls.slice(before).some(([name]) => name === 'clearColor'));
    expect(lastClear()).toEqual([13 / 255, 17 / 255, 23 / 255, 1]);
  });

  it('says so when Enter finds no file in view (the keys zoomed into an empty room), instead of nothing', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    const view = await mapView(h);
    const key = (k: string): void => { view.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })); };
    // The root's centre (8, 5) holds no file: zoomed in on it, none is in view.
    for (let i = 0; i < 12; i += 1) key('+');
    key('Enter');
    expect(h.opened).toEqual([]);
    expect(h.scene.el.querySelector('.map-status')?.textContent).toBe('No file in view here: 0 shows everything, / searches.');
    // A move takes the words back.
    key('ArrowUp');
    expect(h.scene.el.querySelector('.map-status')?.textContent).toBe('');
    // Back to everything, Enter opens the file at the centre and the status says which.
    key('0');
    await until('the flight', () => h.scene.inspect().loop === 'asleep');
    key('Enter');
    expect(h.opened).toHaveLength(1);
    expect(h.scene.el.querySelector('.map-status')?.textContent).toMatch(/^Selected /);
  });

  it('hides a file\'s tooltip when the map moves under a still pointer (keys, a flight), and Enter then opens the file at the centre', async () => {
    const h = harness({
      '/map': mapAnswer(encodeMap(sampleFixture())),
      '/search': () => new Response(JSON.stringify({ hash: 'a1b2c3', matches: [{ path: 'src/ui/app.ts', score: 90, indices: [] }] }), { status: 200 }),
    });
    const view = await mapView(h);
    const tooltip = h.scene.el.querySelector<HTMLElement>('[role="tooltip"]');
    if (!tooltip) throw new Error('no tooltip');
    // Hover README.md (world 0.5, 0.5) where the camera shows it.
    const hover = (path: string): void => {
      const cam = h.scene.inspect().camera ?? { x: 0, y: 0, zoom: 1 };
      const node = sampleFixture().nodes.find((n) => n.path === path) ?? { x: 0, y: 0 };
      view.dispatchEvent(new PointerEvent('pointermove', { clientX: 400 + (node.x - cam.x) * cam.zoom, clientY: 300 + (node.y - cam.y) * cam.zoom, bubbles: true }));
    };
    hover('README.md');
    expect(h.scene.inspect().hovered).toBe('README.md');
    expect(tooltip.hidden).toBe(false);
    view.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true }));
    expect(h.scene.inspect().hovered).toBeNull();
    expect(tooltip.hidden).toBe(true);
    hover('README.md');
    expect(h.scene.inspect().hovered).toBe('README.md');
    view.dispatchEvent(new KeyboardEvent('keydown', { key: '+', bubbles: true }));
    expect(tooltip.hidden).toBe(true);
    view.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(h.opened).toHaveLength(1);
    expect(h.opened[0]).not.toBe('README.md');
    // A flight to a search's choice too.
    hover('README.md');
    expect(tooltip.hidden).toBe(false);
    const box = h.scene.el.querySelector<HTMLInputElement>('[aria-label="Search files"]');
    if (!box) throw new Error('no search box');
    box.value = 'app';
    box.dispatchEvent(new Event('input'));
    await until('the matches', () => h.scene.el.querySelectorAll('[role="option"]').length === 1);
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(h.scene.inspect().selected).toBe('src/ui/app.ts');
    expect(tooltip.hidden).toBe(true);
    expect(h.scene.inspect().hovered).toBeNull();
  });

  it('draws a new map\'s labels LABELS_AFTER_MS after its first frame, not in the frames right after it', async () => {
    const { gl, calls } = anyGl();
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((kind: string) => (kind === 'webgl2' ? gl : null));
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    h.scene.render(h.ready);
    await until('the first frame', () => h.scene.inspect().firstFrame);
    const draws = (): number => calls.filter(([name]) => name === 'drawArrays' || name === 'drawElements').length;
    const atFirst = draws();
    await sleep(LABELS_AFTER_MS / 2);
    expect(draws()).toBe(atFirst);
    // Then the map again, with its labels (drawn into the map's canvas).
    for (let i = 0; i < 100 && draws() === atFirst; i += 1) await sleep(20);
    expect(draws()).toBeGreaterThan(atFirst);
  });

  it('is put in the page and its canvas sized before the WebGL context is asked for; no label canvas is in the page (labels are drawn into the map\'s canvas)', () => {
    const seen: { connected: boolean; width: number; height: number }[] = [];
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(function (this: HTMLCanvasElement, kind: string) {
      if (kind === 'webgl2') seen.push({ connected: this.isConnected, width: this.width, height: this.height });
      return null;
    });
    const scene = mountedScene();
    // A context made at the default 300x150 would make its buffers again on the first resize.
    expect(seen).toEqual([{ connected: true, width: 800, height: 600 }]);
    expect(scene.el.isConnected).toBe(true);
    expect(scene.el.querySelector('.map-labels')).toBeNull();
    expect(scene.el.querySelectorAll('canvas.map-canvas:not(.map-effects)')).toHaveLength(1);
  });

  it('caps the device pixel ratio at MAX_DPR for every canvas it draws into, and follows a smaller one', () => {
    const sizes = (el: HTMLElement) => Array.from(el.querySelectorAll('canvas')).map((c) => [c.className, c.width, c.height]);
    vi.spyOn(window, 'devicePixelRatio', 'get').mockReturnValue(3);
    expect(MAX_DPR).toBe(2);
    const capped = sizes(mountedScene().el);
    expect(capped.length).toBeGreaterThan(1);
    for (const [name, w, h] of capped) expect([name, w, h]).toEqual([name, 800 * MAX_DPR, 600 * MAX_DPR]);
    vi.spyOn(window, 'devicePixelRatio', 'get').mockReturnValue(1.5);
    for (const [name, w, h] of sizes(mountedScene().el)) expect([name, w, h]).toEqual([name, 1200, 900]);
  });

  it('fetches at once; the channel\'s first snapshot does not fetch again, a later one does', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    expect(h.fetches).toEqual(['/w/0123456789abcdef/map']);
    h.inbox.push({ type: 'snapshot' });
    h.scene.render(initialState());
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    expect(h.fetches).toHaveLength(1);
    h.inbox.push({ type: 'snapshot' });
    h.scene.render(h.ready);
    await until('the second fetch', () => h.fetches.length === 2);
  });

  it('draws its first frame from the map the HTML carried in the task that makes it, without a request', async () => {
    const { gl, calls } = anyGl();
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((kind: string) => (kind === 'webgl2' ? gl : null));
    performance.clearMarks('orbit:first-frame');
    const fetches: string[] = [];
    // Whether the mark is there when the next task runs (queued before the scene is made).
    let atNextTask: boolean | null = null;
    setTimeout(() => { atNextTask = performance.getEntriesByName('orbit:first-frame').length === 1; }, 0);
    const holder = document.createElement('div');
    document.body.replaceChildren(holder);
    const inbox: MapMessage[] = [{ type: 'snapshot' }];
    const scene = createScene({
      workspaceId: '0123456789abcdef',
      openFile: () => undefined,
      rearrange: () => undefined,
      takeMapMessages: () => inbox.splice(0),
      fetch: (input) => {
        fetches.push(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
        return Promise.resolve(mapAnswer(encodeMap(sampleFixture()))());
      },
      mount: (el) => { holder.replaceWith(el); },
      preloadedMap: { ok: true, bytes: encodeMap(sampleFixture()) },
    });
    // The channel's first snapshot (the HTML's too) does not fetch again.
    scene.render({ ...initialState(), ready: true });
    await sleep(0);
    expect(atNextTask).toBe(true);
    expect(calls.some(([name]) => name === 'readPixels')).toBe(true);
    expect(scene.inspect()).toMatchObject({ graphHash: 'a1b2c3', nodes: 5, firstFrame: true, error: null });
    expect(fetches).toEqual([]);
    // A later snapshot fetches from the server.
    inbox.push({ type: 'snapshot' });
    scene.render({ ...initialState(), ready: true });
    await until('the fetch', () => fetches.length === 1);
    expect(fetches).toEqual(['/w/0123456789abcdef/map']);
  });

  it('shows a malformed map from the HTML as it shows a malformed /map, and loads from /map after Try again', async () => {
    for (const [preloadedMap, said] of [
      [{ ok: true as const, bytes: new ArrayBuffer(8) }, 'The map could not be loaded: The map from Orbit is malformed (header): 8 bytes, shorter than the 32-byte header'],
      [{ ok: false as const, error: 'the map in the page is not base64' }, 'The map could not be loaded: the map in the page is not base64'],
    ] as const) {
      const { gl } = anyGl();
      vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((kind: string) => (kind === 'webgl2' ? gl : null));
      const fetches: string[] = [];
      const scene = createScene({
        workspaceId: '0123456789abcdef',
        openFile: () => undefined,
        rearrange: () => undefined,
        takeMapMessages: () => [],
        fetch: (input) => {
          fetches.push(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
          return Promise.resolve(mapAnswer(encodeMap(sampleFixture()))());
        },
        preloadedMap,
      });
      document.body.replaceChildren(scene.el);
      await until('the error', () => scene.inspect().error !== null);
      expect(scene.el.querySelector('[role="alert"]')?.textContent).toBe(`${said}Try again`);
      expect(fetches).toEqual([]);
      Array.from(scene.el.querySelectorAll('button')).find((b) => b.textContent === 'Try again')?.click();
      await until('the map', () => scene.inspect().nodes === 5);
      expect(fetches).toEqual(['/w/0123456789abcdef/map']);
      expect(scene.inspect()).toMatchObject({ error: null, graphHash: 'a1b2c3' });
    }
  });

  it('shows a decode error on the page, and loads after Try again', async () => {
    let body = new ArrayBuffer(8);
    const h = harness({ '/map': () => mapAnswer(body)() });
    h.scene.render(h.ready);
    await until('the error', () => h.scene.inspect().error?.includes('malformed') ?? false);
    const alert = h.scene.el.querySelector('[role="alert"]');
    expect(alert?.textContent).toContain('The map from Orbit is malformed (header)');
    body = encodeMap(sampleFixture());
    Array.from(h.scene.el.querySelectorAll('button')).find((b) => b.textContent === 'Try again')?.click();
    await until('the map', () => h.scene.inspect().nodes === 5);
  });

  it('lists the languages in a legend, with counts', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    const legend = h.scene.el.querySelector('[aria-label="Languages"]');
    expect(Array.from(legend?.querySelectorAll('li') ?? []).map((li) => li.textContent)).toEqual(['TypeScript 3', 'Markdown 2']);
  });

  it('applies a live delta: the new file at its place, nothing else moves; a removed one goes', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    const before = h.scene.positions();
    h.inbox.push({
      type: 'mapDelta', previousHash: 'a1b2c3', hash: 'b2', added: [{ path: 'src/ui/new.ts', x: 6.5, y: 4.5, language: 'typescript', folder: 'src/ui' }],
      removed: ['docs/guide.md'], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [],
    });
    h.scene.render(h.ready);
    const after = h.scene.positions();
    expect(after['src/ui/new.ts']).toEqual([6.5, 4.5]);
    expect(after['docs/guide.md']).toBeUndefined();
    for (const [path, pos] of Object.entries(before)) if (path !== 'docs/guide.md') expect(after[path]).toEqual(pos);
    expect(h.scene.inspect()).toMatchObject({ graphHash: 'b2', nodes: 5 });
    expect(h.scene.nodeAt('src/ui/new.ts')).toMatchObject({ x: 6.5, y: 4.5 });
    expect(h.scene.nodeAt('docs/guide.md')).toBeNull();
    // The fades end and the loop sleeps, the removed file gone for good.
    await until('the loop to sleep', () => h.scene.inspect().loop === 'asleep');
    expect(h.scene.inspect().wakers).toEqual({ frame: false, settle: false, fly: false, fading: 0, effects: false, idle: false });
    // A reset fetches again.
    h.inbox.push({ type: 'mapReset', hash: 'c3', reason: 'rearranged' });
    h.scene.render(h.ready);
    await until('the refetch', () => h.fetches.length === 2 && h.scene.inspect().graphHash === 'a1b2c3');
  });

  it('fetches again, once, when the workspace\'s graph hash stays different from the map\'s', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    vi.useFakeTimers();
    try {
      const ws = { ...h.ready, workspace: { ...workspace, graph: { files: 5, hash: 'a1b2c3' } } };
      h.scene.render(ws);
      await vi.advanceTimersByTimeAsync(HASH_GRACE_MS + 10);
      expect(h.fetches).toHaveLength(1);
      const other = { ...h.ready, workspace: { ...workspace, graph: { files: 6, hash: 'ffff' } } };
      h.scene.render(other);
      await vi.advanceTimersByTimeAsync(HASH_GRACE_MS - 100);
      expect(h.fetches).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(200);
      expect(h.fetches).toHaveLength(2);
      // The snapshot still says a1b2c3: not again for the same hash.
      h.scene.render(other);
      await vi.advanceTimersByTimeAsync(3 * HASH_GRACE_MS);
      expect(h.fetches).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('searches through /search, highlights the matched characters, flies to the choice and selects it', async () => {
    const h = harness({
      '/map': mapAnswer(encodeMap(sampleFixture())),
      '/search': () => new Response(JSON.stringify({ hash: 'a1b2c3', matches: [{ path: 'src/ui/app.ts', score: 90, indices: [0, 7, 8] }, { path: 'src/gone.ts', score: 10, indices: [] }] }), { status: 200 }),
    });
    h.scene.render(h.ready);
    await until('the map', () => h.scene.inspect().nodes === 5);
    const box = h.scene.el.querySelector<HTMLInputElement>('[role="combobox"][aria-label="Search files"]');
    if (!box) throw new Error('no search box');
    box.value = 'sap';
    box.dispatchEvent(new Event('input'));
    await until('the matches', () => h.scene.el.querySelectorAll('[role="option"]').length === 2);
    expect(h.fetches.at(-1)).toBe('/w/0123456789abcdef/search?q=sap&limit=20');
    expect(box.getAttribute('aria-expanded')).toBe('true');
    const first = h.scene.el.querySelector('[role="option"]');
    expect(Array.from(first?.querySelectorAll('mark') ?? []).map((m) => m.textContent)).toEqual(['s', 'ap']);
    const before = h.scene.inspect().camera;
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(h.scene.inspect().selected).toBe('src/ui/app.ts');
    expect(box.getAttribute('aria-expanded')).toBe('false');
    await until('the flight', () => h.scene.inspect().loop === 'asleep');
    const after = h.scene.inspect().camera;
    expect(after).not.toEqual(before);
    expect(after).toMatchObject({ x: 4.5, y: 4.5 });
    // A match that is not on the map says so.
    box.value = 'gone';
    box.dispatchEvent(new Event('input'));
    await until('the matches', () => h.scene.el.querySelectorAll('[role="option"]').length === 2);
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(h.scene.el.querySelector('.map-results')?.textContent).toContain('src/gone.ts is not on the map yet.');
  });

  // The server's refusal as it said it; fetch's own failure (the server out of reach) in words, not the browser's "Failed to fetch".
  it.each([
    ['the server answered 400', () => new Response('{"error":"q"}', { status: 400 })],
    ['Orbit cannot be reached', () => { throw new TypeError('Failed to fetch'); }],
  ])('says when the search fails: %s', async (said, answer) => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())), '/search': answer });
    h.scene.render(h.ready);
    const box = h.scene.el.querySelector<HTMLInputElement>('[aria-label="Search files"]');
    if (!box) throw new Error('no search box');
    box.value = 'x';
    box.dispatchEvent(new Event('input'));
    await until('the note', () => h.scene.el.querySelector('.map-results')?.textContent.includes(`Search failed: ${said}`) ?? false);
  });

  it('pans and zooms with the keyboard, opens the file at the centre with Enter, clears with Escape; / focuses the search', async () => {
    const h = harness({ '/map': mapAnswer(encodeMap(sampleFixture())) });
    const view = await mapView(h);
    const cam = (): { x: number; y: number; zoom: number } => h.scene.inspect().camera ?? { x: 0, y: 0, zoom: 0 };
    const start = cam();
    const key = (k: string): void => {
      view.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
    };
    key('ArrowRight');
    expect(cam().x).toBeGreaterThan(start.x);
    key('ArrowDown');
    expect(cam().y).toBeGreaterThan(start.y);
    key('+');
    expect(cam().zoom).toBeCloseTo(start.zoom * 1.25);
    key('-');
    expect(cam().zoom).toBeCloseTo(start.zoom);
    key('Enter');
    expect(h.opened).toHaveLength(1);
    expect(h.scene.inspect().selected).toBe(h.opened[0]);
    key('Escape');
    expect(h.scene.inspect().selected).toBeNull();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: '/', bubbles: true }));
    expect(document.activeElement?.getAttribute('aria-label')).toBe('Search files');
    const button = (name: string): HTMLButtonElement | undefined =>
      Array.from(h.scene.el.querySelectorAll('button')).find((b) => b.textContent === name && !b.closest('[hidden]'));
    // Re-arrange asks first: Cancel (or Escape) moves nothing, and gives the focus back.
    button('Re-arrange')?.click();
    expect(h.rearranged).toBe(0);
    expect(document.activeElement?.textContent).toBe('Move every file');
    expect(button('Re-arrange')).toBeUndefined();
    button('Cancel')?.click();
    expect(h.rearranged).toBe(0);
    expect(document.activeElement?.textContent).toBe('Re-arrange');
    button('Re-arrange')?.click();
    document.activeElement?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(h.rearranged).toBe(0);
    expect(document.activeElement?.textContent).toBe('Re-arrange');
    button('Re-arrange')?.click();
    button('Move every file')?.click();
    expect(h.rearranged).toBe(1);
    expect(h.scene.el.textContent).toContain('Re-arranged: every file has a new place.');
    expect(document.activeElement?.textContent).toBe('Re-arrange');
  });
});
