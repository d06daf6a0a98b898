/**
 * The file panel: a graph file as plain text with line numbers, scrolled
 * to the line a link named. The host serves it as `text/plain`; the page
 * shows it as text nodes only. When the file changes in place (Claude or an
 * editor wrote it: the host's `filesChanged`), the panel reads it again and
 * shows the new text where the reader was (scroll and focus kept), saying so.
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
  /** The text shown (`null` while loading, or after an error). */
  private text: string | null = null;
  /** A re-read of `shown` runs; `again`: another change came meanwhile (one more read after it). */
  private rereading: { shown: { path: string; line: number | null }; again: boolean } | null = null;
  /** The line saying the file changed on disk, while shown. */
  private changed: HTMLElement | null = null;

  constructor(private readonly workspaceId: string) {
    this.title = h('h2', { class: 'file-title', id: 'file-panel-title' });
    this.body = h('div', { class: 'file-body', tabindex: 0 });
    const closeButton = h('button', { type: 'button', onclick: () => { this.close(); } }, 'Close');
    // Modal: it covers the page, so Tab goes round its own two stops (Close, the text) instead of
    // into the controls hidden behind it.
    this.el = h(
      'aside',
      {
        class: 'file-panel',
        role: 'dialog',
        'aria-modal': 'true',
        'aria-labelledby': 'file-panel-title',
        hidden: true,
        onkeydown: (e: Event) => {
          const key = e as KeyboardEvent;
          if (key.key === 'Escape') this.close();
          else if (key.key === 'Tab') {
            const stops = [closeButton, this.body];
            const at = stops.indexOf(document.activeElement as HTMLElement);
            const next = stops[(at + (key.shiftKey ? stops.length - 1 : 1) + stops.length) % stops.length];
            key.preventDefault();
            next?.focus();
          }
        },
      },
      h('div', { class: 'file-head' }, this.title, closeButton),
      this.body,
    );
  }

  close(): void {
    this.el.hidden = true;
    this.shown = null;
    this.text = null;
    this.unsay();
    this.returnFocus?.focus();
    this.returnFocus = null;
  }

  /** Shows `path` (`refresh`: again, as the file came back; the focus stays where it is). */
  async open(path: string, line: number | null, refresh = false): Promise<void> {
    this.request += 1;
    const request = this.request;
    this.shown = { path, line };
    this.text = null;
    this.unsay();
    if (!refresh) this.returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    this.title.textContent = line ? `${path}:${line}` : path;
    clear(this.body);
    this.body.appendChild(h('p', { class: 'muted' }, 'Loading…'));
    this.el.hidden = false;
    if (!refresh) this.body.focus();
    const read = await this.read(path);
    if (request !== this.request) return;
    clear(this.body);
    if (!read.ok) {
      this.body.appendChild(h('p', { class: 'error', role: 'alert' }, `Could not open ${path}: ${read.error}`));
      return;
    }
    this.text = read.text;
    const list = this.lines(read.text, line);
    this.body.appendChild(list);
    if (line) {
      const target = list.children[line - 1];
      if (target instanceof HTMLElement) target.scrollIntoView({ block: 'center' });
    }
  }

  private async read(path: string): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
    try {
      const response = await fetch(`/w/${encodeURIComponent(this.workspaceId)}/file?path=${encodeURIComponent(path)}`, {
        credentials: 'same-origin',
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`.trim());
      return { ok: true, text: await response.text() };
    } catch (error) {
      return { ok: false, error: String(error instanceof Error ? error.message : error) };
    }
  }

  private lines(text: string, line: number | null): HTMLElement {
    return h(
      'ol',
      { class: 'file-lines' },
      text
        .split('\n')
        .slice(0, MAX_LINES)
        .map((content, i) => h('li', { class: i + 1 === line ? 'line target' : 'line', 'data-line': i + 1 }, h('code', null, content || ' '))),
    );
  }

  /**
   * Files whose content changed in place (`more`: perhaps others too). The file shown, if among
   * them, is read again: its new text replaces the old where the reader was (the scroll and the
   * focus stay), with a line saying it changed; the same text changes nothing. Changes that come
   * while a read runs make one more read after it.
   */
  filesChanged(paths: readonly string[], more: boolean): void {
    const shown = this.shown;
    if (!shown || this.el.hidden || this.text === null) return;
    if (!more && !paths.includes(shown.path)) return;
    // One read at a time for the file shown (a read of a file shown before gives up by itself).
    if (this.rereading?.shown === shown) {
      this.rereading.again = true;
      return;
    }
    void this.reread(shown);
  }

  private async reread(shown: { path: string; line: number | null }): Promise<void> {
    const request = this.request;
    const rereading = { shown, again: true };
    this.rereading = rereading;
    try {
      while (rereading.again) {
        rereading.again = false;
        const read = await this.read(shown.path);
        // Another file opened, or the panel closed, meanwhile.
        if (request !== this.request || this.shown !== shown) return;
        // Gone meanwhile: the map's delta says so (mapChanged); the old text stays.
        if (!read.ok || read.text === this.text) continue;
        this.text = read.text;
        const scrollTop = this.body.scrollTop;
        const scrollLeft = this.body.scrollLeft;
        const old = this.body.querySelector('ol.file-lines');
        const list = this.lines(read.text, shown.line);
        if (old) old.replaceWith(list);
        else this.body.appendChild(list);
        this.body.scrollTop = scrollTop;
        this.body.scrollLeft = scrollLeft;
        this.say(`${shown.path} changed on disk at ${new Date().toLocaleTimeString()}; this is its new text.`);
      }
    } finally {
      if (this.rereading === rereading) this.rereading = null;
    }
  }

  /**
   * The panel's one line about its file's change (replaced, never stacked), above the text and
   * outside its scrolling, so that the text stays where the reader was.
   */
  private say(text: string): void {
    if (this.changed) this.changed.textContent = text;
    else {
      this.changed = h('p', { class: 'file-changed muted', role: 'status' }, text);
      this.body.before(this.changed);
    }
  }

  private unsay(): void {
    this.changed?.remove();
    this.changed = null;
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
