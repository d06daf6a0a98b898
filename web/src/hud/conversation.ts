/**
 * The conversation view: a `log` of one conversation's transcript entries,
 * rendered incrementally by seq (an entry sent again with the same seq
 * replaces its node). A subagent's work shows as its Task call, whose
 * button opens the subagent's own history.
 */
import type { TranscriptEntry } from '../protocol/types';
import type { PageState } from '../state/store';
import { clear, formatCost, formatDuration, h } from './dom';
import { renderMarkdown, type MarkdownContext } from './markdown';

const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);

/** A stopped or failed turn has its own entry just before its turn line, which then only ends it. */
function outcomeText(outcome: string): string {
  return outcome === 'completed' ? 'Done' : 'Turn ended';
}

export function entryView(
  entry: TranscriptEntry,
  ctx: MarkdownContext & { subagentHistory(toolUseId: string): HTMLElement | null },
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
    case 'reply':
      return h('article', { ...attrs, class: 'entry reply', 'aria-label': 'Claude' }, renderMarkdown(body.nodes, ctx));
    case 'tool': {
      const detail = body.detail ?? '';
      const file = body.file ?? null;
      const detailNode = file
        ? h('a', { href: '#', class: 'file-link', onclick: (e: Event) => { e.preventDefault(); ctx.openFile(file, null); } }, detail || file)
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
      const parts = [outcomeText(body.outcome), formatDuration(body.durationMs), formatCost(body.costUsd)].filter(Boolean);
      return h('div', { ...attrs, class: `entry turn-end outcome-${body.outcome}` }, parts.join(' · '));
    }
    case 'stopped':
      return h('div', { ...attrs, class: 'entry stopped' }, 'Stopped');
    case 'failed':
      return h('div', { ...attrs, class: 'entry failed' }, `Failed${body.error ? `: ${body.error}` : ''}`);
  }
}

/** Keeps a log element in step with a transcript, touching only what changed. */
export class TranscriptView {
  readonly el: HTMLElement;
  private key: string | null = null;
  private nodes = new Map<number, { entry: TranscriptEntry; node: HTMLElement }>();

  constructor(private readonly ctx: MarkdownContext & { subagentHistory(toolUseId: string): HTMLElement | null }) {
    this.el = h('div', { class: 'log', role: 'log', 'aria-label': 'Conversation', 'aria-live': 'polite', tabindex: 0 });
  }

  render(state: PageState, key: string | null): void {
    if (key !== this.key) {
      this.key = key;
      this.nodes.clear();
      clear(this.el);
    }
    const entries = key ? (state.transcripts[key] ?? []) : [];
    const stick = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 40;
    const seen = new Set<number>();
    let before: Node | null = null;
    // Walk from the end so insertions keep seq order.
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const entry = entries[i];
      if (!entry) continue;
      seen.add(entry.seq);
      const held = this.nodes.get(entry.seq);
      let node: HTMLElement;
      if (held && held.entry === entry) {
        node = held.node;
      } else {
        node = entryView(entry, this.ctx);
        if (held) held.node.replaceWith(node);
        this.nodes.set(entry.seq, { entry, node });
      }
      if (node.nextSibling !== before || node.parentNode !== this.el) this.el.insertBefore(node, before);
      before = node;
    }
    for (const [seq, held] of this.nodes) {
      if (!seen.has(seq)) {
        held.node.remove();
        this.nodes.delete(seq);
      }
    }
    if (entries.length === 0 && !this.el.querySelector('.empty')) {
      this.el.appendChild(h('p', { class: 'empty muted' }, 'Nothing here yet. Ask Claude below.'));
    } else if (entries.length > 0) {
      this.el.querySelector('.empty')?.remove();
    }
    // An open subagent history follows its new entries.
    for (const holder of Array.from(this.el.querySelectorAll<HTMLElement>('.subagent-history:not([hidden])'))) {
      const id = holder.dataset.subagent;
      const count = id && key ? (state.subagentTranscripts[key] ?? []).filter((e) => e.subagent === id).length : 0;
      if (id && holder.dataset.count !== String(count)) {
        holder.dataset.count = String(count);
        const history = this.ctx.subagentHistory(id);
        clear(holder);
        holder.appendChild(history ?? h('p', { class: 'muted' }, 'Nothing from this subagent yet.'));
      }
    }
    if (stick) this.el.scrollTop = this.el.scrollHeight;
    if (this.marked !== null && !this.nodes.has(this.marked)) this.marked = null;
  }

  /** The entry the search marks now. */
  private marked: number | null = null;

  /** Brings the entry `seq` into view and marks it as the search's match (null: no mark). */
  reveal(seq: number | null): void {
    if (this.marked !== null) {
      const old = this.nodes.get(this.marked)?.node;
      old?.classList.remove('search-hit');
      old?.removeAttribute('aria-current');
    }
    this.marked = seq;
    if (seq === null) return;
    const node = this.nodes.get(seq)?.node;
    if (!node) return;
    node.classList.add('search-hit');
    node.setAttribute('aria-current', 'true');
    node.scrollIntoView({ block: 'center' });
  }
}

/** A subagent's own history, on demand. */
export function subagentHistoryView(
  state: PageState,
  key: string,
  toolUseId: string,
  ctx: MarkdownContext,
): HTMLElement | null {
  const entries = (state.subagentTranscripts[key] ?? []).filter((e) => e.subagent === toolUseId);
  const info = state.subagents[key]?.[toolUseId];
  if (entries.length === 0 && !info) return null;
  const inner = { ...ctx, subagentHistory: () => null };
  return h(
    'div',
    { class: 'subagent', role: 'region', 'aria-label': "The subagent's work" },
    info ? h('p', { class: 'muted' }, [info.agentType, info.description, info.running ? 'running' : info.status].filter(Boolean).join(' · ')) : null,
    entries.map((e) => entryView(e, inner)),
    info?.output ? h('pre', { class: 'content' }, h('code', null, info.output)) : null,
  );
}
