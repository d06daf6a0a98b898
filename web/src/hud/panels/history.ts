/**
 * History: the workspace's earlier conversations, newest first (title,
 * prompts, model, git branch, files touched, MCP servers, skills,
 * subagents, when), filtered as the user types, each with `Continue`
 * (`--resume`: the conversation holding it becomes current, else a fresh
 * one takes it). Opening the panel asks for a fresh scan; the host sends
 * the list again whenever a transcript changes.
 */
import type { HistoryEntry, PageRequest, ScanProgress } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, h, setText } from '../dom';
import { keyed } from './frame';

/** Entries shown at most (the filter narrows the rest). */
export const HISTORY_SHOWN = 200;

/** Whether an entry matches every word of the filter (title, prompts, branch, models, files, servers, skills). */
export function matchesFilter(entry: HistoryEntry, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return true;
  const text = [
    entry.title,
    ...entry.prompts,
    entry.gitBranch ?? '',
    ...entry.models,
    ...entry.filesTouched,
    ...entry.mcpServers,
    ...entry.skills,
  ].join('\n').toLowerCase();
  return words.every((w) => text.includes(w));
}

/** " 120 of 2,000", how far a scan got. */
export function scanned(progress: ScanProgress | null | undefined): string {
  if (!progress || progress.total === 0) return '';
  return ` ${progress.done.toLocaleString('en-US')} of ${progress.total.toLocaleString('en-US')}`;
}

/** When, as the list says it. */
export function when(ms: number, now = Date.now()): string {
  const minutes = Math.round((now - ms) / 60000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(ms).toISOString().slice(0, 10);
}

export class HistoryPanel {
  readonly el: HTMLElement;
  private readonly filter: HTMLInputElement;
  private readonly list: HTMLElement;
  private readonly status: HTMLElement;
  private readonly progress: HTMLProgressElement;
  private last: PageState | null = null;

  constructor(
    private readonly send: (request: PageRequest) => string,
    private readonly show: (key: string) => void,
  ) {
    this.filter = h('input', {
      type: 'search',
      class: 'panel-filter',
      'aria-label': 'Filter history',
      placeholder: 'Filter by title, prompt, branch, file…',
      oninput: () => { if (this.last) this.render(this.last); },
    });
    this.status = h('p', { class: 'panel-status muted', role: 'status' });
    this.progress = h('progress', { class: 'history-progress', 'aria-label': 'Reading transcripts', hidden: true });
    this.list = h('ul', { class: 'history-list', 'aria-label': 'Earlier conversations' });
    this.el = h('div', { class: 'panel-body history-panel' }, this.filter, this.status, this.progress, this.list);
  }

  opened(): void {
    this.send({ type: 'history' });
    this.filter.focus();
  }

  render(state: PageState): void {
    this.last = state;
    const history = state.history;
    const entries = history?.conversations ?? [];
    const filter = this.filter.value;
    const shown = entries.filter((e) => matchesFilter(e, filter));
    setText(this.status, history === null
      ? 'Waiting for Orbit…'
      : history.error !== null && history.error !== undefined
        ? `History could not be read: ${history.error}`
        : history.scanning
          ? `Reading Claude Code’s transcripts…${scanned(history.progress)}${entries.length > 0 ? ` (${entries.length} listed so far)` : ''}`
          : entries.length === 0
            ? 'No earlier conversations in this folder.'
            : `${shown.length} of ${entries.length} conversation${entries.length === 1 ? '' : 's'}`);
    const progress = history?.scanning === true ? (history.progress ?? null) : null;
    this.progress.hidden = progress === null;
    if (progress !== null) {
      this.progress.max = Math.max(1, progress.total);
      this.progress.value = progress.done;
    }
    const available = state.workspace?.trusted === true && state.workspace.agent.available && state.connection === 'open';
    if (!keyed(this.list, JSON.stringify([shown.slice(0, HISTORY_SHOWN), available]))) return;
    clear(this.list);
    for (const entry of shown.slice(0, HISTORY_SHOWN)) {
      const meta = [
        when(entry.modifiedMs),
        entry.models.join(', '),
        entry.gitBranch ? `branch ${entry.gitBranch}` : '',
        `${entry.promptCount} prompt${entry.promptCount === 1 ? '' : 's'}`,
        entry.filesTouched.length > 0 ? `${entry.filesTouched.length} file${entry.filesTouched.length === 1 ? '' : 's'}` : '',
        entry.mcpServers.length > 0 ? `MCP: ${entry.mcpServers.join(', ')}` : '',
        entry.skills.length > 0 ? `skills: ${entry.skills.join(', ')}` : '',
        entry.subagents > 0 ? `${entry.subagents} subagent${entry.subagents === 1 ? '' : 's'}` : '',
      ].filter((p) => p !== '').join(' · ');
      const open = entry.open ?? null;
      this.list.appendChild(
        h('li', { class: 'history-entry', 'data-id': entry.id, 'aria-label': entry.title },
          h('div', { class: 'history-title' }, entry.title),
          h('div', { class: 'history-meta muted' }, meta),
          entry.filesTouched.length > 0 ? h('div', { class: 'history-files muted' }, entry.filesTouched.slice(0, 5).join(', ')) : null,
          h('button', {
            type: 'button',
            disabled: !available,
            onclick: () => {
              if (open !== null) this.show(open);
              this.send({ type: 'continue', id: entry.id });
            },
          }, 'Continue')),
      );
    }
  }
}
