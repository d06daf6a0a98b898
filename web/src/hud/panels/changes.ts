/**
 * Changes and Usage of the conversation shown. Changes: per turn and for
 * the whole conversation, the files Claude edited or created (its `Edit`,
 * `MultiEdit`, `Write` and `NotebookEdit` calls), each with its diff as the
 * server made it from the call's own input (`tool` entries' `diff`), and
 * each graph file a link to the file panel; calls that were denied or
 * failed are left out. Usage: the model, turns, tokens and context use as
 * the CLI reports them, cost, rate limits, the turns' durations.
 */
import type { FileDiff, SessionState, TranscriptEntry } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, formatCost, formatDuration, h } from '../dom';
import { keyed } from './frame';

const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

/** One call's change to a file. */
export interface FileChange {
  turn: number;
  tool: string;
  diff: FileDiff | null;
}

/** A file changed, with its calls' changes in order. */
export interface ChangedFile {
  /** The graph file (a link to the file panel), or `null` for a path outside the graph. */
  file: string | null;
  /** What the list shows: the graph path, else the path as the tool named it. */
  path: string;
  changes: FileChange[];
}

export interface TurnChanges {
  turn: number;
  prompt: string | null;
  files: ChangedFile[];
}

function add(list: ChangedFile[], file: string | null, path: string, change: FileChange): void {
  let at = list.find((f) => f.path === path);
  if (!at) {
    at = { file, path, changes: [] };
    list.push(at);
  }
  if (file !== null) at.file = file;
  at.changes.push(change);
}

/** The files each turn edited or created (calls denied or failed left out), and all of them. */
export function changesOf(entries: readonly TranscriptEntry[]): { turns: TurnChanges[]; all: ChangedFile[] } {
  const failed = new Set<string>();
  for (const entry of entries) {
    const body = entry.body;
    if (body.kind === 'denied') failed.add(body.toolUseId);
    if (body.kind === 'notice' && body.level !== 'info' && body.toolUseId) failed.add(body.toolUseId);
  }
  const turns = new Map<number, TurnChanges>();
  const all: ChangedFile[] = [];
  for (const entry of entries) {
    if (entry.subagent) continue;
    const at = turns.get(entry.turn) ?? { turn: entry.turn, prompt: null, files: [] };
    turns.set(entry.turn, at);
    const body = entry.body;
    if (body.kind === 'prompt') at.prompt = body.text;
    if (body.kind !== 'tool' || !EDIT_TOOLS.has(body.tool) || failed.has(body.toolUseId)) continue;
    const path = body.file ?? body.detail;
    if (!path) continue;
    const change = { turn: entry.turn, tool: body.tool, diff: body.diff ?? null };
    add(at.files, body.file ?? null, path, change);
    add(all, body.file ?? null, path, change);
  }
  return { turns: Array.from(turns.values()).filter((t) => t.files.length > 0), all };
}

/** "2 files changed". */
export function filesChanged(n: number): string {
  return `${n} file${n === 1 ? '' : 's'} changed`;
}

/** How many files `turn` changed. */
export function filesChangedIn(entries: readonly TranscriptEntry[], turn: number): number {
  return changesOf(entries.filter((e) => e.turn === turn)).all.length;
}

const SIGN = { keep: ' ', add: '+', remove: '-' } as const;

/** The lines added and removed by a file's changes. */
function counts(changes: readonly FileChange[]): string {
  const added = changes.reduce((n, c) => n + (c.diff?.added ?? 0), 0);
  const removed = changes.reduce((n, c) => n + (c.diff?.removed ?? 0), 0);
  return `+${added} −${removed}`;
}

/** One call's diff: its hunks as unified-diff lines, and a note when it was cut. */
export function diffView(change: FileChange, withTurn: boolean): HTMLElement {
  const diff = change.diff;
  const label = `${withTurn ? `Turn ${change.turn} · ` : ''}${change.tool}${diff?.replaceAll ? ' (every occurrence)' : ''}`;
  const el = h('div', { class: 'diff-call' }, h('div', { class: 'diff-call-label muted' }, label));
  if (!diff) {
    el.appendChild(h('p', { class: 'muted' }, 'No diff: the call named no text.'));
    return el;
  }
  if (diff.source === 'write') el.appendChild(h('p', { class: 'muted diff-note' }, 'The whole content written (the call does not say what the file held before).'));
  const pre = h('pre', { class: 'diff' });
  for (const hunk of diff.hunks) {
    pre.appendChild(h('span', { class: 'diff-hunk' }, `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`));
    for (const line of hunk.lines) pre.appendChild(h('span', { class: `diff-line diff-${line.op}` }, `${SIGN[line.op]}${line.text}`));
  }
  el.appendChild(pre);
  if (diff.omittedLines > 0) {
    el.appendChild(h('p', { class: 'diff-note diff-cut' }, `Diff cut: ${diff.omittedLines} more line${diff.omittedLines === 1 ? '' : 's'} not shown.`));
  }
  return el;
}

export class ChangesPanel {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;

  constructor(private readonly openFile: (path: string) => void) {
    this.body = h('div', null);
    this.el = h('div', { class: 'panel-body changes-panel' }, this.body);
  }

  private fileView(changed: ChangedFile, open: boolean, withTurn: boolean): HTMLElement {
    const file = changed.file;
    const name = file !== null
      ? h('button', { type: 'button', class: 'link-button', onclick: () => { this.openFile(file); } }, changed.path)
      : h('span', { class: 'detail' }, changed.path);
    return h(
      'li',
      { class: 'changes-file' },
      name,
      ' ',
      h('span', { class: 'muted diff-counts' }, counts(changed.changes)),
      h(
        'details',
        { open },
        h('summary', null, 'Diff'),
        h('figure', { class: 'diff-figure', 'aria-label': `Diff of ${changed.path}` }, changed.changes.map((c) => diffView(c, withTurn))),
      ),
    );
  }

  render(state: PageState, shown: string | null): void {
    const entries = shown ? (state.transcripts[shown] ?? []) : [];
    const { turns, all } = changesOf(entries);
    const key = JSON.stringify([shown, turns.map((t) => [t.turn, t.files.map((f) => [f.path, f.file, f.changes.length])])]);
    if (!keyed(this.body, key)) return;
    clear(this.body);
    if (all.length === 0) {
      this.body.appendChild(h('p', { class: 'muted' }, 'Claude has not changed any file in this conversation.'));
      return;
    }
    this.body.append(
      h('h3', null, `Whole conversation: ${filesChanged(all.length)}`),
      h('ul', { class: 'changes-files', 'aria-label': 'Whole conversation' }, all.map((f) => this.fileView(f, all.length <= 10, true))),
    );
    for (const turn of turns) {
      this.body.append(
        h('h3', { title: turn.prompt ?? '' }, `Turn ${turn.turn}: ${filesChanged(turn.files.length)}`),
        h('ul', { class: 'changes-files', 'aria-label': `Turn ${turn.turn}` }, turn.files.map((f) => this.fileView(f, false, false))),
      );
    }
  }
}

/**
 * One formatter: `toLocaleString` builds a new one per call (~0.1 ms, on every frame's render).
 * Made at its first use, not when the module is evaluated: this module is in the page's entry
 * (the conversation view's turn lines), and the first `Intl.NumberFormat` of a page costs its
 * start 5-13 ms (ICU's locale data; a CPU profile of a 400-entry load, bench/README.md "Branch `load`").
 */
let formatter: Intl.NumberFormat | null = null;

/** A token count as the panel shows it (thousands separated). */
export function tokens(n: number): string {
  formatter ??= new Intl.NumberFormat('en-US');
  return formatter.format(n);
}

/** When a limit resets, as the panel says it (local time, and how long from now). */
export function resetsIn(seconds: number, now = Date.now()): string {
  const at = new Date(seconds * 1000);
  const minutes = Math.max(0, Math.round((seconds * 1000 - now) / 60000));
  const span = minutes < 60 ? `${minutes} min` : minutes < 48 * 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${Math.round(minutes / 1440)} days`;
  return `${at.toLocaleString()} (in ${span})`;
}

const LIMIT_NAMES: Record<string, string> = {
  five_hour: '5-hour limit',
  seven_day: 'weekly limit',
  seven_day_opus: 'weekly Opus limit',
  seven_day_sonnet: 'weekly Sonnet limit',
  seven_day_overage_included: 'weekly limit (overage included)',
  overage: 'overage',
};

/** The panel's rows for a session: tokens and context as the CLI reported them, cost, rate limit. */
export function usageRows(session: SessionState, durations: readonly number[], now = Date.now()): [string, string][] {
  const rows: [string, string][] = [
    ['Model', session.model ?? 'Claude Code’s default'],
    ['Turns', String(session.turns)],
  ];
  const usage = session.usage;
  if (usage) {
    rows.push(
      ['Input tokens', tokens(usage.inputTokens)],
      ['Output tokens', tokens(usage.outputTokens)],
      ['Cache read tokens', tokens(usage.cacheReadInputTokens)],
      ['Cache creation tokens', tokens(usage.cacheCreationInputTokens)],
    );
    if (typeof usage.contextTokens === 'number') {
      const window = usage.contextWindow;
      const share = typeof window === 'number' && window > 0 ? ` of ${tokens(window)} (${((100 * usage.contextTokens) / window).toFixed(1)}%)` : '';
      rows.push(['Context', `${tokens(usage.contextTokens)}${share}`]);
    }
  } else {
    rows.push(['Tokens', 'Known once a turn ends']);
  }
  rows.push(
    ['This turn', formatCost(session.turnCostUsd)],
    ['Session (list price)', formatCost(session.totalCostUsd)],
    ['Time in turns', formatDuration(durations.reduce((a, b) => a + b, 0)) || '—'],
  );
  const limit = session.rateLimit;
  if (limit) {
    const name = limit.rateLimitType ? (LIMIT_NAMES[limit.rateLimitType] ?? limit.rateLimitType) : 'rate limit';
    const used = typeof limit.utilization === 'number' ? `, ${Math.round(limit.utilization * 100)}% used` : '';
    const status = limit.status === 'rejected' ? 'reached' : limit.status === 'allowed_warning' ? 'close' : 'allowed';
    rows.push(['Rate limit', `${name}: ${status}${used}`]);
    if (typeof limit.resetsAt === 'number') rows.push(['Resets', resetsIn(limit.resetsAt, now)]);
  } else {
    rows.push(['Rate limit', 'None reported (the CLI names one only for a subscription login)']);
  }
  return rows;
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
    const rows = session ? usageRows(session, durations) : [];
    if (!keyed(this.list, JSON.stringify(rows))) return;
    clear(this.list);
    if (rows.length === 0) {
      this.list.appendChild(h('p', { class: 'muted' }, 'No conversation yet.'));
      return;
    }
    for (const [term, value] of rows) this.list.append(h('dt', null, term), h('dd', null, value));
  }
}
