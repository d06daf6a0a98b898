import './hud/style.css';
import { Channel } from './protocol/channel';
import { WebSocketTransport } from './protocol/websocket';
import { Store, inspect } from './state/store';
import { mountHud } from './hud/app';
import { mountKeypad } from './hud/keypad';

/** The workspace id: the path segment after `/w/`. */
function workspaceId(): string {
  const match = /\/w\/([^/]+)/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : '';
}

const id = workspaceId();
const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
const url = `${scheme}//${window.location.host}/ws?w=${encodeURIComponent(id)}`;

const store = new Store();
const channel = new Channel(new WebSocketTransport(url), store);
const root = document.getElementById('app');
if (!root) throw new Error('the page has no #app element');
const hud = mountHud(root, store, channel, { workspaceId: id });
const keypad = mountKeypad(root, { workspaceId: id, showConversation: (key) => { hud.show(key); } });

/** `#conversation=<key>` (a keypad key's tap) shows that conversation. */
function showFromHash(): void {
  const key = /^#conversation=(.+)$/.exec(window.location.hash)?.[1];
  if (key) hud.show(decodeURIComponent(key));
}
window.addEventListener('hashchange', showFromHash);
showFromHash();

declare global {
  interface Window {
    orbitInspect: {
      state(): unknown;
      frames(): number;
      errors(): string[];
      keypad(): unknown;
    };
  }
}

window.orbitInspect = {
  state: () => inspect(store.state, hud.shown()),
  frames: () => store.state.frames,
  errors: () => store.state.errors.slice(),
  keypad: () => keypad.state(),
};

channel.start();
