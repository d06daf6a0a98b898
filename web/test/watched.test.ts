import { describe, expect, it } from 'vitest';
import type { PageRequest } from '../src/protocol/types';
import { Drawer } from '../src/hud/drawer';
import { isWatchedKey, READ_ONLY_HINT } from '../src/hud/watched';
import { applyFrame, initialState } from '../src/state/store';
import { session, workspace } from './fixtures';

describe('a watched terminal session in the drawer', () => {
  it('knows a watched key', () => {
    expect(['w1', 'w27'].map(isWatchedKey)).toEqual([true, true]);
    expect(['c1', 'w', 'w1x', 'W1', '', null].map(isWatchedKey)).toEqual([false, false, false, false, false, false]);
  });

  it('is read-only: no prompt, Send or Stop while it is shown, says why, and Stop all ignores it', () => {
    const sent: PageRequest[] = [];
    let shown: string | null = 'c1';
    const drawer = new Drawer({ send: (r) => `id${sent.push(r)}`, show: (k) => { shown = k; }, shown: () => shown });
    document.body.replaceChildren(drawer.el);
    const state = initialState();
    state.connection = 'open';
    applyFrame(state, { seq: null, body: { type: 'workspace', ...workspace, trusted: true } });
    applyFrame(state, { seq: 1, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: 'Mine', sessionId: null, warm: true }, { key: 'w1', phase: 'thinking', title: null, sessionId: 's-1', warm: false }] } });
    applyFrame(state, { seq: 2, body: { type: 'session', ...session('w1', { phase: 'thinking' }) } });
    drawer.render(state);
    const button = (name: string) => Array.from(drawer.el.querySelectorAll('button')).find((b) => b.textContent === name);
    const box = drawer.el.querySelector('textarea');
    const tabs = Array.from(drawer.el.querySelectorAll('[role="tab"]')).map((t) => t.textContent);
    expect(tabs).toEqual(['MineIdle', 'Terminal session 1TerminalThinking']);
    // Only a terminal's turn runs: Stop all has nothing of Orbit's to stop.
    expect(button('Stop all')?.disabled).toBe(true);
    expect(box?.disabled).toBe(false);
    drawer.el.querySelector<HTMLButtonElement>('[role="tab"][data-key="w1"]')?.click();
    drawer.render(state);
    expect(box?.disabled).toBe(true);
    expect(button('Send')?.disabled).toBe(true);
    expect(button('Stop')?.disabled).toBe(true);
    expect(drawer.el.querySelector('[role="status"]')?.textContent).toBe(READ_ONLY_HINT);
    if (box) box.value = 'take over';
    box?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    expect(sent).toEqual([]);
  });
});
