import { afterEach, describe, expect, it, vi } from 'vitest';
import { FilePanel } from '../src/hud/filePanel';

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
});
