import './hud/style.css';
import { Channel } from './protocol/channel';
import { WebSocketTransport } from './protocol/websocket';
import { Store, inspect } from './state/store';
import { mountHud } from './hud/app';
import type { NodeAt, SceneInspection } from './scene/scene';

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

declare global {
  interface Window {
    orbitInspect: {
      state(): unknown;
      frames(): number;
      errors(): string[];
      scene: (() => SceneInspection) & {
        nodeAt(path: string): NodeAt | null;
        positions(): Record<string, [number, number]>;
      };
      sceneRedraw(): number | null;
    };
  }
}

window.orbitInspect = {
  state: () => inspect(store.state, hud.shown()),
  frames: () => store.state.frames,
  errors: () => store.state.errors.slice(),
  scene: Object.assign(() => hud.scene.inspect(), {
    nodeAt: (path: string) => hud.scene.nodeAt(path),
    positions: () => hud.scene.positions(),
  }),
  sceneRedraw: () => hud.scene.redraw(),
};

channel.start();
