/**
 * A reply's markdown, from the projector's node trees to DOM nodes. The
 * model's text only ever becomes text nodes; a link is clickable only as a
 * graph file (opens the file panel) or an external http/https/mailto
 * address; an image is its link.
 */
import type { MdNode } from '../protocol/types';
import { h } from './dom';

export interface MarkdownContext {
  /** Opens the file panel on a graph file at a line (1-based), if any. */
  openFile(path: string, line: number | null): void;
  /** The reply's shallowest heading level (it becomes the page's h3); 1 when not given. */
  headingTop?: number;
}

/** `ctx` for a reply whose blocks are `nodes`: its shallowest heading becomes h3 (a reply of `##` headings skipped h3). */
export function replyContext(nodes: readonly MdNode[], ctx: MarkdownContext): MarkdownContext {
  let top = 6;
  for (const node of nodes) if (node.t === 'heading') top = Math.min(top, Math.max(1, node.level));
  return top === 1 ? ctx : { ...ctx, headingTop: top };
}

const EXTERNAL = /^(https?:|mailto:)/i;

/** The `:line` (or `#L12`) a link names, if any. */
export function lineOf(href: string): number | null {
  const match = /(?::(\d+)(?::\d+)?|#L(\d+)(?:-L?\d+)?)$/.exec(href.split('?')[0] ?? href);
  const digits = match?.[1] ?? match?.[2];
  if (digits === undefined) return null;
  const line = Number.parseInt(digits, 10);
  return Number.isFinite(line) && line > 0 ? line : null;
}

function children(nodes: readonly MdNode[], ctx: MarkdownContext): Node[] {
  return nodes.map((node) => renderNode(node, ctx));
}

function renderLink(node: Extract<MdNode, { t: 'link' }>, ctx: MarkdownContext): Node {
  const content = children(node.children, ctx);
  if (node.file) {
    const file = node.file;
    const line = lineOf(node.href);
    return h(
      'a',
      {
        href: '#',
        class: 'file-link',
        title: line ? `${file}:${line}` : file,
        'data-file': file,
        onclick: (event: Event) => {
          event.preventDefault();
          ctx.openFile(file, line);
        },
      },
      content,
    );
  }
  if (node.external && EXTERNAL.test(node.href)) {
    return h('a', { href: node.href, target: '_blank', rel: 'noopener noreferrer' }, content);
  }
  // Anything else (javascript:, data:, a path outside the graph) is text, with its address shown.
  return h('span', { class: 'dead-link', title: node.href }, content);
}

export function renderNode(node: MdNode, ctx: MarkdownContext): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code':
      return h('code', null, node.text);
    case 'softBreak':
      return document.createTextNode(' ');
    case 'hardBreak':
      return h('br');
    case 'rule':
      return h('hr');
    case 'paragraph':
      return h('p', null, children(node.children, ctx));
    case 'heading': {
      const level = Math.min(6, Math.max(1, node.level - (ctx.headingTop ?? 1) + 1));
      // Replies sit under the page's own headings: h3 and below.
      const tag = (['h3', 'h4', 'h5', 'h6', 'h6', 'h6'] as const)[level - 1] ?? 'h6';
      return h(tag, null, children(node.children, ctx));
    }
    case 'quote':
      return h('blockquote', null, children(node.children, ctx));
    case 'codeBlock':
      return h(
        'pre',
        { class: 'code-block', 'data-lang': node.lang ?? null },
        h('code', null, node.text),
      );
    case 'list': {
      const items = children(node.children, ctx);
      if (node.start === null || node.start === undefined) return h('ul', null, items);
      return h('ol', { start: node.start }, items);
    }
    case 'item': {
      const box =
        node.checked === null || node.checked === undefined
          ? null
          : h('input', { type: 'checkbox', checked: node.checked, disabled: true, 'aria-label': node.checked ? 'done' : 'not done' });
      return h('li', null, box, children(node.children, ctx));
    }
    case 'emphasis':
      return h('em', null, children(node.children, ctx));
    case 'strong':
      return h('strong', null, children(node.children, ctx));
    case 'strike':
      return h('s', null, children(node.children, ctx));
    case 'link':
      return renderLink(node, ctx);
    case 'table': {
      const [head, ...rows] = node.rows;
      return h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          null,
          head ? h('thead', null, h('tr', null, head.map((cell) => h('th', { scope: 'col' }, children(cell, ctx))))) : null,
          h('tbody', null, rows.map((row) => h('tr', null, row.map((cell) => h('td', null, children(cell, ctx)))))),
        ),
      );
    }
  }
}

/** A reply's blocks as a fragment. */
export function renderMarkdown(nodes: readonly MdNode[], ctx: MarkdownContext): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const node of nodes) fragment.appendChild(renderNode(node, ctx));
  return fragment;
}
