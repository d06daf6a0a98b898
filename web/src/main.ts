import './hud/style.css';
import { Channel } from './protocol/channel';
import { deferredChecker } from './protocol/checker';
import { WebSocketTransport } from './protocol/websocket';
import { WebviewTransport, type VsCodeApi } from './protocol/webview';
import { readPreloaded, readPreloadedMap } from './protocol/preload';
import { Store, addError, inspect } from './state/store';
import { sessionOutboxStorage } from './state/outbox';
import { mountHud } from './hud/app';
import { Notifier, browserNotifyEnv, cardFromHash } from './hud/notify';
import { afterSettled, firstFrameShown, frameShown, holdUntilFirstFrame, whenMarked } from './hud/later';
import { holdChrome, mapFirst } from './hud/hold';
import type { NodeAt, SceneInspection } from './scene/scene';
import type { OverlayMessage } from './scene/overlay';

/** The workspace id: the path segment after `/w/`. */
function workspaceId(): string {
  const match = /\/w\/([^/]+)/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : '';
}

declare function acquireVsCodeApi(): VsCodeApi;

/** In a VS Code webview the extension host relays the channel; in a browser, the WebSocket. */
const webview = typeof acquireVsCodeApi === 'function' ? new WebviewTransport(acquireVsCodeApi(), window) : null;
const id = webview ? '' : workspaceId();
const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
const url = `${scheme}//${window.location.host}/ws?w=${encodeURIComponent(id)}`;

// The first frame first: the rest of the page's code is imported once it is shown (`hud/later.ts`).
holdUntilFirstFrame();
// The frame checker's worker and the stored outbox once the page has settled after it.
const firstFrame = afterSettled(() => Promise.resolve());
const store = new Store();
// In a webview the page has no HTTP routes of its own (the extension raises
// the notifications; the keypad panel is the browser's).
const channel = new Channel(
  webview ?? new WebSocketTransport(url),
  store,
  webview ? {} : { storage: sessionOutboxStorage(id), checker: deferredChecker(firstFrame), restoreAfter: firstFrame },
);
// The snapshot the HTML carried is shown without waiting for the socket,
// which then resumes from it.
const preloaded = readPreloaded(document);
if (preloaded.ok) channel.preload(preloaded.frames);
else store.update((state) => { addError(state, preloaded.error); });
// The map's bytes, when the HTML carried them (a small map): its first frame is drawn in this task.
const preloadedMap = readPreloadedMap(document);
// A fresh open in a browser (nothing to read): the map starts first, the side column's contents
// and the socket after its first frame (`hud/hold.ts`, `mapFirst`).
const startWithMap = mapFirst(store.state, preloaded.ok ? preloaded.frames : null, webview !== null);
// The map's first frame (or 2 s: a map that cannot be drawn holds nothing up).
const mapDrawn = whenMarked('orbit:first-frame', 2000);
// Otherwise the socket opens first: its handshake runs while the page mounts (no frame
// is delivered before this script's task ends, so the HUD sees every one).
if (startWithMap) void mapDrawn.then(() => { channel.start(); });
else channel.start();
const root = document.getElementById('app');
if (!root) throw new Error('the page has no #app element');
const notifyEnv = webview ? null : browserNotifyEnv(id);
// The service worker is registered once the page has settled after its first frame.
const notifier = notifyEnv ? new Notifier(id, { ...notifyEnv, registration: () => afterSettled(() => notifyEnv.registration()) }) : undefined;
/** Whether the page shows entries in its first frame: the map then starts after that frame (`hud/hold.ts`). */
let entriesFirst = false;
const hud = mountHud(root, store, channel, {
  workspaceId: id,
  sceneStart: () => (entriesFirst ? frameShown() : null),
  ...(startWithMap ? { restAfter: mapDrawn } : {}),
  preloadedMap,
  ...(notifier ? { notifier } : {}),
  host: webview
    ? {
        name: 'VS Code',
        openFile: (path, line) => {
          webview.openFile(path, line);
        },
        pickFiles: () => webview.pickFiles(),
        fetchMap: () => webview.fetchMap(),
      }
    : null,
});
let keypad: ReturnType<typeof import('./hud/keypad').mountKeypad> | null = null;
if (!webview) {
  void afterSettled(() => import('./hud/keypad')).then(({ mountKeypad }) => {
    keypad = mountKeypad(root, { workspaceId: id, showConversation: (key) => { hud.show(key); } });
  }).catch((error: unknown) => {
    store.update((state) => { addError(state, `The keypad's code could not be loaded (${String(error)}); reload the page.`); });
  });
}

/** `#conversation=<key>` (a keypad key's tap) shows that conversation. */
function showFromHash(): void {
  const key = /^#conversation=(.+)$/.exec(window.location.hash)?.[1];
  if (key) hud.show(decodeURIComponent(key));
}
window.addEventListener('hashchange', showFromHash);
showFromHash();

// A notification's address (`#card=<key>/<requestId>`) opens the page on its card.
const wanted = cardFromHash(window.location.hash);
if (wanted) {
  hud.openCard(wanted.key, wanted.requestId);
  history.replaceState(null, '', window.location.pathname + window.location.search);
}

// The conversation's window is in the DOM: the rest loads once the browser has shown it and the
// map has drawn its first frame (or 2 s have passed).
firstFrameShown(mapDrawn);
// With no entries to show (a fresh open), the map's first frame is the first the page presents: its
// chrome comes in the next (`hud/hold.ts`; 2 s at most). Entries arriving meanwhile end the hold.
entriesFirst = hud.rendered() > 0;
if (!entriesFirst) {
  const chrome = holdChrome(document.documentElement, mapDrawn);
  const stop = store.subscribe(() => {
    if (hud.rendered() > 0) chrome.release();
    if (!chrome.held()) stop();
  });
}

// The service worker's answers to a notification's actions.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as { type?: unknown; key?: unknown; requestId?: unknown } | null;
    if (typeof data?.key !== 'string' || typeof data.requestId !== 'string') return;
    const { key, requestId } = data;
    if (data.type === 'orbit-open-card') hud.openCard(key, requestId);
    else if (data.type === 'orbit-skip') channel.act({ type: 'skipQuestions', key, requestId });
  });
}

declare global {
  interface Window {
    orbitInspect: {
      state(): unknown;
      frames(): number;
      errors(): string[];
      keypad(): unknown;
      /** How many transcript entries the conversation view has in the DOM. */
      rendered(): number;
      /** The conversation search: open, query, the matching seqs and the current one. */
      search(): unknown;
      /** The notifications shown now (tag = the card's request id). */
      notifications(): Promise<unknown[]>;
      /** Runs a notification's action (`open`, `skip`) as a click on it would; resolves to what the worker did. */
      notificationAction(tag: string, action: string): Promise<string>;
      scene: (() => SceneInspection) & {
        nodeAt(path: string): NodeAt | null;
        positions(): Record<string, [number, number]>;
      };
      sceneRedraw(): number | null;
      /** Benchmarks: conversations and activity/subagent messages fed to the map's effects, as the channel would bring them. */
      sceneFeed(conversations: { key: string; inTurn: boolean }[], messages: OverlayMessage[]): void;
      /** Benchmarks: the draw time (ms) of each effects frame since the last call. */
      sceneEffectFrames(): number[];
      /** The panels: which is open, the prompt's attachments, and the panels' last messages. */
      panels(): unknown;
    };
  }
}

window.orbitInspect = {
  state: () => inspect(store.state, hud.shown()),
  frames: () => store.state.frames,
  errors: () => store.state.errors.slice(),
  keypad: () => keypad?.state() ?? null,
  search: () => hud.search(),
  rendered: () => hud.rendered(),
  notifications: () => notifier?.shown() ?? Promise.resolve([]),
  notificationAction: async (tag, action) => {
    const registration = await navigator.serviceWorker.ready;
    const worker = registration.active;
    if (!worker) return 'no-worker';
    return new Promise<string>((resolve) => {
      const listener = (event: MessageEvent): void => {
        const data = event.data as { type?: unknown; tag?: unknown; outcome?: unknown } | null;
        if (data?.type === 'orbit-notification-action-done' && data.tag === tag) {
          navigator.serviceWorker.removeEventListener('message', listener);
          resolve(typeof data.outcome === 'string' ? data.outcome : 'unknown');
        }
      };
      navigator.serviceWorker.addEventListener('message', listener);
      worker.postMessage({ type: 'orbit-notification-action', tag, action });
    });
  },
  scene: Object.assign(() => hud.scene.inspect(), {
    nodeAt: (path: string) => hud.scene.nodeAt(path),
    positions: () => hud.scene.positions(),
  }),
  sceneRedraw: () => hud.scene.redraw(),
  sceneFeed: (conversations, messages) => { hud.scene.feedEffects(conversations, messages); },
  sceneEffectFrames: () => hud.scene.effectFrameTimes(),
  panels: () => JSON.parse(JSON.stringify({
    ...hud.panels(),
    catalog: store.state.catalog,
    settings: store.state.settings,
    mcp: store.state.mcp,
    history: store.state.history,
  })) as unknown,
};
