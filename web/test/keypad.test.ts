import { afterEach, describe, expect, it, vi } from 'vitest';
import { mountKeypad } from '../src/hud/keypad';
import { h } from '../src/hud/dom';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the keypad', () => {
  it('puts its button right after the map, so Tab reaches it before the side column', () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise(() => undefined)));
    const root = h('div', { id: 'app' }, h('header', null), h('main', { class: 'stage' }), h('aside', { class: 'side' }, h('button', { type: 'button' }, 'Send')));
    document.body.replaceChildren(root);
    mountKeypad(root, { workspaceId: 'w', showConversation: () => undefined });
    const order = Array.from(root.children).map((el) => el.className || el.tagName.toLowerCase());
    expect(order).toEqual(['header', 'stage', 'keypad-toggle', 'keypad-panel', 'side']);
  });
});
