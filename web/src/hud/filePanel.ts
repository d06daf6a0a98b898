/**
 * The file panel: a graph file as plain text with line numbers, scrolled
 * to the line a link named. The host serves it as `text/plain`; the page
 * shows it as text nodes only.
 */
import { clear, h } from './dom';

/** At most this many lines are shown (the host caps the size too). */
const MAX_LINES = 20000;

export class FilePanel {
  readonly el: HTMLElement;
  private readonly title: HTMLElement;
  private readonly body: HTMLElement;
  private returnFocus: HTMLElement | null = null;
  private request = 0;
  /** The file shown (or being fetched), and the line its link named. */
  private shown: { path: string; line: number | null } | null = null;

  constructor(private readonly workspaceId: string) {
    this.title = h('h2', { class: 'file-title', id: 'file-panel-title' });
    this.body = h('div', { class: 'file-body', tabindex: 0 });
    this.el = h(
      'aside',
      {
        class: 'file-panel',
        role: 'dialog',
        'aria-labelledby': 'file-panel-title',
        hidden: true,
        onkeydown: (e: Event) => {
          if ((e as KeyboardEvent).key === 'Escape') this.close();
        },
      },
      h('div', { class: 'file-head' }, this.title, h('button', { type: 'button', onclick: () => { this.close(); } }, 'Close')),
      this.body,
    );
  }

  close(): void {
    this.el.hidden = true;
    this.shown = null;
    this.returnFocus?.focus();
    this.returnFocus = null;
  }

  /** Shows `path` (`refresh`: again, as the file came back; the focus stays where it is). */
  async open(path: string, line: number | null, refresh = false): Promise<void> {
    this.request += 1;
    const request = this.request;
    this.shown = { path, line };
    if (!refresh) this.returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    this.title.textContent = line ? `${path}:${line}` : path;
    clear(this.body);
    this.body.appendChild(h('p', { class: 'muted' }, 'Loading…'));
    this.el.hidden = false;
    if (!refresh) this.body.focus();
    let text: string;
    try {
      const response = await fetch(`/w/${encodeURIComponent(this.workspaceId)}/file?path=${encodeURIComponent(path)}`, {
        credentials: 'same-origin',
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`.trim());
      text = await response.text();
    } catch (error) {
      if (request !== this.request) return;
      clear(this.body);
      this.body.appendChild(h('p', { class: 'error', role: 'alert' }, `Could not open ${path}: ${String(error instanceof Error ? error.message : error)}`));
      return;
    }
    if (request !== this.request) return;
    clear(this.body);
    const lines = text.split('\n').slice(0, MAX_LINES);
    const list = h(
      'ol',
      { class: 'file-lines' },
      lines.map((content, i) => h('li', { class: i + 1 === line ? 'line target' : 'line', 'data-line': i + 1 }, h('code', null, content || ' '))),
    );
    this.body.appendChild(list);
    if (line) {
      const target = list.children[line - 1];
      if (target instanceof HTMLElement) target.scrollIntoView({ block: 'center' });
    }
  }

  /**
   * The map's changes: the file shown was deleted (said above its last text, which stays for
   * reading), or it is back (shown afresh).
   */
  mapChanged(removed: readonly string[], added: readonly string[]): void {
    const shown = this.shown;
    if (!shown || this.el.hidden) return;
    if (added.includes(shown.path)) {
      void this.open(shown.path, shown.line, true);
      return;
    }
    if (removed.includes(shown.path) && !this.body.querySelector('.file-gone')) {
      this.body.prepend(h('p', { class: 'file-gone error', role: 'status' }, `${shown.path} was deleted; this is its text as it was.`));
    }
  }
}
