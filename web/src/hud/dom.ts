/**
 * A small DOM builder. Text is always set as text (`textContent` or text
 * nodes) and attributes through `setAttribute`; nothing here parses HTML.
 */
export type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  [name: string]: string | number | boolean | null | undefined | ((event: Event) => void);
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (typeof value === 'function') {
        el.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
      } else if (name === 'class') {
        el.className = String(value);
      } else if (value === true) {
        el.setAttribute(name, '');
      } else {
        el.setAttribute(name, String(value));
      }
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * Sets a node's text only when it differs. The same text written again
 * still replaces the text node: the element is laid out and painted again,
 * and the page presents a frame that shows nothing new (on a software GPU
 * ~25 ms of CPU each: bench/page/README.md, latency). The page renders on
 * every host frame, most of which change none of the texts it writes.
 */
export function setText(el: Node, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

let uid = 0;
/** A document-unique id for aria references. */
/** `text` as text and `<mark>`s for the characters at `indices` (a matcher's): one node per run of marked or unmarked characters. */
export function marked(text: string, indices: readonly number[]): (Node | string)[] {
  const at = new Set(indices);
  const parts: (Node | string)[] = [];
  let run = '';
  let runMarked = false;
  let i = 0;
  for (const ch of text) {
    const isMarked = at.has(i);
    if (isMarked !== runMarked && run !== '') {
      parts.push(runMarked ? h('mark', null, run) : run);
      run = '';
    }
    runMarked = isMarked;
    run += ch;
    i += 1;
  }
  if (run !== '') parts.push(runMarked ? h('mark', null, run) : run);
  return parts;
}

export function uniqueId(prefix: string): string {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** Money as the HUD shows it. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0.00';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}
