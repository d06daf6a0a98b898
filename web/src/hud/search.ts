/**
 * Search within the conversation: Ctrl+F (⌘F) in the conversation view
 * opens a search bar (`role="search"`, the textbox "Find in conversation",
 * "Previous" and "Next", a status "2 of 5"). It searches the transcript the
 * page holds, not the DOM, so it finds text in entries that are not on
 * screen (or not rendered); the match is scrolled into view and marked
 * (`aria-current`), and the words it matched in it are highlighted (the
 * first one scrolled to: a long reply was shown at its middle). Enter goes to the next match, Shift+Enter to the
 * previous one, Escape closes the bar.
 */
import type { MdNode, TranscriptEntry } from '../protocol/types';
import { h } from './dom';

function nodeText(nodes: readonly MdNode[], out: string[]): void {
  for (const node of nodes) {
    if ('text' in node && typeof node.text === 'string') out.push(node.text);
    if ('children' in node && Array.isArray(node.children)) nodeText(node.children, out);
    if (node.t === 'table') for (const row of node.rows) for (const cell of row) nodeText(cell, out);
  }
}

/** The searchable text of one entry. */
export function entryText(entry: TranscriptEntry): string {
  const body = entry.body;
  switch (body.kind) {
    case 'prompt':
      return body.text;
    case 'reply': {
      const out: string[] = [];
      nodeText(body.nodes, out);
      return out.join(' ');
    }
    case 'tool':
      return `${body.tool} ${body.detail ?? ''}`;
    case 'mcp':
      return `${body.server} ${body.tool}`;
    case 'notice':
      return body.text;
    case 'denied':
      return `${body.tool} ${body.message}`;
    case 'failed':
      return body.error ?? 'Failed';
    case 'stopped':
      return 'Stopped';
    case 'turnEnd':
      return '';
  }
}

/** The seqs of the entries whose text holds `query` (case-insensitive), in order. */
export function findEntries(entries: readonly TranscriptEntry[], query: string): number[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return [];
  return entries.filter((e) => entryText(e).toLowerCase().includes(needle)).map((e) => e.seq);
}

export interface SearchHost {
  /** The entries of the conversation shown. */
  entries(): readonly TranscriptEntry[];
  /** Brings the entry `seq` into view and marks it (null: no mark), and in it the occurrences of `query`. */
  reveal(seq: number | null, query?: string): void;
}

export class ConversationSearch {
  readonly el: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly status: HTMLElement;
  private matches: number[] = [];
  private at = -1;

  constructor(private readonly host: SearchHost) {
    this.input = h('input', {
      type: 'search',
      class: 'search-input',
      'aria-label': 'Find in conversation',
      placeholder: 'Find in conversation',
      oninput: () => { this.run(); },
      onkeydown: (event: Event) => {
        const e = event as KeyboardEvent;
        if (e.key === 'Enter') {
          e.preventDefault();
          this.step(e.shiftKey ? -1 : 1);
        } else if (e.key === 'Escape') {
          e.preventDefault();
          this.close();
        }
      },
    });
    this.status = h('span', { class: 'search-status muted', role: 'status' });
    this.el = h(
      'div',
      { class: 'search-bar', role: 'search', 'aria-label': 'Search the conversation', hidden: true },
      this.input,
      h('button', { type: 'button', onclick: () => { this.step(-1); } }, 'Previous'),
      h('button', { type: 'button', onclick: () => { this.step(1); } }, 'Next'),
      this.status,
      h('button', { type: 'button', class: 'link-button', 'aria-label': 'Close search', onclick: () => { this.close(); } }, '×'),
    );
  }

  open(): void {
    this.el.hidden = false;
    this.input.focus();
    this.input.select();
    if (this.input.value) this.run();
  }

  close(): void {
    this.el.hidden = true;
    this.matches = [];
    this.at = -1;
    this.status.textContent = '';
    this.host.reveal(null);
  }

  /** Searches again (the query changed, or the conversation did). */
  run(): void {
    this.matches = findEntries(this.host.entries(), this.input.value);
    this.at = -1;
    if (this.matches.length === 0) {
      this.status.textContent = this.input.value.trim() ? 'No match' : '';
      this.host.reveal(null);
      return;
    }
    this.step(1);
  }

  /** To the next (1) or previous (-1) match, wrapping. */
  step(direction: 1 | -1): void {
    if (this.matches.length === 0) {
      // run() steps to the first match itself, when there is one.
      this.run();
      return;
    }
    const n = this.matches.length;
    this.at = this.at < 0 ? (direction === 1 ? 0 : n - 1) : (this.at + direction + n) % n;
    const seq = this.matches[this.at] ?? null;
    this.status.textContent = `${this.at + 1} of ${n}`;
    this.host.reveal(seq, this.input.value.trim());
  }

  /** What `window.orbitInspect` reports. */
  inspect(): { open: boolean; query: string; matches: number[]; current: number | null } {
    return { open: !this.el.hidden, query: this.input.value, matches: this.matches.slice(), current: this.matches[this.at] ?? null };
  }
}
