import { describe, expect, it, vi } from 'vitest';
import { occurrences } from '../src/hud/conversation';
import { entryText, findEntries } from '../src/hud/search';
import { deferredSearch } from '../src/hud/deferred';
import { mergeEntries, TRANSCRIPT_LIMIT } from '../src/state/store';
import { entry } from './fixtures';

const many = Array.from({ length: 50 }, (_, i) =>
  entry(i + 1, i % 10 === 3
    ? { kind: 'reply', messageId: `m${i}`, nodes: [{ t: 'paragraph', children: [{ t: 'strong', children: [{ t: 'text', text: `The Needle number ${i}` }] }] }] }
    : { kind: 'prompt', text: `hay ${i}`, skills: [], files: [] }),
);

describe('conversation search', () => {
  it('finds text inside a reply node tree, case-insensitively, in seq order', () => {
    const fourth = many[3];
    if (!fourth) throw new Error('no entry');
    expect(entryText(fourth)).toBe('The Needle number 3');
    expect(findEntries(many, 'needle')).toEqual([4, 14, 24, 34, 44]);
    expect(findEntries(many, '   ')).toEqual([]);
    expect(findEntries(many, 'nothing like it')).toEqual([]);
  });

  it('Ctrl+F opens it; Next and Previous wrap; every match is revealed, even ones not rendered', async () => {
    const revealed: (number | null)[] = [];
    // As the page mounts it: Ctrl+F is bound by the stand-in, the search's code arrives after.
    const search = deferredSearch({ entries: () => many, reveal: (seq) => revealed.push(seq) }, (_, error) => { throw error; });
    const scope = document.createElement('div');
    document.body.replaceChildren(scope, search.el);
    search.bind(scope);
    await vi.waitFor(() => { expect(search.el.getAttribute('role')).toBe('search'); });
    expect(search.el.isConnected).toBe(true);
    expect(search.el.hidden).toBe(true);
    const ctrlF = new KeyboardEvent('keydown', { key: 'f', ctrlKey: true, bubbles: true, cancelable: true });
    scope.dispatchEvent(ctrlF);
    expect(ctrlF.defaultPrevented).toBe(true);
    expect(search.el.hidden).toBe(false);
    const input = search.el.querySelector('input');
    if (!input) throw new Error('no input');
    expect(input.getAttribute('aria-label')).toBe('Find in conversation');
    input.value = 'NEEDLE';
    input.dispatchEvent(new Event('input'));
    expect(search.inspect()).toMatchObject({ matches: [4, 14, 24, 34, 44], current: 4 });
    expect(search.el.querySelector('[role="status"]')?.textContent).toBe('1 of 5');
    const button = (name: string) => Array.from(search.el.querySelectorAll('button')).find((b) => b.textContent === name);
    button('Previous')?.click();
    expect(search.inspect().current).toBe(44);
    button('Next')?.click();
    expect(search.inspect().current).toBe(4);
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(search.inspect().current).toBe(14);
    expect(revealed.slice(-4)).toEqual([4, 44, 4, 14]);
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(search.el.hidden).toBe(true);
    expect(revealed.at(-1)).toBeNull();
  });

  it('the page holds no more than the host ring, however long the session', () => {
    let held = mergeEntries([], []);
    for (let start = 0; start < 5000; start += 100) {
      held = mergeEntries(held, Array.from({ length: 100 }, (_, i) => entry(start + i + 1, { kind: 'prompt', text: 'x', skills: [], files: [] })));
    }
    expect(TRANSCRIPT_LIMIT).toBe(400);
    expect(held).toHaveLength(400);
    expect(held[0]?.seq).toBe(4601);
  });
});

describe('long sessions', () => {
  it('a big reply renders its first blocks at once and the rest in later tasks', async () => {
    const { entryView } = await import('../src/hud/conversation');
    const nodes = Array.from({ length: 100 }, (_, i) => ({ t: 'paragraph' as const, children: [{ t: 'text' as const, text: `block ${i}` }] }));
    const el = entryView(entry(1, { kind: 'reply', messageId: 'm', nodes }), { openFile: () => undefined, subagentHistory: () => null });
    const first = el.querySelectorAll('p').length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(100);
    for (let i = 0; i < 20 && el.querySelectorAll('p').length < 100; i += 1) await new Promise((r) => setTimeout(r, 0));
    expect(el.querySelectorAll('p')).toHaveLength(100);
    expect(el.textContent).toContain('block 99');
  });

  it('frames checked in the worker are applied in arrival order, small ones behind a big one too', async () => {
    const { Channel } = await import('../src/protocol/channel');
    const { Store } = await import('../src/state/store');
    const frames: ((d: unknown) => void)[] = [];
    const states: ((s: 'open') => void)[] = [];
    const transport = {
      send: () => true,
      onFrame: (l: (d: unknown) => void) => { frames.push(l); },
      onState: (l: (s: 'open') => void) => { states.push(l); },
      start: () => undefined,
      close: () => undefined,
    };
    const checked: number[] = [];
    const checker = {
      check: (text: string) => new Promise<{ ok: true }>((resolve) => {
        checked.push(text.length);
        // The big frame takes longer than the small one behind it.
        setTimeout(() => { resolve({ ok: true }); }, text.length > 40000 ? 30 : 1);
      }),
    };
    const store = new Store();
    new Channel(transport, store, { checker }).start();
    const deliver = (f: unknown) => { for (const l of frames) l(JSON.stringify(f)); };
    deliver({ seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i', workspaceId: 'w', head: 0, resumed: false } });
    deliver({ seq: null, body: { type: 'snapshotEnd' } });
    const big = { kind: 'reply', messageId: 'm', nodes: [{ t: 'paragraph', children: [{ t: 'text', text: 'x'.repeat(50000) }] }] };
    deliver({ seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [{ seq: 1, turn: 1, subagent: null, body: big }] } });
    deliver({ seq: 2, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [{ seq: 2, turn: 1, subagent: null, body: { kind: 'stopped' } }] } });
    // Small frames before any big one are applied at once; the big one and what follows wait for the worker.
    expect(store.state.ready).toBe(true);
    expect(store.state.transcripts.c1).toBeUndefined();
    await new Promise((r) => setTimeout(r, 80));
    expect(checked).toHaveLength(2);
    expect(store.state.transcripts.c1?.map((e) => e.seq)).toEqual([1, 2]);
    expect(store.state.duplicates).toBe(0);
  });
});

describe('the words a search found', () => {
  it('are every occurrence of the query in an entry, case-insensitive, within and across its text nodes', () => {
    const root = document.createElement('div');
    const first = document.createElement('p');
    const strong = document.createElement('strong');
    strong.append('Zebra');
    first.append('A zebra and a ', strong, '.');
    const second = document.createElement('p');
    second.append('zebrazebra');
    root.append(first, second);
    const found = occurrences(root, 'zebra');
    expect(found.map((r) => r.toString())).toEqual(['zebra', 'Zebra', 'zebra', 'zebra']);
    expect(occurrences(root, '')).toEqual([]);
    expect(occurrences(root, 'giraffe')).toEqual([]);
  });
});
