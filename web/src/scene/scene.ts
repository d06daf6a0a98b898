/**
 * The map in the page's main area: the workspace's files and imports,
 * drawn by {@link Renderer} only on change. While the user drags, zooms or
 * the camera flies, the last frame is moved by a CSS transform; the real
 * redraw comes when the camera has been still for {@link SETTLE_MS}. An
 * effect (a file fading in or out) keeps the loop awake while it runs;
 * otherwise no frame is requested and no timer waits ("asleep").
 *
 * Around it: hover (path and import counts), click (the file panel), the
 * search box (`/search`), the keyboard, the legend, `Re-arrange`, and a
 * visible message when the map cannot load or be drawn.
 */
import type { SearchAnswer } from '../protocol/types';
import type { PreloadedMap } from '../protocol/preload';
import { validateSearchAnswer } from '../protocol/validate';
import type { PageState } from '../state/store';
import { clear, h, marked, uniqueId } from '../hud/dom';
import {
  clampZoom,
  fitCamera,
  flight,
  panBy,
  screenToWorld,
  transformBetween,
  worldToScreen,
  zoomAt,
  type Camera,
} from './camera';
import { LANGUAGE_LABELS, LANGUAGES, colourCss } from './languages';
import { HitGrid, pickLabels, type Label } from './lod';
import { MapSync, type MapMessage, type MapModel, type MapNode } from './model';
import { Renderer, WebGLUnavailable, type DrawStats, type Theme } from './renderer';
import { Overlay, type OverlayMessage } from './overlay';
import type { LitInfo, StarInfo, StationInfo } from './effects';
import type { ActivityInboxItem } from '../state/store';

/** The camera is "settled" after this long without a change; then the real redraw. */
export const SETTLE_MS = 150;
/** How long the map's hash may differ from the workspace's graph hash before the map is fetched again. */
export const HASH_GRACE_MS = 2000;
/**
 * A new map's labels come this long after its first frame (then at an idle
 * moment): every frame presented right after the first costs the GPU
 * process 20-40 ms on a software GPU (bench/README.md, branch `ff2`). A
 * camera change draws them at once.
 */
export const LABELS_AFTER_MS = 1000;
/** The device pixel ratio is capped here (a 4K laptop draws 4x the pixels of 2x for little gain). */
export const MAX_DPR = 2;
/** How long a flight to a file takes. */
export const FLY_MS = 600;
/** The zoom a flight to a file arrives at (at least). */
export const FILE_ZOOM = 28;

export interface SceneOptions {
  workspaceId: string;
  /** Opens a file in the file panel. */
  openFile: (path: string) => void;
  /** Sends the `rearrange` action. */
  rearrange: () => void;
  /** The map messages (`mapDelta`, `mapReset`, a fresh channel snapshot) received since the last call. */
  takeMapMessages: () => MapMessage[];
  /** Claude's activity and subagent messages received since the last call (the effects). */
  takeActivity?: () => ActivityInboxItem[];
  /** A read's comet landed on `path` (conversation `key`): its bubble lights cyan. */
  onRead?: (key: string, path: string) => void;
  fetch?: typeof fetch;
  /** Where the map's snapshot comes from instead of `GET /w/<id>/map` (a VS Code webview: through the editor). */
  fetchMap?: () => Promise<ArrayBuffer>;
  /** Puts the scene's element in the page as soon as it is built, before its WebGL context is made (the canvas then has its size first). */
  mount?: (el: HTMLElement) => void;
  /**
   * The map's bytes the page's HTML carried (`protocol/preload.ts`): the first
   * snapshot is taken from them instead of `/map` (later ones are fetched), in
   * the task that makes the scene, so its first frame is drawn in that task.
   */
  preloadedMap?: PreloadedMap;
}

export interface SceneInspection {
  graphHash: string | null;
  nodes: number;
  edges: number;
  loop: 'awake' | 'asleep';
  camera: { x: number; y: number; zoom: number } | null;
  firstFrame: boolean;
  contextLost: boolean;
  selected: string | null;
  hovered: string | null;
  /** Full frames drawn. */
  draws: number;
  /** `/map` fetches made. */
  fetches: number;
  /** What the map shows as its error, or null. */
  error: string | null;
  lod: { bundled: boolean; depth: number; lines: number; labels: number };
  /** What keeps the loop awake: a frame requested, the settle timer, a flight; removed files still fading. */
  wakers: { frame: boolean; settle: boolean; fly: boolean; fading: number; effects: boolean; idle: boolean };
  /** Files lit by Claude now (a read once its comet landed; glows fading out at a turn's end are not). */
  lit: LitInfo[];
  /** Each conversation's star and its subagents' (path null at home). */
  stars: StarInfo[];
  /** MCP stations out beside their conversation's star. */
  stations: StationInfo[];
  /** Activity batches held until the map reaches their graph hash. */
  heldActivity: number;
  /** Whether a thinking block's violet flash shows now. */
  flash: boolean;
  /** Comets in flight (none with reduced motion). */
  comets: number;
  /** The effects' frame cap now: ms between frames while something moves (33; 200 on a software GPU). */
  effectFrameMs: number;
  /** The least time between two frames the effects ask for on their own, not riding along the page's (the cap; 500 on a software GPU with the frame budget). */
  effectOwnFrameMs: number;
  /** Frames the effects drew, and of those the frames they asked for on their own (scene/overlay.ts). */
  effectFrames: number;
  effectOwnFrames: number;
}

/** Whether `gl` is drawn by a software rasterizer (every presented frame then costs the CPU). */
export function isSoftwareGpu(gl: WebGL2RenderingContext): boolean {
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name: unknown = gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
  return typeof name === 'string' && /swiftshader|llvmpipe|softpipe|software/i.test(name);
}

export interface NodeAt {
  x: number;
  y: number;
  /** Viewport (client) coordinates of the file's centre, as the camera shows it now. */
  screenX: number;
  screenY: number;
}

export interface Scene {
  readonly el: HTMLElement;
  render(state: PageState): void;
  inspect(): SceneInspection;
  nodeAt(path: string): NodeAt | null;
  /** Every file's position, by path. */
  positions(): Record<string, [number, number]>;
  /** One forced full redraw, waited for on the GPU; its milliseconds (null without WebGL). */
  redraw(): number | null;
  /** Benchmarks and tools: feeds the effects conversations and messages of their own (docs/page-protocol.md). */
  feedEffects(conversations: { key: string; inTurn: boolean }[], messages: OverlayMessage[]): void;
  /** Benchmarks: how long each effects frame took to draw (ms) since the last call. */
  effectFrameTimes(): number[];
  /** Whether a software GPU draws the page (every presented frame then costs the CPU); false until known. */
  software(): boolean;
}

type SearchMatch = SearchAnswer['matches'][number];

function themeFromPage(): Theme {
  const light = typeof window.matchMedia === 'function' && window.matchMedia('(prefers-color-scheme: light)').matches;
  return light
    ? { background: [1, 1, 1], edge: [0.25, 0.3, 0.4], outline: [0.35, 0.4, 0.45] }
    : { background: [13 / 255, 17 / 255, 23 / 255], edge: [0.55, 0.65, 0.85], outline: [0.6, 0.66, 0.72] };
}

const isTextField = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

export function createScene(options: SceneOptions): Scene {
  const fetchFn = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const base = `/w/${encodeURIComponent(options.workspaceId)}`;
  const now = (): number => performance.now();

  // --- DOM.
  const glCanvas = h('canvas', { class: 'map-canvas map-gl', 'aria-hidden': 'true' });
  // The labels: drawn by a 2D canvas that is not in the page, then into the map's own canvas
  // (renderer.drawImage). A transparent layer over the map would cost every frame the page
  // presents (the compositor blends it in: ~7 ms of the GPU process's CPU a frame on SwiftShader).
  const labelCanvas = h('canvas', { class: 'map-canvas map-labels', 'aria-hidden': 'true' });
  const hoverRing = h('div', { class: 'map-ring map-ring-hover', hidden: true });
  const selectRing = h('div', { class: 'map-ring map-ring-selected', hidden: true });
  const layer = h('div', { class: 'map-layer' }, glCanvas, hoverRing, selectRing);
  const tooltipId = uniqueId('map-tip');
  const tooltip = h('div', { class: 'map-tooltip', role: 'tooltip', id: tooltipId, hidden: true });
  const view = h('div', {
    class: 'map-view',
    tabindex: 0,
    role: 'application',
    'aria-label': 'Map view',
    'aria-roledescription': 'map',
    'aria-describedby': 'map-keys',
  }, layer);
  const keys = h('p', { class: 'sr-only map-keys', id: 'map-keys' }, 'Arrows pan, + and - zoom, 0 shows everything, / searches, Enter opens the file at the centre, Escape clears.');
  const status = h('p', { class: 'map-status', role: 'status' });
  const message = h('div', { class: 'map-message', role: 'alert', hidden: true });
  const retry = h('button', { type: 'button', onclick: () => { sync.refetch(); } }, 'Try again');
  const caption = h('p', { class: 'scene-caption muted' });

  const listId = uniqueId('map-results');
  const searchBox = h('input', {
    type: 'search',
    class: 'map-search-box',
    role: 'combobox',
    'aria-label': 'Search files',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    placeholder: 'Search files ( / )',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const results = h('ul', { class: 'map-results', role: 'listbox', id: listId, 'aria-label': 'Matching files', hidden: true });
  // `Re-arrange` moves every file, which cannot be undone: it asks first (in place, the focus on the answer).
  const rearrangeButton = h('button', { type: 'button', class: 'map-rearrange', onclick: () => { askRearrange(true); } }, 'Re-arrange');
  const rearrangeYes = h('button', { type: 'button', onclick: () => { answerRearrange(true); } }, 'Move every file');
  const rearrangeNo = h('button', { type: 'button', onclick: () => { answerRearrange(false); } }, 'Cancel');
  const rearrangeAsk = h(
    'div',
    {
      class: 'map-rearrange-ask',
      role: 'group',
      'aria-label': 'Re-arrange the map',
      hidden: true,
      onkeydown: (e: Event) => {
        if ((e as KeyboardEvent).key !== 'Escape') return;
        e.stopPropagation();
        answerRearrange(false);
      },
    },
    h('span', null, 'Every file takes a new place.'),
    rearrangeYes,
    rearrangeNo,
  );
  const askRearrange = (ask: boolean): void => {
    rearrangeButton.hidden = ask;
    rearrangeAsk.hidden = !ask;
    (ask ? rearrangeYes : rearrangeButton).focus();
  };
  const answerRearrange = (yes: boolean): void => {
    askRearrange(false);
    if (!yes) return;
    options.rearrange();
    status.textContent = 'Re-arranged: every file has a new place.';
  };
  const legend = h('ul', { class: 'map-legend', 'aria-label': 'Languages' });
  const tools = h('div', { class: 'map-tools' }, h('div', { class: 'map-search' }, searchBox, results), rearrangeButton, rearrangeAsk);

  // Whether a software GPU (SwiftShader, llvmpipe) draws the map: the effects then run at fewer frames a second.
  // Asked when the effects first need it, not while the map starts (the renderer's name is a round trip to the GPU process).
  let softwareGpu: boolean | null = null;
  /** The map's WebGL2 context, once made (below). */
  let gl: WebGL2RenderingContext | null = null;
  /** Whether the map's first frame has been drawn: the GPU is not asked its name before (false until then). */
  let started = false;
  const software = (): boolean => {
    if (softwareGpu === null && started && gl && !gl.isContextLost()) softwareGpu = isSoftwareGpu(gl);
    return softwareGpu ?? false;
  };
  const overlay = new Overlay({
    software,
    model: () => model,
    camera: () => drawnCam,
    size: () => ({ width, height, dpr, fitZoom }),
    ...(options.onRead ? { onRead: options.onRead } : {}),
  });
  glCanvas.after(overlay.canvas);
  layer.append(overlay.starLayer);
  tools.append(overlay.blastEl);

  const el = h('div', { class: 'scene', role: 'region', 'aria-label': 'Map' }, view, tooltip, tools, legend, caption, status, message, keys, overlay.popup);

  // --- State.
  let renderer: Renderer | null = null;
  let contextLost = false;
  let model: MapModel | null = null;
  let cam: Camera | null = null;
  let drawnCam: Camera | null = null;
  let fitZoom = 1;
  let userMoved = false;
  let refitNext = false;
  let width = 0;
  let height = 0;
  let dpr = 1;
  let raf = 0;
  let settleTimer: ReturnType<typeof setTimeout> | null = null;
  let fly: { from: Camera; to: Camera; start: number; duration: number } | null = null;
  let needFull = false;
  let draws = 0;
  let firstFrame = false;
  let firstFrameOf: MapModel | null = null;
  let selected: string | null = null;
  let hovered: string | null = null;
  let grid: { version: number; grid: HitGrid } | null = null;
  let lastStats: DrawStats = { points: 0, lines: 0, bundled: false, depth: 0 };
  let labelCount = 0;
  let loadError: string | null = null;
  let glError: string | null = null;
  /** Whether the channel has been whole once (its later fresh snapshots fetch the map again). */
  let seenReady = false;
  let legendKey = '';
  /** What a new map's first frame leaves for the next idle moments: its labels, then its files' objects. */
  let labelWork: { cancel: () => void } | null = null;
  let modelWork: { cancel: () => void } | null = null;

  const fetchMap = options.fetchMap ?? (async () => {
    const response = await fetchFn(`${base}/map`, { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`the server answered ${response.status} ${response.statusText}`.trim());
    return response.arrayBuffer();
  });
  /** The HTML's map, for the first snapshot only. */
  let preloaded = options.preloadedMap ?? null;
  const sync = new MapSync({
    fetchMap: () => {
      const first = preloaded;
      preloaded = null;
      if (first === null) return fetchMap();
      // Settled now: decoded and drawn in this task's microtasks, before the page presents a frame.
      return first.ok ? Promise.resolve(first.bytes) : Promise.reject(new Error(first.error));
    },
    onChange: (m, fresh) => {
      model = m;
      if (fresh && (cam === null || refitNext || !userMoved)) {
        refitNext = false;
        fit(false);
      }
      if (selected !== null && !m.nodes.has(selected)) selected = null;
      if (hovered !== null && !m.nodes.has(hovered)) setHovered(null);
      renderLegend();
      overlay.modelChanged();
      // A new map is drawn now, not at the next animation frame (the first
      // frame is the one the user waits for); a change waits for the frame.
      if (fresh && !contextLost) drawFull(now());
      else invalidate();
    },
    onError: (text) => {
      loadError = text === null ? null : `The map could not be loaded: ${text}`;
      showMessage();
    },
  });

  function showMessage(): void {
    const texts = [glError, loadError].filter((t): t is string => t !== null);
    message.hidden = texts.length === 0;
    clear(message);
    for (const text of texts) message.append(h('p', null, text));
    if (loadError !== null) message.append(retry);
  }

  /** The file nearest the view's centre, among those in view. */
  function nearestCentre(): MapNode | null {
    if (!model || !cam) return null;
    const halfW = width / 2 / cam.zoom;
    const halfH = height / 2 / cam.zoom;
    let best: MapNode | null = null;
    let bestD = Infinity;
    for (const node of model.list()) {
      const dx = node.x - cam.x;
      const dy = node.y - cam.y;
      if (Math.abs(dx) > halfW || Math.abs(dy) > halfH) continue;
      const d = dx * dx + dy * dy;
      if (d < bestD) {
        bestD = d;
        best = node;
      }
    }
    return best;
  }

  // The map is fetched at once, beside the channel's connection (a delta
  // that falls between the two is caught by the hash check below), and
  // before the WebGL context is made (which takes tens of milliseconds on a
  // software renderer): the two overlap. Bytes the HTML carried are decoded
  // and drawn in this task's microtasks, once the context is made below: no
  // rendering opportunity falls between the context and the map's first draw.
  sync.refetch();

  // In the page (where the caller puts it) and sized before the context is
  // made: a context made at the canvas's default 300x150 would make its
  // buffers again on the first resize.
  if (options.mount) {
    options.mount(el);
    resize();
  }

  // --- WebGL.
  gl = glCanvas.getContext('webgl2', { antialias: false, alpha: false, depth: false, stencil: false, preserveDrawingBuffer: false, powerPreference: 'high-performance' });
  if (!gl) {
    glError = 'The map cannot be drawn: this browser has no WebGL2 (try another browser, or enable hardware acceleration).';
  } else {
    try {
      renderer = new Renderer(gl, themeFromPage());
    } catch (error) {
      glError = `The map cannot be drawn: ${error instanceof WebGLUnavailable ? error.message : String(error)}`;
    }
  }
  showMessage();
  // The map follows the page's colour scheme while it is open (the system's switches at dusk and
  // dawn): a full frame in the new colours (the labels take theirs from the page's style then).
  if (typeof window.matchMedia === 'function') {
    window.matchMedia('(prefers-color-scheme: light)').addEventListener('change', () => {
      renderer?.setTheme(themeFromPage());
      invalidate();
    });
  }
  glCanvas.addEventListener('webglcontextlost', (event) => {
    event.preventDefault();
    contextLost = true;
    if (raf) cancelAnimationFrame(raf);
    raf = 0;
  });
  glCanvas.addEventListener('webglcontextrestored', () => {
    contextLost = false;
    try {
      renderer?.init();
    } catch (error) {
      glError = `The map cannot be drawn: ${String(error)}`;
      showMessage();
      return;
    }
    invalidate();
  });

  // --- The loop.
  function schedule(): void {
    if (raf || contextLost) return;
    raf = requestAnimationFrame(frame);
  }

  function invalidate(): void {
    needFull = true;
    schedule();
  }

  function frame(): void {
    raf = 0;
    const t = now();
    if (fly && cam) {
      const p = fly.duration > 0 ? (t - fly.start) / fly.duration : 1;
      cam = flight(fly.from, fly.to, p);
      if (p >= 1) {
        fly = null;
        needFull = true;
      } else {
        applyTransform();
      }
    }
    // Removed files whose fade has ended leave (one more frame without them).
    if (model && model.fading.length > 0) {
      const before = model.fading.length;
      model.prune(t);
      if (model.fading.length !== before) needFull = true;
    }
    const animating = model?.animating(t) ?? false;
    if (needFull || animating) drawFull(t);
    if (fly || animating) schedule();
  }

  function settle(): void {
    if (settleTimer !== null) clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      settleTimer = null;
      invalidate();
    }, SETTLE_MS);
  }

  function drawFull(t: number): void {
    needFull = false;
    if (!model || !cam || width === 0 || height === 0) return;
    if (model.fading.length > 0) model.prune(t);
    let first = false;
    if (renderer && !contextLost) {
      lastStats = renderer.draw(model, cam, width, height, dpr, fitZoom, t);
      if (firstFrameOf !== model) {
        first = true;
        firstFrameOf = model;
        // Marked when the GPU has drawn it. (A fence polled from timers
        // frees the page meanwhile, but its mark then waits behind whatever
        // the page does next, the snapshot's frames: 0.2-0.4 s late here.)
        renderer.finish();
        performance.mark('orbit:first-frame');
        firstFrame = true;
        started = true;
      }
    }
    drawnCam = { ...cam };
    layer.style.transform = '';
    const labelsWaited = labelWork !== null;
    labelWork?.cancel();
    labelWork = null;
    if (first) {
      // A new map's labels, then its files' objects (hover, search,
      // effects), come once the page has settled (LABELS_AFTER_MS, then an
      // idle moment): the first frame does not wait for them, and the
      // labels' frame is not presented while the browser is still showing
      // the page's first frames (the chrome's comes right after the map's).
      const m = model;
      const c = drawnCam;
      modelWork?.cancel();
      labelWork = whenSettled(() => {
        labelWork = null;
        // Into the map's canvas: the map again (the frame shown is done with), then its labels.
        if (renderer && !contextLost && m === model) {
          lastStats = renderer.draw(m, c, width, height, dpr, fitZoom, now());
          drawLabels(m, c);
        }
        modelWork = whenIdle(() => {
          modelWork = null;
          m.materialize();
        });
      });
    } else {
      drawLabels(model, cam);
      if (labelsWaited && modelWork === null) {
        // Drawn now instead: the files' objects still come at an idle moment.
        const m = model;
        modelWork = whenIdle(() => {
          modelWork = null;
          m.materialize();
        });
      }
    }
    placeRings();
    overlay.redraw();
    draws += 1;
    caption.textContent = `${model.nodeCount} files · ${model.edgeCount} imports`;
  }

  /** Runs `work` {@link LABELS_AFTER_MS} from now, when the page is idle. */
  function whenSettled(work: () => void): { cancel: () => void } {
    let idle: { cancel: () => void } | null = null;
    const handle = setTimeout(() => { idle = whenIdle(work); }, LABELS_AFTER_MS);
    return {
      cancel: () => {
        clearTimeout(handle);
        idle?.cancel();
      },
    };
  }

  /** Runs `work` when the page is idle (at most 200 ms from now). */
  function whenIdle(work: () => void): { cancel: () => void } {
    if (typeof window.requestIdleCallback === 'function') {
      const handle = window.requestIdleCallback(work, { timeout: 200 });
      return { cancel: () => { window.cancelIdleCallback(handle); } };
    }
    const handle = setTimeout(work, 0);
    return { cancel: () => { clearTimeout(handle); } };
  }

  function drawLabels(m: MapModel, c: Camera): void {
    const ctx = labelCanvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const labels: Label[] = pickLabels(m, c, width, height);
    labelCount = labels.length;
    if (labels.length === 0) return;
    const style = getComputedStyle(el);
    const fg = style.getPropertyValue('--fg').trim() || '#e6edf3';
    const muted = style.getPropertyValue('--muted').trim() || '#9aa6b2';
    const bg = style.getPropertyValue('--bg').trim() || '#0d1117';
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    ctx.lineWidth = 3;
    ctx.strokeStyle = bg;
    for (const label of labels) {
      ctx.font = label.kind === 'folder' ? '600 12px system-ui, sans-serif' : '11px system-ui, sans-serif';
      ctx.fillStyle = label.kind === 'folder' ? muted : fg;
      ctx.strokeText(label.text, label.sx, label.sy, 140);
      ctx.fillText(label.text, label.sx, label.sy, 140);
    }
    if (renderer && !contextLost) renderer.drawImage(labelCanvas);
  }

  function applyTransform(): void {
    if (!cam || !drawnCam) return;
    const { k, tx, ty } = transformBetween(drawnCam, cam, width, height);
    layer.style.transform = `translate(${tx}px, ${ty}px) scale(${k})`;
  }

  function setCamera(next: Camera, byUser = true): void {
    cam = next;
    if (byUser) userMoved = true;
    fly = null;
    applyTransform();
    settle();
  }

  function fit(animate: boolean): void {
    const root = model?.folders.get('')?.rects[0];
    if (!root || width === 0) return;
    const target = fitCamera(root, width, height);
    fitZoom = target.zoom;
    if (animate && cam) flyTo(target);
    else {
      cam = target;
      userMoved = false;
    }
  }

  function flyTo(target: Camera): void {
    if (!cam) {
      cam = target;
      invalidate();
      return;
    }
    const reduced = typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    // The pointer's file is somewhere else once the map has flown: its tooltip goes.
    setHovered(null);
    fly = { from: { ...cam }, to: target, start: now(), duration: reduced ? 0 : FLY_MS };
    userMoved = true;
    schedule();
  }

  // --- Size.
  function resize(): void {
    const rect = view.getBoundingClientRect();
    const w = Math.round(rect.width);
    const hh = Math.round(rect.height);
    if (w === width && hh === height) return;
    width = w;
    height = hh;
    dpr = Math.min(window.devicePixelRatio || 1, MAX_DPR);
    for (const canvas of [glCanvas, labelCanvas]) {
      canvas.width = Math.max(1, Math.round(w * dpr));
      canvas.height = Math.max(1, Math.round(hh * dpr));
    }
    overlay.resize(w, hh, dpr);
    const root = model?.folders.get('')?.rects[0];
    if (root && w > 0) fitZoom = fitCamera(root, w, hh).zoom;
    if (!userMoved || cam === null) fit(false);
    invalidate();
  }
  if (typeof ResizeObserver === 'function') new ResizeObserver(resize).observe(view);

  // --- Finding files.
  function hitGrid(): HitGrid | null {
    if (!model) return null;
    if (grid?.version !== model.version) grid = { version: model.version, grid: new HitGrid(model.list()) };
    return grid.grid;
  }

  function nodeUnder(clientX: number, clientY: number): MapNode | null {
    if (!cam) return null;
    const rect = view.getBoundingClientRect();
    const [wx, wy] = screenToWorld(cam, width, height, clientX - rect.left, clientY - rect.top);
    const radius = Math.min(16, Math.max(0.6, 8 / cam.zoom));
    return hitGrid()?.nearest(wx, wy, radius) ?? null;
  }

  function ringAt(ring: HTMLElement, path: string | null): void {
    const node = path === null ? undefined : model?.nodes.get(path);
    if (!node || !drawnCam) {
      ring.hidden = true;
      return;
    }
    const [sx, sy] = worldToScreen(drawnCam, width, height, node.x, node.y);
    const size = Math.min(28, Math.max(2, drawnCam.zoom * 0.7)) + 8;
    ring.style.left = `${sx - size / 2}px`;
    ring.style.top = `${sy - size / 2}px`;
    ring.style.width = `${size}px`;
    ring.style.height = `${size}px`;
    ring.hidden = false;
  }

  function placeRings(): void {
    ringAt(hoverRing, hovered);
    ringAt(selectRing, selected);
  }

  function describe(node: MapNode): string {
    const lang = LANGUAGE_LABELS[LANGUAGES[node.lang] ?? 'text'];
    return `${lang} · imports ${node.out} · imported by ${node.in}`;
  }

  function setHovered(node: MapNode | null, clientX = 0, clientY = 0): void {
    hovered = node?.path ?? null;
    if (!node) {
      tooltip.hidden = true;
      view.removeAttribute('aria-describedby');
      view.setAttribute('aria-describedby', 'map-keys');
      ringAt(hoverRing, null);
      return;
    }
    clear(tooltip);
    tooltip.append(h('strong', { class: 'map-tooltip-path' }, node.path), h('span', { class: 'map-tooltip-counts' }, describe(node)));
    const rect = el.getBoundingClientRect();
    const viewRect = view.getBoundingClientRect();
    const [sx, sy] = cam ? worldToScreen(cam, width, height, node.x, node.y) : [clientX - viewRect.left, clientY - viewRect.top];
    tooltip.style.left = `${Math.min(sx + viewRect.left - rect.left + 14, Math.max(0, rect.width - 320))}px`;
    tooltip.style.top = `${sy + viewRect.top - rect.top + 14}px`;
    tooltip.hidden = false;
    view.setAttribute('aria-describedby', `${tooltipId} map-keys`);
    ringAt(hoverRing, node.path);
  }

  function select(path: string | null): void {
    selected = path;
    const node = path === null ? undefined : model?.nodes.get(path);
    status.textContent = node ? `Selected ${node.path}: ${describe(node)}` : '';
    ringAt(selectRing, selected);
  }

  function open(node: MapNode): void {
    select(node.path);
    options.openFile(node.path);
  }

  /** Flies to a file and selects it. */
  function goTo(path: string): boolean {
    const node = model?.nodes.get(path);
    if (!node) return false;
    select(path);
    flyTo({ x: node.x, y: node.y, zoom: clampZoom(Math.max(cam?.zoom ?? 1, FILE_ZOOM)) });
    return true;
  }

  // --- Pointer.
  let drag: { id: number; x: number; y: number; cam: Camera; moved: boolean } | null = null;
  view.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || !cam) return;
    view.focus({ preventScroll: true });
    drag = { id: e.pointerId, x: e.clientX, y: e.clientY, cam: { ...cam }, moved: false };
    try {
      view.setPointerCapture(e.pointerId);
    } catch {
      // A synthetic pointer has nothing to capture.
    }
  });
  view.addEventListener('pointermove', (e) => {
    if (drag && drag.id === e.pointerId) {
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      if (!drag.moved) {
        drag.moved = true;
        view.classList.add('dragging');
        setHovered(null);
      }
      setCamera(panBy(drag.cam, dx, dy));
      return;
    }
    const node = nodeUnder(e.clientX, e.clientY);
    if ((node?.path ?? null) !== hovered) setHovered(node, e.clientX, e.clientY);
  });
  const endDrag = (e: PointerEvent, click: boolean): void => {
    if (!drag || drag.id !== e.pointerId) return;
    const wasClick = !drag.moved;
    drag = null;
    view.classList.remove('dragging');
    if (!click || !wasClick) return;
    const node = nodeUnder(e.clientX, e.clientY);
    if (node) open(node);
    else select(null);
  };
  view.addEventListener('pointerup', (e) => { endDrag(e, true); });
  view.addEventListener('pointercancel', (e) => { endDrag(e, false); });
  view.addEventListener('pointerleave', () => {
    if (!drag) setHovered(null);
  });
  view.addEventListener('wheel', (e) => {
    if (!cam) return;
    e.preventDefault();
    const rect = view.getBoundingClientRect();
    const delta = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
    setCamera(zoomAt(cam, width, height, e.clientX - rect.left, e.clientY - rect.top, Math.exp(-delta * 0.0015)));
    hoverAt(e);
  }, { passive: false });
  view.addEventListener('dblclick', (e) => {
    if (!cam) return;
    const rect = view.getBoundingClientRect();
    setCamera(zoomAt(cam, width, height, e.clientX - rect.left, e.clientY - rect.top, 2));
    hoverAt(e);
  });
  /** After a zoom at the pointer: the file now under it (or none), its tooltip where it now is. */
  function hoverAt(e: MouseEvent): void {
    setHovered(nodeUnder(e.clientX, e.clientY), e.clientX, e.clientY);
  }

  // --- Keyboard.
  // The keys shown while the map has the focus go once one is used (they covered part of a short map), until the focus leaves.
  view.addEventListener('blur', () => { view.classList.remove('keys-known'); });
  view.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab' && e.key !== 'Shift') view.classList.add('keys-known');
    if (!cam) return;
    const step = 0.15;
    let next: Camera;
    switch (e.key) {
      case 'ArrowLeft': next = panBy(cam, width * step, 0); break;
      case 'ArrowRight': next = panBy(cam, -width * step, 0); break;
      case 'ArrowUp': next = panBy(cam, 0, height * step); break;
      case 'ArrowDown': next = panBy(cam, 0, -height * step); break;
      case '+': case '=': next = zoomAt(cam, width, height, width / 2, height / 2, 1.25); break;
      case '-': case '_': next = zoomAt(cam, width, height, width / 2, height / 2, 0.8); break;
      case '0': fit(true); setHovered(null); invalidate(); e.preventDefault(); return;
      case 'Enter': {
        const node = (hovered !== null ? model?.nodes.get(hovered) : undefined) ?? nearestCentre();
        if (node) open(node);
        // Said (the status is read out), not silence: the keys had zoomed into an empty room.
        else status.textContent = 'No file in view here: 0 shows everything, / searches.';
        e.preventDefault();
        return;
      }
      case 'Escape':
        select(null);
        setHovered(null);
        e.preventDefault();
        return;
      default: return;
    }
    e.preventDefault();
    // The view moved under a still pointer: the file it hovered is elsewhere now (and Enter
    // opens the file at the centre, not that one); the status says the selection again (not a
    // "No file in view" from before the move).
    setHovered(null);
    select(selected);
    setCamera(next);
  });
  document.addEventListener('keydown', (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || isTextField(e.target)) return;
    if (!el.isConnected) return;
    e.preventDefault();
    searchBox.focus();
    searchBox.select();
  });

  // --- Search.
  let searchRequest = 0;
  let searchTimer: ReturnType<typeof setTimeout> | null = null;
  let matches: SearchMatch[] = [];
  let active = -1;

  function showResults(list: SearchMatch[], note: string | null): void {
    matches = list;
    active = list.length > 0 ? 0 : -1;
    clear(results);
    list.forEach((m, i) => {
      const parts = marked(m.path, m.indices);
      const option = h('li', {
        role: 'option',
        id: `${listId}-${i}`,
        class: 'map-result',
        'aria-selected': i === active ? 'true' : 'false',
        onmousedown: (e: Event) => { e.preventDefault(); },
        onclick: () => { choose(i); },
      }, ...parts);
      results.append(option);
    });
    if (note !== null) results.append(h('li', { class: 'map-result-note', role: 'presentation' }, note));
    const open = list.length > 0 || note !== null;
    results.hidden = !open;
    searchBox.setAttribute('aria-expanded', open ? 'true' : 'false');
    markActive();
  }

  function markActive(): void {
    Array.from(results.querySelectorAll('[role="option"]')).forEach((li, i) => {
      li.setAttribute('aria-selected', i === active ? 'true' : 'false');
      if (i === active && typeof (li as HTMLElement).scrollIntoView === 'function') (li as HTMLElement).scrollIntoView({ block: 'nearest' });
    });
    if (active >= 0) searchBox.setAttribute('aria-activedescendant', `${listId}-${active}`);
    else searchBox.removeAttribute('aria-activedescendant');
  }

  function closeResults(): void {
    showResults([], null);
  }

  function choose(i: number): void {
    const m = matches[i];
    if (!m) return;
    if (goTo(m.path)) {
      closeResults();
      searchBox.value = m.path;
    } else {
      showResults(matches, `${m.path} is not on the map yet.`);
    }
  }

  async function search(q: string): Promise<void> {
    searchRequest += 1;
    const request = searchRequest;
    if (q.trim() === '') {
      closeResults();
      return;
    }
    let list: SearchMatch[];
    try {
      let response: Response;
      try {
        response = await fetchFn(`${base}/search?q=${encodeURIComponent(q)}&limit=20`, { credentials: 'same-origin' });
      } catch {
        // fetch's own failure ("Failed to fetch") is the server out of reach: said so in words.
        throw new Error('Orbit cannot be reached (the page reconnects by itself when it is back)');
      }
      if (!response.ok) throw new Error(`the server answered ${response.status}`);
      const checked = validateSearchAnswer(await response.json());
      if (!checked.ok) throw new Error(checked.error);
      list = checked.value.matches;
    } catch (error) {
      if (request === searchRequest) showResults([], `Search failed: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (request !== searchRequest) return;
    showResults(list, list.length === 0 ? 'No file matches.' : null);
  }

  searchBox.addEventListener('input', () => {
    if (searchTimer !== null) clearTimeout(searchTimer);
    const q = searchBox.value.slice(0, 256);
    searchTimer = setTimeout(() => {
      searchTimer = null;
      void search(q);
    }, 80);
  });
  searchBox.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (matches.length === 0) return;
      e.preventDefault();
      active = (active + (e.key === 'ArrowDown' ? 1 : -1) + matches.length) % matches.length;
      markActive();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (searchTimer !== null) {
        // Enter before the answer: search now, then take the best.
        clearTimeout(searchTimer);
        searchTimer = null;
        void search(searchBox.value.slice(0, 256)).then(() => { choose(Math.max(0, active)); });
        return;
      }
      choose(Math.max(0, active));
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (searchBox.value !== '' || !results.hidden) {
        searchBox.value = '';
        searchRequest += 1;
        closeResults();
      } else {
        view.focus();
      }
    }
  });
  searchBox.addEventListener('blur', () => {
    setTimeout(() => {
      if (document.activeElement !== searchBox) closeResults();
    }, 150);
  });

  // --- Legend.
  function renderLegend(): void {
    const counts = model?.languageCounts() ?? new Array<number>(LANGUAGES.length).fill(0);
    const key = counts.join(',');
    if (key === legendKey) return;
    legendKey = key;
    clear(legend);
    counts.forEach((count, i) => {
      if (count === 0) return;
      const name = LANGUAGES[i] ?? 'text';
      const swatch = h('span', { class: 'map-swatch', 'aria-hidden': 'true' });
      swatch.style.backgroundColor = colourCss(i);
      legend.append(h('li', { class: 'map-legend-item', 'data-language': name }, swatch, `${LANGUAGE_LABELS[name]} `, h('span', { class: 'muted' }, String(count))));
    });
  }

  // --- A missed delta that no later one reveals: the workspace's graph hash
  // says so. A mismatch that lasts (a delta may trail the workspace message)
  // fetches once for that hash.
  let hashTimer: ReturnType<typeof setTimeout> | null = null;
  let checkedHash: string | null = null;
  let wsHash: string | null = null;
  function checkHash(hash: string | null): void {
    wsHash = hash;
    if (hash === null || hashTimer !== null || hash === checkedHash) return;
    if (!model || model.hash === hash || sync.isFetching()) return;
    hashTimer = setTimeout(() => {
      hashTimer = null;
      if (!model || wsHash === null || model.hash === wsHash || sync.isFetching() || wsHash === checkedHash) return;
      checkedHash = wsHash;
      sync.refetch();
    }, HASH_GRACE_MS);
  }

  // --- The scene's face.
  function loopState(): 'awake' | 'asleep' {
    return raf !== 0 || settleTimer !== null || fly !== null || labelWork !== null || modelWork !== null || overlay.awake() ? 'awake' : 'asleep';
  }

  return {
    el,
    render(state) {
      for (const m of options.takeMapMessages()) {
        // The channel's first snapshot is the page's own start: the fetch
        // runs already (unless it failed: then it is made again).
        if (m.type === 'snapshot' && !seenReady && loadError === null) continue;
        if (m.type === 'mapReset' && m.reason === 'rearranged') refitNext = true;
        sync.receive(m);
      }
      if (state.ready) seenReady = true;
      // Laid out before the ResizeObserver said so (or without one).
      if (width === 0) resize();
      checkHash(state.workspace?.graph.hash ?? null);
      overlay.update(state, options.takeActivity?.() ?? []);
    },
    inspect() {
      return {
        graphHash: model?.hash ?? null,
        nodes: model?.nodeCount ?? 0,
        edges: model?.edgeCount ?? 0,
        loop: loopState(),
        camera: cam ? { x: cam.x, y: cam.y, zoom: cam.zoom } : null,
        firstFrame,
        contextLost,
        selected,
        hovered,
        draws,
        fetches: sync.fetches,
        error: [glError, loadError].filter((t) => t !== null).join(' ') || null,
        lod: { bundled: lastStats.bundled, depth: lastStats.depth, lines: lastStats.lines, labels: labelCount },
        wakers: { frame: raf !== 0, settle: settleTimer !== null, fly: fly !== null, fading: model?.fading.length ?? 0, effects: overlay.awake(), idle: labelWork !== null || modelWork !== null },
        ...overlay.inspect(),
        heldActivity: overlay.gate.heldCount(),
      };
    },
    nodeAt(path) {
      const node = model?.nodes.get(path);
      if (!node) return null;
      const rect = view.getBoundingClientRect();
      const [sx, sy] = cam ? worldToScreen(cam, width, height, node.x, node.y) : [Number.NaN, Number.NaN];
      return { x: node.x, y: node.y, screenX: rect.left + sx, screenY: rect.top + sy };
    },
    positions() {
      const out: Record<string, [number, number]> = {};
      for (const node of model?.list() ?? []) out[node.path] = [node.x, node.y];
      return out;
    },
    feedEffects(conversations, messages) {
      overlay.feed(conversations, messages);
    },
    effectFrameTimes() {
      return overlay.takeFrameTimes();
    },
    software,
    redraw() {
      if (!renderer || !model || !cam || contextLost) return null;
      const t0 = performance.now();
      renderer.invalidateView();
      drawFull(now());
      renderer.finish();
      return performance.now() - t0;
    },
  };
}
