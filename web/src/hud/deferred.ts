/**
 * Stand-ins for the parts of the HUD whose code is not in the page's entry
 * (`later.ts`): each has its element in the page from the start (empty, or
 * hidden, so nothing moves when the real one takes its place) and the same
 * interface as the real part. Calls made before the code arrives are kept
 * and replayed (a render, a file to open, a Ctrl+F), so no control is ever
 * dead: a control is either not there yet or works.
 *
 * The map's code (`scene/`) is in the entry, and the map is made at the end
 * of the entry's task; the rest is imported once the page has settled after
 * its first frame (`later.ts`, `afterSettled`).
 */
import type { PageState } from '../state/store';
import type { OverlayMessage } from '../scene/overlay';
import { createScene, type NodeAt, type Scene, type SceneInspection, type SceneOptions } from '../scene/scene';
import type { SearchHost } from './search';
import type { PanelsHost, PanelsInspect } from './panels';
import { h } from './dom';
import { afterSettled } from './later';

/** Something the page says when a part's code could not be loaded (the server stopped, a broken build). */
export type LoadFailed = (what: string, error: unknown) => void;

/** Replaces `placeholder` by `el` where it stands (and keeps it where it is when it is not in the DOM yet). */
function swap(placeholder: HTMLElement, el: HTMLElement): void {
  if (placeholder.parentNode) placeholder.replaceWith(el);
}

/** What the map says before its code has arrived. */
function loadingInspection(error: string | null): SceneInspection {
  return {
    graphHash: null,
    nodes: 0,
    edges: 0,
    loop: error === null ? 'awake' : 'asleep',
    camera: null,
    firstFrame: false,
    contextLost: false,
    selected: null,
    hovered: null,
    draws: 0,
    fetches: 0,
    error,
    lod: { bundled: false, depth: 0, lines: 0, labels: 0 },
    wakers: { frame: false, settle: false, fly: false, fading: 0, effects: false, idle: false },
    lit: [],
    stars: [],
    stations: [],
    heldActivity: 0,
    flash: false,
    comets: 0,
    effectFrameMs: 0,
    effectOwnFrameMs: 0,
    effectFrames: 0,
    effectOwnFrames: 0,
  };
}

/**
 * The map, made at the end of the task that mounts the HUD (a microtask:
 * the HUD is in the page by then, so its canvas has its size before the
 * WebGL context is made). Its code is in the entry: as a chunk of its own
 * its `import()` came back only after the tasks queued meanwhile (the
 * socket's opening, the HUD's first render), 20-30 ms after the entry on
 * this machine, while the map's bytes (preloaded with the HTML) waited.
 */
export function deferredScene(options: SceneOptions, failed: LoadFailed, start: () => Promise<void> | null = () => null): Scene {
  const placeholder = h('div', { class: 'scene' });
  let real: Scene | null = null;
  let error: string | null = null;
  let lastState: PageState | null = null;
  const fed: [{ key: string; inTurn: boolean }[], OverlayMessage[]][] = [];
  const make = (): void => {
    try {
      const scene = createScene({ ...options, mount: (el) => { swap(placeholder, el); } });
      real = scene;
      if (lastState) scene.render(lastState);
      for (const [conversations, messages] of fed.splice(0)) scene.feedEffects(conversations, messages);
    } catch (e: unknown) {
      error = 'The map could not be started; reload the page.';
      placeholder.textContent = error;
      placeholder.setAttribute('role', 'alert');
      failed('the map', e);
    }
  };
  // `start` is asked once the mounting task's script has run (the page's entry decides then).
  queueMicrotask(() => {
    const later = start();
    if (later === null) make();
    else void later.then(make, make);
  });
  return {
    get el() {
      return real?.el ?? placeholder;
    },
    render(state) {
      if (real) real.render(state);
      else lastState = state;
    },
    inspect: () => real?.inspect() ?? loadingInspection(error),
    nodeAt: (path): NodeAt | null => real?.nodeAt(path) ?? null,
    positions: () => real?.positions() ?? {},
    redraw: () => real?.redraw() ?? null,
    feedEffects(conversations, messages) {
      if (real) real.feedEffects(conversations, messages);
      else fed.push([conversations, messages]);
    },
    effectFrameTimes: () => real?.effectFrameTimes() ?? [],
    software: () => real?.software() ?? false,
  };
}

/** What the drawer needs of the prompt's attachments (the panels' composer). */
export interface Attachments {
  el: HTMLElement;
  attachments(): { skills: string[]; files: string[] };
  clearAttachments(): void;
  bindDrop(target: HTMLElement): void;
}

export interface DeferredPanels {
  toolbar: HTMLElement;
  el: HTMLElement;
  continuation: HTMLElement;
  composer: Attachments;
  render(state: PageState, shown: string | null): void;
  inspect(): PanelsInspect;
}

/** The panels (`panels/`), once the page has settled after its first frame: their buttons appear when their code has arrived. */
export function deferredPanels(host: PanelsHost, failed: LoadFailed): DeferredPanels {
  const toolbar = h('div', { class: 'panel-buttons' });
  const el = h('div', { class: 'panels' });
  const continuation = h('p', { class: 'continuation muted', hidden: true });
  const composerEl = h('div', { hidden: true });
  let real: ReturnType<typeof import('./panels').mountPanels> | null = null;
  let last: [PageState, string | null] | null = null;
  const drops: HTMLElement[] = [];
  void afterSettled(() => import('./panels')).then(({ mountPanels }) => {
    const panels = mountPanels(host);
    real = panels;
    swap(toolbar, panels.toolbar);
    swap(el, panels.el);
    swap(continuation, panels.continuation);
    swap(composerEl, panels.composer.el);
    for (const target of drops.splice(0)) panels.composer.bindDrop(target);
    if (last) panels.render(...last);
  }).catch((e: unknown) => { failed('the panels', e); });
  return {
    get toolbar() {
      return real?.toolbar ?? toolbar;
    },
    get el() {
      return real?.el ?? el;
    },
    get continuation() {
      return real?.continuation ?? continuation;
    },
    composer: {
      get el() {
        return real?.composer.el ?? composerEl;
      },
      attachments: () => real?.composer.attachments() ?? { skills: [], files: [] },
      clearAttachments() {
        real?.composer.clearAttachments();
      },
      bindDrop(target) {
        if (real) real.composer.bindDrop(target);
        else drops.push(target);
      },
    },
    render(state, shown) {
      if (real) real.render(state, shown);
      else last = [state, shown];
    },
    inspect: () => real?.inspect() ?? noPanels(),
  };
}

export interface SearchInspect { open: boolean; query: string; matches: number[]; current: number | null }

export interface DeferredSearch {
  el: HTMLElement;
  bind(scope: HTMLElement): void;
  inspect(): SearchInspect;
}

/** The panels' inspection before their code is there (or their column is made). */
export const noPanels = (): PanelsInspect => ({ open: null, skills: [], files: [], completionPath: null });

/** The conversation search's inspection before its code is there (or its column is made). */
export const noSearch = (): SearchInspect => ({ open: false, query: '', matches: [], current: null });

/**
 * The conversation search (`search.ts`), once the page has settled. Ctrl+F / ⌘F
 * within the scope given to `bind` opens the bar (the browser's own find
 * cannot see entries not rendered); it is bound at once: pressed before the
 * code arrives, the bar opens when it does.
 */
export function deferredSearch(host: SearchHost, failed: LoadFailed): DeferredSearch {
  const placeholder = h('div', { class: 'search-bar', hidden: true });
  let real: import('./search').ConversationSearch | null = null;
  let wanted = false;
  void afterSettled(() => import('./search')).then(({ ConversationSearch }) => {
    const search = new ConversationSearch(host);
    real = search;
    swap(placeholder, search.el);
    if (wanted) search.open();
  }).catch((e: unknown) => { failed('the conversation search', e); });
  return {
    get el() {
      return real?.el ?? placeholder;
    },
    bind(scope) {
      scope.addEventListener('keydown', (e: KeyboardEvent) => {
        if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'f') {
          e.preventDefault();
          if (real) real.open();
          else wanted = true;
        }
      });
    },
    inspect: () => real?.inspect() ?? noSearch(),
  };
}

export interface DeferredFilePanel {
  el: HTMLElement;
  open(path: string, line: number | null): Promise<void>;
  /** Files that left the map and that joined it ({@link import('./filePanel').FilePanel.mapChanged}). */
  mapChanged(removed: readonly string[], added: readonly string[]): void;
  /** Files whose content changed in place ({@link import('./filePanel').FilePanel.filesChanged}). */
  filesChanged(paths: readonly string[], more: boolean): void;
}

/** The file panel (`filePanel.ts`), once the page has settled; a file asked for before it arrives opens when it does. */
export function deferredFilePanel(workspaceId: string, failed: LoadFailed): DeferredFilePanel {
  const placeholder = h('aside', { class: 'file-panel', hidden: true });
  let real: import('./filePanel').FilePanel | null = null;
  const loaded = afterSettled(() => import('./filePanel')).then(({ FilePanel }) => {
    const panel = new FilePanel(workspaceId);
    real = panel;
    swap(placeholder, panel.el);
    return panel;
  });
  loaded.catch((e: unknown) => { failed('the file panel', e); });
  return {
    get el() {
      return real?.el ?? placeholder;
    },
    async open(path, line) {
      const panel = await loaded;
      await panel.open(path, line);
    },
    mapChanged(removed, added) {
      real?.mapChanged(removed, added);
    },
    filesChanged(paths, more) {
      real?.filesChanged(paths, more);
    },
  };
}
