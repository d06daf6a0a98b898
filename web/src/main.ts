import './hud/style.css';
import { Channel } from './protocol/channel';
import { WebSocketTransport } from './protocol/websocket';
import { WebviewTransport, type VsCodeApi } from './protocol/webview';
import { Store, inspect } from './state/store';
import { mountHud } from './hud/app';

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

const store = new Store();
const channel = new Channel(webview ?? new WebSocketTransport(url), store);
const root = document.getElementById('app');
if (!root) throw new Error('the page has no #app element');
const hud = mountHud(root, store, channel, {
  workspaceId: id,
  host: webview
    ? {
        name: 'VS Code',
        openFile: (path, line) => {
          webview.openFile(path, line);
        },
      }
    : null,
});

declare global {
  interface Window {
    orbitInspect: {
      state(): unknown;
      frames(): number;
      errors(): string[];
    };
  }
}

window.orbitInspect = {
  state: () => inspect(store.state, hud.shown()),
  frames: () => store.state.frames,
  errors: () => store.state.errors.slice(),
};

channel.start();
