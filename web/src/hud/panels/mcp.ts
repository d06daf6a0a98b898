/**
 * The MCP view: each server's name, status, scope, tool count and names,
 * transport, version and scrubbed error; `Reload`; per server `Reconnect`,
 * `Enable`, `Disable`, `Sign in`, `Sign out` only where the host says they
 * apply. A sign-in's address is opened by the host in the system browser
 * and never reaches the page: the server shows pending until it connects.
 */
import type { McpServerRow, PageRequest } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, h, setText } from '../dom';
import { keyed } from './frame';

/** Each action's button name. */
export const ACTION_NAMES: Record<string, string> = {
  reconnect: 'Reconnect',
  enable: 'Enable',
  disable: 'Disable',
  signin: 'Sign in',
  signout: 'Sign out',
};

function detail(server: McpServerRow): string {
  return [
    server.transport ?? '',
    server.scope ? `${server.scope} scope` : '',
    server.version ? `v${server.version}` : '',
    `${server.toolCount} tool${server.toolCount === 1 ? '' : 's'}`,
  ].filter((p) => p !== '').join(' · ');
}

export class McpPanel {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly status: HTMLElement;
  private readonly restart: HTMLElement;
  private readonly reload: HTMLButtonElement;

  constructor(private readonly send: (request: PageRequest) => string) {
    this.reload = h('button', { type: 'button', onclick: () => { this.send({ type: 'mcpReload' }); } }, 'Reload');
    this.status = h('p', { class: 'panel-status muted', role: 'status' });
    this.restart = h('p', { class: 'panel-note', hidden: true },
      'Each conversation starts a new process at its next prompt, which loads this change.');
    this.list = h('ul', { class: 'mcp-list', 'aria-label': 'Servers' });
    this.el = h('div', { class: 'panel-body mcp-panel' }, h('div', { class: 'panel-row' }, this.reload), this.status, this.restart, this.list);
  }

  render(state: PageState): void {
    const mcp = state.mcp;
    const online = state.connection === 'open';
    const trusted = state.workspace?.trusted === true;
    this.reload.disabled = !online || !trusted;
    const parts: string[] = [];
    if (!trusted) parts.push('MCP servers are listed once this folder is trusted.');
    else if (mcp === null || (mcp.servers.length === 0 && state.catalog?.status === 'loading')) parts.push('Listing the servers…');
    else if (mcp.servers.length === 0) parts.push('No MCP servers are configured for this folder.');
    if (mcp?.working) parts.push(mcp.working);
    if (mcp?.note) parts.push(mcp.note);
    setText(this.status, parts.join(' '));
    this.restart.hidden = mcp?.restartPending !== true;
    if (!keyed(this.list, JSON.stringify([mcp?.servers ?? [], online]))) return;
    clear(this.list);
    for (const server of mcp?.servers ?? []) {
      const actions = server.actions.map((action) =>
        h('button', {
          type: 'button',
          disabled: !online,
          onclick: () => { this.send({ type: 'mcpAction', server: server.name, action }); },
        }, ACTION_NAMES[action] ?? action));
      this.list.appendChild(
        h('li', { class: `mcp-server status-${server.status}`, 'aria-label': server.name, 'data-server': server.name },
          h('div', { class: 'mcp-head' },
            h('strong', null, server.name),
            h('span', { class: 'mcp-status' }, server.status)),
          h('div', { class: 'muted' }, detail(server)),
          server.tools.length > 0 ? h('div', { class: 'mcp-tools muted' }, server.tools.join(', ')) : null,
          server.error ? h('div', { class: 'mcp-error', role: 'note' }, server.error) : null,
          actions.length > 0 ? h('div', { class: 'panel-row' }, ...actions) : null),
      );
    }
  }
}
