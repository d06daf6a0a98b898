/**
 * Changes and Usage of the conversation shown. Changes: per turn and for
 * the whole conversation, the files Claude edited or created (its `Edit`,
 * `MultiEdit`, `Write` and `NotebookEdit` calls on a graph file), each a
 * link to the file panel. Usage: its turns, the running turn's and the
 * session's list-price cost, the model, the turns' durations.
 */
import type { TranscriptEntry } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, formatCost, formatDuration, h } from '../dom';
import { keyed } from './frame';

const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

export interface TurnChanges {
  turn: number;
  prompt: string | null;
  files: string[];
}

/** The files each turn edited or created (graph files only), and all of them. */
export function changesOf(entries: readonly TranscriptEntry[]): { turns: TurnChanges[]; all: string[] } {
  const turns = new Map<number, TurnChanges>();
  const all: string[] = [];
  for (const entry of entries) {
    const at = turns.get(entry.turn) ?? { turn: entry.turn, prompt: null, files: [] };
    turns.set(entry.turn, at);
    const body = entry.body;
    if (body.kind === 'prompt') at.prompt = body.text;
    if (body.kind === 'tool' && EDIT_TOOLS.has(body.tool) && body.file) {
      if (!at.files.includes(body.file)) at.files.push(body.file);
      if (!all.includes(body.file)) all.push(body.file);
    }
  }
  return { turns: Array.from(turns.values()).filter((t) => t.files.length > 0), all };
}

export class ChangesPanel {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;

  constructor(private readonly openFile: (path: string) => void) {
    this.body = h('div', null);
    this.el = h('div', { class: 'panel-body changes-panel' }, this.body);
  }

  render(state: PageState, shown: string | null): void {
    const entries = shown ? (state.transcripts[shown] ?? []) : [];
    const { turns, all } = changesOf(entries);
    if (!keyed(this.body, JSON.stringify([shown, turns]))) return;
    clear(this.body);
    if (all.length === 0) {
      this.body.appendChild(h('p', { class: 'muted' }, 'Claude has not changed any file in this conversation.'));
      return;
    }
    const link = (path: string): HTMLElement =>
      h('li', null, h('button', { type: 'button', class: 'link-button', onclick: () => { this.openFile(path); } }, path));
    this.body.append(
      h('h3', null, `Whole conversation: ${all.length} file${all.length === 1 ? '' : 's'} changed`),
      h('ul', { class: 'changes-files', 'aria-label': 'Whole conversation' }, all.map(link)),
    );
    for (const turn of turns) {
      const title = `Turn ${turn.turn}: ${turn.files.length} file${turn.files.length === 1 ? '' : 's'} changed`;
      this.body.append(
        h('h3', { title: turn.prompt ?? '' }, title),
        h('ul', { class: 'changes-files', 'aria-label': `Turn ${turn.turn}` }, turn.files.map(link)),
      );
    }
  }
}

export class UsagePanel {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;

  constructor() {
    this.list = h('dl', { class: 'usage-list' });
    this.el = h('div', { class: 'panel-body usage-panel' }, this.list);
  }

  render(state: PageState, shown: string | null): void {
    const session = shown ? state.sessions[shown] : undefined;
    const entries = shown ? (state.transcripts[shown] ?? []) : [];
    const durations = entries.flatMap((e) => (e.body.kind === 'turnEnd' && typeof e.body.durationMs === 'number' ? [e.body.durationMs] : []));
    const rows: [string, string][] = session
      ? [
          ['Model', session.model ?? 'Claude Code’s default'],
          ['Turns', String(session.turns)],
          ['This turn', formatCost(session.turnCostUsd)],
          ['Session (list price)', formatCost(session.totalCostUsd)],
          ['Time in turns', formatDuration(durations.reduce((a, b) => a + b, 0)) || '—'],
        ]
      : [];
    if (!keyed(this.list, JSON.stringify(rows))) return;
    clear(this.list);
    if (rows.length === 0) {
      this.list.appendChild(h('p', { class: 'muted' }, 'No conversation yet.'));
      return;
    }
    for (const [term, value] of rows) this.list.append(h('dt', null, term), h('dd', null, value));
  }
}
