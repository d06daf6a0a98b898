import { describe, expect, it } from 'vitest';
import { ConversationSearch, entryText, findEntries } from '../src/hud/search';
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

  it('Ctrl+F opens it; Next and Previous wrap; every match is revealed, even ones not rendered', () => {
    const revealed: (number | null)[] = [];
    const search = new ConversationSearch({ entries: () => many, reveal: (seq) => revealed.push(seq) });
    const scope = document.createElement('div');
    document.body.replaceChildren(scope, search.el);
    search.bind(scope);
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
