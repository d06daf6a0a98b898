/**
 * The conversation view: a `log` of one conversation's transcript entries,
 * rendered incrementally by seq (an entry sent again with the same seq
 * replaces its node). A subagent's work shows as its Task call, whose
 * button opens the subagent's own history.
 */
import type { MdNode, TranscriptEntry } from '../protocol/types';
import type { PageState, SubagentInfo } from '../state/store';
import { clear, formatCost, formatDuration, h } from './dom';
import { renderMarkdown, renderNode, replyContext, type MarkdownContext } from './markdown';
import { filesChanged, filesChangedIn } from './panels/changes';

/** A reply's blocks rendered at once; the rest follow in tasks of this many (a 1 MB reply never blocks). */
const REPLY_CHUNK = 12;

/** Renders a reply's blocks into `el`: the first chunk now, the others each in a task of its own. */
function renderReply(el: HTMLElement, nodes: readonly MdNode[], replyCtx: MarkdownContext): void {
  const ctx = replyContext(nodes, replyCtx);
  if (nodes.length <= REPLY_CHUNK) {
    el.appendChild(renderMarkdown(nodes, ctx));
    return;
  }
  let at = 0;
  const chunk = (): void => {
    const fragment = document.createDocumentFragment();
    for (const node of nodes.slice(at, at + REPLY_CHUNK)) fragment.appendChild(renderNode(node, ctx));
    el.appendChild(fragment);
    at += REPLY_CHUNK;
    if (at < nodes.length) setTimeout(chunk, 0);
  };
  chunk();
}

const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);

/** A stopped or failed turn has its own entry just before its turn line, which then only ends it. */
function outcomeText(outcome: string): string {
  return outcome === 'completed' ? 'Done' : 'Turn ended';
}

export function entryView(
  entry: TranscriptEntry,
  ctx: MarkdownContext & { subagentHistory(toolUseId: string): HTMLElement | null },
  /** For a turn line: how many files the turn changed (the line says so when some did). */
  changed = 0,
): HTMLElement {
  const body = entry.body;
  const attrs = { 'data-seq': entry.seq, 'data-kind': body.kind };
  switch (body.kind) {
    case 'prompt':
      return h(
        'article',
        { ...attrs, class: 'entry prompt', 'aria-label': 'You' },
        h('p', { class: 'prompt-text' }, body.text),
        body.skills.length ? h('p', { class: 'muted' }, `Skills: ${body.skills.join(', ')}`) : null,
        body.files.length ? h('p', { class: 'muted' }, `Files: ${body.files.join(', ')}`) : null,
      );
    case 'reply': {
      const el = h('article', { ...attrs, class: 'entry reply', 'aria-label': 'Claude' });
      renderReply(el, body.nodes, ctx);
      return el;
    }
    case 'tool': {
      const detail = body.detail ?? '';
      const file = body.file ?? null;
      // A linked file is named by its workspace path (Claude names it absolute: the whole
      // line was the workspace's own folder); the path as Claude gave it is the link's title.
      const detailNode = file
        ? h('a', { href: '#', class: 'file-link', title: detail || file, onclick: (e: Event) => { e.preventDefault(); ctx.openFile(file, null); } }, file)
        : h('span', { class: 'detail' }, detail);
      const row = h('div', { ...attrs, class: 'entry tool' }, h('span', { class: 'tool-name' }, body.tool), ' ', detailNode);
      if (SUBAGENT_TOOLS.has(body.tool)) {
        const id = body.toolUseId;
        const holder = h('div', { class: 'subagent-history', hidden: true, 'data-subagent': id });
        const toggle = h(
          'button',
          {
            type: 'button',
            class: 'link-button',
            'aria-expanded': 'false',
            onclick: () => {
              const open = toggle.getAttribute('aria-expanded') !== 'true';
              toggle.setAttribute('aria-expanded', String(open));
              toggle.textContent = open ? "Hide the subagent's work" : "Show the subagent's work";
              holder.hidden = !open;
              clear(holder);
              if (open) {
                const history = ctx.subagentHistory(id);
                holder.appendChild(history ?? h('p', { class: 'muted' }, 'Nothing from this subagent yet.'));
              }
            },
          },
          "Show the subagent's work",
        );
        row.append(' ', toggle, holder);
      }
      return row;
    }
    case 'mcp':
      return h(
        'div',
        { ...attrs, class: 'entry mcp' },
        h('span', { class: 'tool-name' }, 'MCP'),
        ' ',
        h('span', null, `${body.server} · ${body.tool}`),
      );
    case 'notice':
      return h(
        'div',
        { ...attrs, class: `entry notice notice-${body.level}` },
        h('span', { class: 'notice-level' }, body.level === 'info' ? 'Note' : body.level === 'warning' ? 'Warning' : 'Error'),
        ' ',
        body.text,
      );
    case 'denied':
      return h(
        'div',
        { ...attrs, class: 'entry denied' },
        h('span', { class: 'tool-name' }, `Denied ${body.tool}`),
        ' ',
        h('span', { class: 'detail' }, body.message),
      );
    case 'turnEnd': {
      const parts = [outcomeText(body.outcome), changed > 0 ? filesChanged(changed) : '', formatDuration(body.durationMs), formatCost(body.costUsd)].filter(Boolean);
      return h('div', { ...attrs, class: `entry turn-end outcome-${body.outcome}` }, parts.join(' · '));
    }
    case 'stopped':
      return h('div', { ...attrs, class: 'entry stopped' }, 'Stopped');
    case 'failed':
      return h('div', { ...attrs, class: 'entry failed' }, `Failed${body.error ? `: ${body.error}` : ''}`);
  }
}

/** The ring of a conversation that has none (one array, so that "unchanged" is an identity check). */
const NO_ENTRIES: readonly TranscriptEntry[] = Object.freeze([]);

/** Pixels rendered beyond the visible box, above and below. */
const OVERSCAN_PX = 800;
/** A height guessed for an entry not yet measured. */
const ESTIMATE_PX = 56;
/** Entries rendered when the log has no layout yet (hidden, or a DOM without layout). */
const WINDOW_WITHOUT_LAYOUT = 60;

/**
 * The conversation view: a `log` of one conversation's transcript, rendered
 * as a window. Only the entries within the visible box (plus
 * {@link OVERSCAN_PX} either side) are in the DOM, between two spacers
 * whose heights are the measured (or estimated) heights of the entries
 * left out, so a long session scrolls smoothly and the page's DOM stays
 * small; the search (`search.ts`) works on the transcript itself and
 * brings a match into the window. An entry sent again with the same seq
 * replaces its node; a view at the bottom stays at the bottom.
 */
export class TranscriptView {
  readonly el: HTMLElement;
  private readonly top: HTMLElement;
  private readonly bottom: HTMLElement;
  private readonly empty: HTMLElement;
  private key: string | null = null;
  private entries: readonly TranscriptEntry[] = NO_ENTRIES;
  /** The shown conversation's subagent ring as last rendered (open histories follow it). */
  private subagentEntries: readonly TranscriptEntry[] | undefined = undefined;
  /** Whether it has rendered once. */
  private drawn = false;
  private readonly nodes = new Map<number, { entry: TranscriptEntry; node: HTMLElement }>();
  /** Measured heights by seq (kept for the entries the ring still holds). */
  private readonly heights = new Map<number, number>();
  private readonly resize: ResizeObserver | null;
  private frame: number | null = null;
  /**
   * Whether the window has been laid out once with its entries. Before that, the log's height is
   * taken as the viewport's (an upper bound, read without laying the page out): reading the log's
   * own height would lay the whole page out before its entries are in it, then again with them.
   */
  private sized = false;
  private atBottom = true;
  /** The entry the search marks now. */
  private marked: number | null = null;
  /** The search's words in the marked entry, and their ranges there now. */
  private markedQuery = '';
  private markedRanges: Range[] = [];
  /** The node and query `markedRanges` were found for. */
  private markedIn: HTMLElement | null = null;
  private markedFor = '';

  constructor(private readonly ctx: MarkdownContext & { subagentHistory(toolUseId: string): HTMLElement | null }) {
    this.top = h('div', { class: 'log-spacer', 'aria-hidden': 'true' });
    this.bottom = h('div', { class: 'log-spacer', 'aria-hidden': 'true' });
    this.empty = h('p', { class: 'empty muted' }, 'Nothing here yet. Ask Claude below.');
    this.el = h('div', { class: 'log', role: 'log', 'aria-label': 'Conversation', 'aria-live': 'polite', tabindex: 0 }, this.top, this.bottom);
    this.el.addEventListener('scroll', () => {
      this.atBottom = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 40;
      this.schedule();
    }, { passive: true });
    // An entry that changes height (a subagent's work opened, fonts) moves the window's arithmetic.
    this.resize = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => { this.schedule(); });
    // The log's own box changing (the page around it) moves the window too: a render no longer lays out on every frame.
    this.resize?.observe(this.el);
  }

  /** How many files a turn line's turn changed. */
  private changedBy(entry: TranscriptEntry): number {
    return entry.body.kind === 'turnEnd' ? filesChangedIn(this.entries, entry.turn) : 0;
  }

  render(state: PageState, key: string | null): void {
    const entries = key ? (state.transcripts[key] ?? NO_ENTRIES) : NO_ENTRIES;
    const subagentEntries = key ? state.subagentTranscripts[key] : undefined;
    // A frame that changed nothing this view shows (a phase, the keypad, activity: most frames of
    // a turn) costs it nothing: no rebuild, no layout read. The rings are new arrays when they change.
    if (this.drawn && key === this.key && entries === this.entries && subagentEntries === this.subagentEntries) return;
    this.drawn = true;
    this.subagentEntries = subagentEntries;
    if (key !== this.key) {
      this.key = key;
      for (const held of this.nodes.values()) {
        this.resize?.unobserve(held.node);
        held.node.remove();
      }
      this.nodes.clear();
      this.heights.clear();
      this.atBottom = true;
      this.marked = null;
      this.markedRanges = [];
      highlight([]);
    }
    this.entries = entries;
    if (this.entries.length === 0) {
      if (!this.empty.parentNode) this.el.insertBefore(this.empty, this.bottom);
    } else {
      this.empty.remove();
    }
    // Rendered entries whose content changed are rebuilt; open subagent histories follow their entries.
    for (const entry of this.entries) {
      const held = this.nodes.get(entry.seq);
      if (held && held.entry !== entry) {
        const node = entryView(entry, this.ctx, this.changedBy(entry));
        held.node.replaceWith(node);
        this.resize?.unobserve(held.node);
        this.resize?.observe(node);
        this.nodes.set(entry.seq, { entry, node });
      }
    }
    for (const holder of Array.from(this.el.querySelectorAll<HTMLElement>('.subagent-history:not([hidden])'))) {
      const id = holder.dataset.subagent;
      const count = id && key ? (state.subagentTranscripts[key] ?? []).filter((e) => e.subagent === id).length : 0;
      if (id && holder.dataset.count !== String(count)) {
        holder.dataset.count = String(count);
        // An open history follows entry by entry (a rebuild of its 400 would be one long task per message).
        const region = holder.firstElementChild;
        if (key && region && updateSubagentHistory(region, state, key, id)) continue;
        const history = this.ctx.subagentHistory(id);
        clear(holder);
        holder.appendChild(history ?? h('p', { class: 'muted' }, 'Nothing from this subagent yet.'));
      }
    }
    this.layout();
  }

  private schedule(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.layout();
    });
  }

  private height(seq: number): number {
    return this.heights.get(seq) ?? ESTIMATE_PX;
  }

  /** The window of entries to render: [from, to). */
  private window(): [number, number] {
    const n = this.entries.length;
    const view = this.sized || !(window.innerHeight > 0) ? this.el.clientHeight : window.innerHeight;
    if (view === 0) return [Math.max(0, n - WINDOW_WITHOUT_LAYOUT), n];
    const total = this.entries.reduce((sum, e) => sum + this.height(e.seq), 0);
    const top = this.atBottom ? Math.max(0, total - view) : this.el.scrollTop;
    const from = top - OVERSCAN_PX;
    const to = top + view + OVERSCAN_PX;
    let y = 0;
    let first = n;
    let last = n;
    for (let i = 0; i < n; i += 1) {
      const entry = this.entries[i];
      if (!entry) continue;
      const bottom = y + this.height(entry.seq);
      if (first === n && bottom > from) first = i;
      if (y >= to) {
        last = i;
        break;
      }
      y = bottom;
    }
    return [Math.min(first, n), last];
  }

  /** Renders the window, measures it, and keeps the bottom in view when it was. */
  private layout(): void {
    const [from, to] = this.window();
    const keep = new Set<number>();
    let before: Node = this.bottom;
    for (let i = to - 1; i >= from; i -= 1) {
      const entry = this.entries[i];
      if (!entry) continue;
      keep.add(entry.seq);
      let held = this.nodes.get(entry.seq);
      if (!held) {
        held = { entry, node: entryView(entry, this.ctx, this.changedBy(entry)) };
        this.nodes.set(entry.seq, held);
        this.resize?.observe(held.node);
      }
      if (held.node.nextSibling !== before || held.node.parentNode !== this.el) this.el.insertBefore(held.node, before);
      before = held.node;
    }
    for (const [seq, held] of this.nodes) {
      if (!keep.has(seq)) {
        this.resize?.unobserve(held.node);
        held.node.remove();
        this.nodes.delete(seq);
      }
    }
    const live = new Set(this.entries.map((e) => e.seq));
    for (const seq of this.heights.keys()) if (!live.has(seq)) this.heights.delete(seq);
    // The spacers hold the entries outside the window (their heights are not measured here): set
    // before the window is measured, so that one layout serves the measuring and the scroll.
    let above = 0;
    let below = 0;
    this.entries.forEach((entry, i) => {
      if (i < from) above += this.height(entry.seq);
      else if (i >= to) below += this.height(entry.seq);
    });
    this.top.style.height = `${above}px`;
    this.bottom.style.height = `${below}px`;
    // An entry's height is from its top to the next one's (margins included).
    for (let i = from; i < to; i += 1) {
      const entry = this.entries[i];
      const node = entry ? this.nodes.get(entry.seq)?.node : undefined;
      if (!entry || !node) continue;
      const next = node.nextElementSibling as HTMLElement | null;
      const measured = next ? next.offsetTop - node.offsetTop : node.offsetHeight;
      if (measured > 0) this.heights.set(entry.seq, measured);
    }
    if (to > from) this.sized = true;
    if (this.atBottom) this.el.scrollTop = this.el.scrollHeight;
    if (this.marked !== null) this.markNode(this.marked);
  }

  private markNode(seq: number): HTMLElement | null {
    for (const old of Array.from(this.el.querySelectorAll('.search-hit'))) {
      old.classList.remove('search-hit');
      old.removeAttribute('aria-current');
    }
    const node = this.nodes.get(seq)?.node ?? null;
    node?.classList.add('search-hit');
    node?.setAttribute('aria-current', 'true');
    // Found again in the node as it is now (a render may have replaced its text, collapsing the old
    // ranges); not while the same node still holds them (a render of every frame of a turn would
    // walk a long reply's text each time).
    const held = this.markedRanges[0];
    if (node !== this.markedIn || this.markedQuery !== this.markedFor || !held || held.collapsed) {
      this.markedRanges = node ? occurrences(node, this.markedQuery) : [];
      this.markedIn = node;
      this.markedFor = this.markedQuery;
      highlight(this.markedRanges);
    }
    return node;
  }

  /** How many entries are in the DOM now (for `window.orbitInspect`). */
  rendered(): number {
    return this.nodes.size;
  }

  /**
   * Brings the entry `seq` into the window and into view, and marks it as the search's match (null:
   * no mark); `query`'s occurrences in it are highlighted and the first is scrolled to.
   */
  reveal(seq: number | null, query = ''): void {
    this.marked = seq;
    this.markedQuery = query;
    if (seq === null) {
      for (const old of Array.from(this.el.querySelectorAll('.search-hit'))) {
        old.classList.remove('search-hit');
        old.removeAttribute('aria-current');
      }
      this.markedRanges = [];
      highlight([]);
      return;
    }
    let y = 0;
    for (const entry of this.entries) {
      if (entry.seq === seq) break;
      y += this.height(entry.seq);
    }
    this.atBottom = false;
    this.el.scrollTop = Math.max(0, y - this.el.clientHeight / 3);
    this.layout();
    const node = this.markNode(seq);
    const first = this.markedRanges[0]?.getBoundingClientRect();
    if (first && first.height > 0) {
      const view = this.el.getBoundingClientRect();
      this.el.scrollTop += first.top - view.top - this.el.clientHeight / 2;
    } else {
      node?.scrollIntoView({ block: 'center' });
    }
    this.atBottom = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 40;
  }
}

/** The name of the conversation search's highlight (`::highlight(orbit-search)` in style.css). */
export const SEARCH_HIGHLIGHT = 'orbit-search';

/** The ranges of `query` (case-insensitive) in `root`'s text, text node by text node. */
export function occurrences(root: Node, query: string): Range[] {
  const needle = query.toLowerCase();
  if (!needle || !root.ownerDocument) return [];
  const ranges: Range[] = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const hay = (text.textContent ?? '').toLowerCase();
    for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) {
      const range = root.ownerDocument.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + needle.length);
      ranges.push(range);
    }
  }
  return ranges;
}

/** Highlights `ranges` as the search's words, where the browser has the CSS Custom Highlight API. */
function highlight(ranges: Range[]): void {
  const registry = (globalThis.CSS as { highlights?: Map<string, unknown> } | undefined)?.highlights;
  const Made = (globalThis as { Highlight?: new (...r: Range[]) => unknown }).Highlight;
  if (!registry || !Made) return;
  if (ranges.length === 0) registry.delete(SEARCH_HIGHLIGHT);
  else registry.set(SEARCH_HIGHLIGHT, new Made(...ranges));
}

/**
 * A subagent's entries shown at once; the rest follow in tasks of this many. Its history holds up
 * to 400 entries (the host's ring), and an open one follows every message of the subagent: built
 * whole in one task each time, 400 entries held the main thread up to 50 ms between two frames
 * (bench/README.md, "A subagent's history of 400 entries").
 */
export const SUBAGENT_SLICE = 40;

/** What an open subagent history holds: its entries' nodes (a prefix of `entries`, in order). */
interface SubagentList {
  entries: readonly TranscriptEntry[];
  nodes: { entry: TranscriptEntry; node: HTMLElement }[];
  ctx: MarkdownContext & { subagentHistory(toolUseId: string): HTMLElement | null };
  /** A slice is waiting for its task. */
  pending: boolean;
}
const subagentLists = new WeakMap<HTMLElement, SubagentList>();

/** Renders up to `SUBAGENT_SLICE` missing entries of `list` (in order), and asks for a task for the rest. */
function fillSubagentList(el: HTMLElement, list: SubagentList): void {
  const fragment = document.createDocumentFragment();
  const end = Math.min(list.entries.length, list.nodes.length + SUBAGENT_SLICE);
  for (let i = list.nodes.length; i < end; i += 1) {
    const entry = list.entries[i];
    if (!entry) continue;
    const node = entryView(entry, list.ctx);
    list.nodes.push({ entry, node });
    fragment.appendChild(node);
  }
  el.appendChild(fragment);
  if (list.nodes.length < list.entries.length && !list.pending) {
    list.pending = true;
    setTimeout(() => {
      list.pending = false;
      // Closed meanwhile: nothing more to build.
      if (el.isConnected) fillSubagentList(el, list);
    }, 0);
  }
}

/**
 * Brings an open history's entries in step with `entries` entry by entry (the ring dropped some
 * from the front, added some at the end, sent some again): only what changed is built.
 */
function syncSubagentList(el: HTMLElement, list: SubagentList, entries: readonly TranscriptEntry[]): void {
  const bySeq = new Map(entries.map((e) => [e.seq, e]));
  const kept: SubagentList['nodes'] = [];
  for (const held of list.nodes) {
    const now = bySeq.get(held.entry.seq);
    if (!now) {
      held.node.remove();
      continue;
    }
    if (now !== held.entry) {
      const node = entryView(now, list.ctx);
      held.node.replaceWith(node);
      kept.push({ entry: now, node });
    } else {
      kept.push(held);
    }
  }
  list.nodes = kept;
  list.entries = entries;
  fillSubagentList(el, list);
}

function subagentInfo(state: PageState, key: string, toolUseId: string): { entries: TranscriptEntry[]; info: SubagentInfo | undefined } {
  return {
    entries: (state.subagentTranscripts[key] ?? []).filter((e) => e.subagent === toolUseId),
    info: state.subagents[key]?.[toolUseId],
  };
}

/** The line above a subagent's entries, and its output below them. */
function subagentHead(info: SubagentInfo | undefined): HTMLElement | null {
  return info ? h('p', { class: 'muted subagent-head' }, [info.agentType, info.description, info.running ? 'running' : info.status].filter(Boolean).join(' · ')) : null;
}
function subagentOutput(info: SubagentInfo | undefined): HTMLElement | null {
  return info?.output ? h('pre', { class: 'content subagent-output' }, h('code', null, info.output)) : null;
}

/**
 * Keeps an open subagent history (made by {@link subagentHistoryView}) in step with the state:
 * its line and output again, its entries entry by entry. False when `region` is not one.
 */
export function updateSubagentHistory(region: Element, state: PageState, key: string, toolUseId: string): boolean {
  const listEl = region.querySelector<HTMLElement>(':scope > .subagent-entries');
  const list = listEl ? subagentLists.get(listEl) : undefined;
  if (!listEl || !list) return false;
  const { entries, info } = subagentInfo(state, key, toolUseId);
  region.querySelector(':scope > .subagent-head')?.remove();
  region.querySelector(':scope > .subagent-output')?.remove();
  const head = subagentHead(info);
  if (head) region.insertBefore(head, listEl);
  const output = subagentOutput(info);
  if (output) region.appendChild(output);
  syncSubagentList(listEl, list, entries);
  return true;
}

/** A subagent's own history, on demand: its first entries at once, the rest in tasks of their own. */
export function subagentHistoryView(
  state: PageState,
  key: string,
  toolUseId: string,
  ctx: MarkdownContext,
): HTMLElement | null {
  const { entries, info } = subagentInfo(state, key, toolUseId);
  if (entries.length === 0 && !info) return null;
  const inner = { ...ctx, subagentHistory: () => null };
  const listEl = h('div', { class: 'subagent-entries' });
  const list: SubagentList = { entries, nodes: [], ctx: inner, pending: false };
  subagentLists.set(listEl, list);
  fillSubagentList(listEl, list);
  return h(
    'div',
    { class: 'subagent', role: 'region', 'aria-label': "The subagent's work" },
    subagentHead(info),
    listEl,
    subagentOutput(info),
  );
}
