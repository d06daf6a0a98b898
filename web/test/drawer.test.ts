import { describe, expect, it } from 'vitest';
import type { PageRequest } from '../src/protocol/types';
import { Drawer } from '../src/hud/drawer';
import { applyFrame, initialState, noteDropped } from '../src/state/store';
import { session, workspace } from './fixtures';

function setup(trusted = true) {
  const sent: PageRequest[] = [];
  let shown: string | null = 'c1';
  const drawer = new Drawer({ send: (r) => `id${sent.push(r)}`, show: (k) => { shown = k; }, shown: () => shown });
  document.body.replaceChildren(drawer.el);
  const state = initialState();
  state.connection = 'open';
  applyFrame(state, { seq: null, body: { type: 'workspace', ...workspace, trusted } });
  applyFrame(state, { seq: 1, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: 'First', sessionId: null, warm: true }, { key: 'c2', phase: 'idle', title: null, sessionId: null, warm: false }] } });
  applyFrame(state, { seq: 2, body: { type: 'session', ...session('c1', { phase: 'writing', turnCostUsd: 0.5, totalCostUsd: 1.25 }) } });
  drawer.render(state);
  const box = drawer.el.querySelector('textarea');
  if (!box) throw new Error('no prompt box');
  const button = (name: string) => Array.from(drawer.el.querySelectorAll('button')).find((b) => b.textContent === name);
  return { sent, drawer, state, box, button, shown: () => shown };
}

const press = (el: Element, key: string, shiftKey = false) => el.dispatchEvent(new KeyboardEvent('keydown', { key, shiftKey, bubbles: true, cancelable: true }));

describe('the drawer', () => {
  it('while disconnected, keeps the box editable and disables everything that sends', () => {
    const { sent, box, drawer, state, button } = setup();
    state.connection = 'reconnecting';
    drawer.render(state);
    expect(box.disabled).toBe(false);
    for (const name of ['Send', 'Stop', 'Stop all', 'New conversation']) expect(button(name)?.disabled, name).toBe(true);
    box.value = 'wait for me';
    press(box, 'Enter');
    expect(sent).toEqual([]);
    expect(box.value).toBe('wait for me');
    state.connection = 'open';
    drawer.render(state);
    expect(button('Send')?.disabled).toBe(false);
    expect(button('Stop')?.disabled).toBe(false);
    press(box, 'Enter');
    expect(sent).toEqual([{ type: 'prompt', key: null, text: 'wait for me', skills: [], files: [] }]);
  });

  it('has the prompt box named Ask Claude: Enter sends, Shift+Enter does not', () => {
    const { sent, box } = setup();
    expect(box.getAttribute('aria-label')).toBe('Ask Claude');
    box.value = 'line one';
    expect(press(box, 'Enter', true)).toBe(true);
    expect(sent).toEqual([]);
    box.value = 'line one\nline two';
    expect(press(box, 'Enter')).toBe(false);
    expect(sent).toEqual([{ type: 'prompt', key: null, text: 'line one\nline two', skills: [], files: [] }]);
    expect(box.value).toBe('');
  });

  it('sends to a conversation the user picked that is not the current one', () => {
    const { sent, box, drawer } = setup();
    const tab = drawer.el.querySelector<HTMLButtonElement>('[role="tab"][data-key="c2"]');
    tab?.click();
    box.value = 'hello';
    press(box, 'Enter');
    expect(sent.at(-1)).toEqual({ type: 'prompt', key: 'c2', text: 'hello', skills: [], files: [] });
  });

  it('has tabs with each phase, Stop, Stop all, New conversation and the costs', () => {
    const { sent, drawer, button } = setup();
    const tabs = Array.from(drawer.el.querySelectorAll('[role="tab"]')).map((t) => t.textContent);
    expect(tabs).toEqual(['FirstWriting', 'Conversation 2Idle']);
    button('Stop')?.click();
    button('Stop all')?.click();
    button('New conversation')?.click();
    expect(sent).toEqual([{ type: 'stop', key: 'c1' }, { type: 'stopAll' }, { type: 'newConversation' }]);
    expect(drawer.el.querySelector('.cost')?.textContent).toBe('Turn $0.50 · Session $1.25');
  });

  it('gives a refused prompt back to the box', () => {
    const { box, drawer, state } = setup();
    box.value = 'keep me';
    press(box, 'Enter');
    expect(box.value).toBe('');
    applyFrame(state, { seq: null, body: { type: 'ack', id: 'id1', ok: false, code: 'busy', message: 'busy' } });
    drawer.render(state);
    expect(box.value).toBe('keep me');
  });

  it('gives a prompt dropped unacknowledged (a minute offline) back to the box, not one answered', () => {
    const { box, drawer, state } = setup();
    box.value = 'a long prompt the notice quotes only the start of';
    press(box, 'Enter');
    expect(box.value).toBe('');
    drawer.render(state);
    expect(box.value).toBe('');
    noteDropped(state, [{ id: 'id1', frame: { type: 'action', id: 'id1', request: { type: 'stopAll' } }, at: 0, instanceId: null }], 'expired');
    drawer.render(state);
    expect(box.value).toBe('a long prompt the notice quotes only the start of');
    // Given back once: the user's next text is theirs.
    box.value = '';
    drawer.render(state);
    expect(box.value).toBe('');
    box.value = 'went';
    press(box, 'Enter');
    applyFrame(state, { seq: null, body: { type: 'ack', id: 'id2', ok: true, code: null, message: null } });
    drawer.render(state);
    expect(box.value).toBe('');
  });

  it('is unavailable while the folder is untrusted', () => {
    const { box, drawer } = setup(false);
    expect(box.disabled).toBe(true);
    expect(drawer.el.textContent).toContain('until this folder is trusted');
  });
});
