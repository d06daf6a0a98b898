/**
 * The page's panels (issue 20): the buttons `History`, `MCP servers`,
 * `Settings`, `Changes` and `Usage`, each opening its panel (one at a
 * time), and the prompt's attachments (the `Skills` picker and the `Add
 * file` chips), which the drawer sends with each prompt.
 */
import type { PageRequest } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, h } from '../dom';
import { ChangesPanel, UsagePanel } from './changes';
import { Composer, serverSearch, type ChannelSearch, type SearchFn } from './composer';
import { PanelFrame } from './frame';
import { HistoryPanel } from './history';
import { McpPanel } from './mcp';
import { SettingsPanel } from './settings';
import { canHandOver, completionSearch, searchSocketUrl, workerSearch, type CompletionPath } from './workerSearch';

export interface PanelsHost {
  workspaceId: string;
  send(request: PageRequest): string;
  show(key: string): void;
  openFile(path: string): void;
  /** The file matcher (tests); the server's by default. */
  search?: SearchFn;
  /**
   * The channel's `search`: the file completion asks through it (else
   * `/search`); given (a browser, not an editor's webview) and the page
   * cross-origin isolated, through the search worker first.
   */
  channelSearch?: ChannelSearch;
}

export interface Panels {
  /** The row of panel buttons. */
  toolbar: HTMLElement;
  /** The panels (each hidden until its button opens it). */
  el: HTMLElement;
  /** Says when the conversation shown continues an earlier one, with a link to it in History. */
  continuation: HTMLElement;
  composer: Composer;
  render(state: PageState, shown: string | null): void;
  /** Which panel is open, the chips, the way the last completion came (`window.orbitInspect.panels()`). */
  inspect(): PanelsInspect;
}

export interface PanelsInspect {
  open: string | null;
  skills: string[];
  files: string[];
  completionPath: CompletionPath | null;
}

export function mountPanels(host: PanelsHost): Panels {
  const send = (request: PageRequest): string => host.send(request);
  const history = new HistoryPanel(send, (key) => { host.show(key); });
  const mcp = new McpPanel(send);
  const settings = new SettingsPanel(send);
  const changes = new ChangesPanel((path) => { host.openFile(path); });
  const usage = new UsagePanel();
  const completion = completionSearch({
    channelSearch: host.channelSearch,
    http: serverSearch(host.workspaceId),
    isolated: canHandOver(),
    worker: () => workerSearch(searchSocketUrl(host.workspaceId, location.href)),
  });
  const composer = new Composer(host.search ?? completion.search, completion.warm);
  const frames: PanelFrame[] = [];
  const toggle = (frame: PanelFrame, open: boolean): void => {
    if (!open) return;
    for (const other of frames) if (other !== frame && other.isOpen()) other.close();
    frame.el.querySelector<HTMLElement>('input, select, button:not([aria-label^="Close"])')?.focus();
  };
  frames.push(
    new PanelFrame('History', history, toggle),
    new PanelFrame('MCP servers', mcp, toggle),
    new PanelFrame('Settings', settings, toggle),
    new PanelFrame('Changes', changes, toggle),
    new PanelFrame('Usage', usage, toggle),
  );
  const historyFrame = frames[0];
  const continuation = h('p', { class: 'continuation muted', hidden: true });
  const renderContinuation = (state: PageState, shown: string | null): void => {
    const sessionId = state.conversations.find((c) => c.key === shown)?.sessionId ?? null;
    const earlier = sessionId === null ? undefined : state.history?.conversations.find((e) => e.id === sessionId);
    const entries = shown ? (state.transcripts[shown] ?? []) : [];
    const prompts = entries.filter((e) => e.body.kind === 'prompt').length;
    // Continued: the transcript holds fewer prompts than the conversation had (the earlier ones are not replayed).
    const continued = earlier !== undefined && entries.length < 400 && earlier.promptCount > prompts;
    const key = continued ? `${earlier.id}:${earlier.title}` : '';
    if (continuation.dataset.key === key) return;
    continuation.dataset.key = key;
    continuation.hidden = !continued;
    clear(continuation);
    if (!continued) return;
    continuation.append(
      `This conversation continues an earlier one (“${earlier.title}”); its earlier turns are not shown here. `,
      h('button', { type: 'button', class: 'link-button', onclick: () => { historyFrame?.open(); } }, 'Show it in History'),
    );
  };
  return {
    continuation,
    toolbar: h('div', { class: 'panel-buttons', role: 'toolbar', 'aria-label': 'Panels' }, frames.map((f) => f.button)),
    el: h('div', { class: 'panels' }, frames.map((f) => f.el)),
    composer,
    render(state, shown) {
      history.render(state);
      mcp.render(state);
      settings.render(state);
      changes.render(state, shown);
      usage.render(state, shown);
      composer.render(state);
      renderContinuation(state, shown);
    },
    inspect: () => ({ open: frames.find((f) => f.isOpen())?.name ?? null, ...composer.attachments(), completionPath: completion.path() }),
  };
}
