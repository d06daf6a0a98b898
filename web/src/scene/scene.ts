/**
 * The scene's place: the page's main area, which the graph map fills later.
 * For now it shows the workspace and its graph's size.
 */
import type { PageState } from '../state/store';

export interface Scene {
  readonly el: HTMLElement;
  render(state: PageState): void;
}

export function createScene(): Scene {
  const el = document.createElement('div');
  el.className = 'scene';
  el.setAttribute('role', 'region');
  el.setAttribute('aria-label', 'Map');
  const caption = document.createElement('p');
  caption.className = 'scene-caption muted';
  el.appendChild(caption);
  return {
    el,
    render(state) {
      const ws = state.workspace;
      caption.textContent = ws ? `${ws.name} · ${ws.graph.files} files in the graph` : '';
    },
  };
}
