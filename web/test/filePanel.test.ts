import { afterEach, describe, expect, it, vi } from 'vitest';
import { FilePanel } from '../src/hud/filePanel';
import { h } from '../src/hud/dom';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the file panel', () => {
  it('fetches a graph file by its path and shows it as numbered text lines, at the line', async () => {
    const fetchMock = vi.fn(() => Promise.resolve(new Response('one\n<b>two</b>\nthree', { status: 200, headers: { 'Content-Type': 'text/plain' } })));
    vi.stubGlobal('fetch', fetchMock);
    const panel = new FilePanel('0123456789abcdef');
    document.body.replaceChildren(panel.el);
    await panel.open('src/a b.rs', 2);
    expect(fetchMock).toHaveBeenCalledWith('/w/0123456789abcdef/file?path=src%2Fa%20b.rs', { credentials: 'same-origin' });
    expect(panel.el.hidden).toBe(false);
    expect(panel.el.getAttribute('role')).toBe('dialog');
    const lines = Array.from(panel.el.querySelectorAll('li'));
    expect(lines.map((l) => l.textContent)).toEqual(['one', '<b>two</b>', 'three']);
    expect(panel.el.querySelector('b')).toBeNull();
    expect(lines[1]?.classList.contains('target')).toBe(true);
    panel.el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(panel.el.hidden).toBe(true);
  });

  it('is modal: Tab and Shift+Tab go round Close and the text, never to the page behind it', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(new Response('one', { status: 200 }))));
    const panel = new FilePanel('w');
    const behind = h('button', { type: 'button' }, 'Behind');
    document.body.replaceChildren(behind, panel.el);
    behind.focus();
    await panel.open('a.rs', null);
    expect(panel.el.getAttribute('aria-modal')).toBe('true');
    const body = panel.el.querySelector('.file-body');
    const close = panel.el.querySelector('button');
    expect(document.activeElement).toBe(body);
    const tab = (shiftKey: boolean): boolean =>
      (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', shiftKey, bubbles: true, cancelable: true }));
    expect(tab(false)).toBe(false);
    expect(document.activeElement).toBe(close);
    tab(false);
    expect(document.activeElement).toBe(body);
    tab(true);
    expect(document.activeElement).toBe(close);
    tab(true);
    expect(document.activeElement).toBe(body);
    panel.close();
    expect(document.activeElement).toBe(behind);
  });

  it('says why when the file cannot be opened', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(new Response('no', { status: 404, statusText: 'Not Found' }))));
    const panel = new FilePanel('w');
    document.body.replaceChildren(panel.el);
    await panel.open('../etc/passwd', null);
    expect(panel.el.querySelector('[role="alert"]')?.textContent).toContain('Could not open ../etc/passwd: 404');
  });

  it('says when the file shown leaves the map, keeps its text, and shows it afresh when it comes back', async () => {
    let text = 'old text';
    const fetchMock = vi.fn(() => Promise.resolve(new Response(text, { status: 200 })));
    vi.stubGlobal('fetch', fetchMock);
    const panel = new FilePanel('w');
    document.body.replaceChildren(panel.el);
    await panel.open('src/a.ts', null);
    panel.mapChanged(['src/other.ts'], []);
    expect(panel.el.querySelector('[role="status"]')).toBeNull();
    panel.mapChanged(['src/a.ts'], []);
    panel.mapChanged(['src/a.ts'], []);
    expect(Array.from(panel.el.querySelectorAll('[role="status"]')).map((n) => n.textContent)).toEqual(['src/a.ts was deleted; this is its text as it was.']);
    expect(panel.el.querySelector('li')?.textContent).toBe('old text');
    text = 'new text';
    const focused = document.activeElement;
    panel.mapChanged([], ['src/a.ts']);
    await vi.waitFor(() => { expect(panel.el.querySelector('li')?.textContent).toBe('new text'); });
    expect(panel.el.querySelector('[role="status"]')).toBeNull();
    expect(fetchMock).toHaveBeenCalledTimes(2);
    expect(document.activeElement).toBe(focused);
    // Closed: nothing is fetched for it any more.
    panel.close();
    panel.mapChanged([], ['src/a.ts']);
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('shows the new text of its file changed in place where the reader was, says so, and reads once per burst', async () => {
    let text = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n');
    let answer: (() => void) | null = null;
    let gate = false;
    const fetchMock = vi.fn(() => {
      const body = text;
      if (!gate) return Promise.resolve(new Response(body, { status: 200 }));
      return new Promise<Response>((resolve) => { answer = () => { resolve(new Response(body, { status: 200 })); }; });
    });
    vi.stubGlobal('fetch', fetchMock);
    const scrolled = vi.spyOn(HTMLElement.prototype, 'scrollIntoView');
    const panel = new FilePanel('w');
    const before = h('button', null, 'the map');
    document.body.replaceChildren(before, panel.el);
    before.focus();
    await panel.open('src/a.ts', 150);
    expect(scrolled).toHaveBeenCalledTimes(1);
    const body = panel.el.querySelector<HTMLElement>('.file-body');
    if (!body) throw new Error('no body');
    expect(document.activeElement).toBe(body);
    body.scrollTop = 1234;
    // Another file, or no change at all: nothing is read.
    panel.filesChanged(['src/other.ts'], false);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    text = text.replace('line 150', 'line 150, edited');
    panel.filesChanged(['src/other.ts', 'src/a.ts'], false);
    await vi.waitFor(() => { expect(panel.el.querySelector('[data-line="150"]')?.textContent).toBe('line 150, edited'); });
    expect(fetchMock).toHaveBeenCalledTimes(2);
    expect(panel.el.querySelector('[data-line="150"]')?.classList.contains('target')).toBe(true);
    // Where the reader was: the scroll and the focus stay; the line is not scrolled to again.
    expect(body.scrollTop).toBe(1234);
    expect(scrolled).toHaveBeenCalledTimes(1);
    expect(document.activeElement).toBe(body);
    const status = panel.el.querySelectorAll('[role="status"]');
    expect(status.length).toBe(1);
    expect(status[0]?.textContent).toMatch(/^src\/a\.ts changed on disk at .+; this is its new text\.$/);
    // A burst while a read runs: one more read after it, not one each.
    gate = true;
    text = `${text}\nline 201`;
    panel.filesChanged(['src/a.ts'], false);
    panel.filesChanged(['src/a.ts'], false);
    panel.filesChanged([], true);
    expect(fetchMock).toHaveBeenCalledTimes(3);
    (answer as (() => void) | null)?.();
    await vi.waitFor(() => { expect(fetchMock).toHaveBeenCalledTimes(4); });
    (answer as (() => void) | null)?.();
    await vi.waitFor(() => { expect(panel.el.querySelectorAll('li').length).toBe(201); });
    expect(panel.el.querySelectorAll('[role="status"]').length).toBe(1);
    // `more` with the same text (a snapshot after a reconnect): read, nothing said anew.
    gate = false;
    const said = panel.el.querySelector('[role="status"]')?.textContent;
    panel.filesChanged([], true);
    await vi.waitFor(() => { expect(fetchMock).toHaveBeenCalledTimes(5); });
    expect(panel.el.querySelector('[role="status"]')?.textContent).toBe(said);
    // Another file opened: the line goes; closed: nothing is read any more.
    await panel.open('src/b.ts', null);
    expect(panel.el.querySelector('[role="status"]')).toBeNull();
    panel.close();
    panel.filesChanged(['src/b.ts'], true);
    expect(fetchMock).toHaveBeenCalledTimes(6);
    scrolled.mockRestore();
  });

  it('reads the change of a file opened while a read of the file before still ran', async () => {
    const texts: Record<string, string> = { 'a.ts': 'a1', 'b.ts': 'b1' };
    const waiting: (() => void)[] = [];
    let gate = false;
    vi.stubGlobal('fetch', vi.fn((url: string) => {
      const path = decodeURIComponent(url.split('path=')[1] ?? '');
      const body = texts[path] ?? '';
      if (!gate) return Promise.resolve(new Response(body, { status: 200 }));
      return new Promise<Response>((resolve) => { waiting.push(() => { resolve(new Response(body, { status: 200 })); }); });
    }));
    const panel = new FilePanel('w');
    document.body.replaceChildren(panel.el);
    await panel.open('a.ts', null);
    gate = true;
    texts['a.ts'] = 'a2';
    panel.filesChanged(['a.ts'], false);
    gate = false;
    await panel.open('b.ts', null);
    texts['b.ts'] = 'b2';
    panel.filesChanged(['b.ts'], false);
    for (const answer of waiting) answer();
    await vi.waitFor(() => { expect(panel.el.querySelector('li')?.textContent).toBe('b2'); });
    expect(panel.el.querySelector('[role="status"]')?.textContent).toMatch(/^b\.ts changed on disk/);
  });
});
