import { describe, expect, it, vi } from 'vitest';
import type { PageRequest, PendingCard } from '../src/protocol/types';
import { collectAnswers, diffLines, permissionCard, questionCard } from '../src/hud/cards';
import { permission, questions } from './fixtures';

type Perm = Extract<PendingCard, { kind: 'permission' }>;
type Ques = Extract<PendingCard, { kind: 'questions' }>;

function mount(el: HTMLElement): HTMLElement {
  document.body.replaceChildren(el);
  return el;
}

function key(el: Element, k: string): void {
  el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
}

const buttons = (el: HTMLElement) => Array.from(el.querySelectorAll('button')).map((b) => b.textContent);

describe('the permission card', () => {
  it('is a group named by its title, with Allow, the always wording and Deny', () => {
    const el = mount(permissionCard('c1', permission as Perm, { send: vi.fn() }));
    expect(el.getAttribute('role')).toBe('group');
    const title = document.getElementById(el.getAttribute('aria-labelledby') ?? '');
    expect(title?.textContent).toBe('Edit src/a.rs');
    expect(buttons(el)).toEqual(['Allow', 'Allow all edits in this session', 'Deny']);
  });

  it('has no always button when the card offers none', () => {
    const el = mount(permissionCard('c1', { ...(permission as Perm), always: null }, { send: vi.fn() }));
    expect(buttons(el)).toEqual(['Allow', 'Deny']);
  });

  it('shows an Edit as a diff, a Write as its content, a Bash command whole', () => {
    const edit = mount(permissionCard('c1', permission as Perm, { send: vi.fn() }));
    expect(Array.from(edit.querySelectorAll('.diff .del')).map((e) => e.textContent)).toEqual(['-removed: b\n']);
    expect(Array.from(edit.querySelectorAll('.diff .ins')).map((e) => e.textContent)).toEqual(['+added: B\n']);
    const write = mount(permissionCard('c1', { ...(permission as Perm), tool: 'Write', input: { file_path: '/x', content: 'line1\n<b>line2</b>' } }, { send: vi.fn() }));
    expect(write.querySelector('pre.content')?.textContent).toBe('line1\n<b>line2</b>');
    const command = 'npm test && rm -rf /tmp/x; echo "$(whoami)"';
    const bash = mount(permissionCard('c1', { ...(permission as Perm), tool: 'Bash', input: { command } }, { send: vi.fn() }));
    expect(bash.querySelector('pre.command')?.textContent).toBe(command);
  });

  it('answers y, a, n when it has focus and no text field does; never focuses itself', () => {
    const sent: PageRequest[] = [];
    const el = mount(permissionCard('c1', permission as Perm, { send: (r) => sent.push(r) }));
    expect(document.activeElement).not.toBe(el);
    const field = el.querySelector('textarea');
    if (!field) throw new Error('no message field');
    key(field, 'y');
    expect(sent).toEqual([]);
    key(el, 'a');
    expect(sent).toEqual([{ type: 'answerPermission', key: 'c1', requestId: 'r1', choice: 'always', message: null }]);
    // Answered: further keys do nothing.
    key(el, 'n');
    expect(sent).toHaveLength(1);
  });

  it('denies with the optional message', () => {
    const sent: PageRequest[] = [];
    const el = mount(permissionCard('c1', permission as Perm, { send: (r) => sent.push(r) }));
    const field = el.querySelector('textarea');
    if (!field) throw new Error('no message field');
    field.value = 'not that file';
    Array.from(el.querySelectorAll('button')).find((b) => b.textContent === 'Deny')?.click();
    expect(sent).toEqual([{ type: 'answerPermission', key: 'c1', requestId: 'r1', choice: 'deny', message: 'not that file' }]);
  });
});

describe('the question card', () => {
  it('requires one answer per question, saying what is missing', () => {
    const q = questions as Ques;
    expect(collectAnswers(q, [{ options: [], text: '' }, { options: [], text: '' }])).toEqual({ ok: false, missing: ['Colour', 'Platforms'] });
    expect(collectAnswers(q, [{ options: ['Blue'], text: '' }, { options: [], text: '  mine ' }])).toEqual({
      ok: true,
      answers: [{ options: ['Blue'], text: null }, { options: [], text: 'mine' }],
    });
  });

  it('uses radios, or checkboxes where several may be chosen, and sends the answers', () => {
    const sent: PageRequest[] = [];
    const el = mount(questionCard('c1', questions as Ques, { send: (r) => sent.push(r) }));
    expect(el.getAttribute('role')).toBe('group');
    expect(buttons(el)).toEqual(['Send answers', 'Skip']);
    const send = Array.from(el.querySelectorAll('button')).find((b) => b.textContent === 'Send answers');
    expect(send?.disabled).toBe(true);
    expect(el.querySelector('.missing')?.textContent).toBe('Still to answer: Colour, Platforms');
    const [first, second] = Array.from(el.querySelectorAll('fieldset'));
    expect(first?.querySelectorAll('input[type="radio"]')).toHaveLength(2);
    expect(second?.querySelectorAll('input[type="checkbox"]')).toHaveLength(2);
    first?.querySelector<HTMLInputElement>('input[value="Red"]')?.click();
    expect(el.querySelector('.missing')?.textContent).toBe('Still to answer: Platforms');
    second?.querySelector<HTMLInputElement>('input[value="Linux"]')?.click();
    second?.querySelector<HTMLInputElement>('input[value="macOS"]')?.click();
    expect(send?.disabled).toBe(false);
    send?.click();
    expect(sent).toEqual([{ type: 'answerQuestions', key: 'c1', requestId: 'r2', answers: [{ options: ['Red'], text: null }, { options: ['Linux', 'macOS'], text: null }] }]);
  });

  it('Skip sends a skip', () => {
    const sent: PageRequest[] = [];
    const el = mount(questionCard('c1', questions as Ques, { send: (r) => sent.push(r) }));
    Array.from(el.querySelectorAll('button')).find((b) => b.textContent === 'Skip')?.click();
    expect(sent).toEqual([{ type: 'skipQuestions', key: 'c1', requestId: 'r2' }]);
  });
});

describe('diffLines', () => {
  it('keeps common lines around the change', () => {
    expect(diffLines('a\nb\nc', 'a\nx\ny\nc')).toEqual([
      { sign: ' ', text: 'a' },
      { sign: '-', text: 'b' },
      { sign: '+', text: 'x' },
      { sign: '+', text: 'y' },
      { sign: ' ', text: 'c' },
    ]);
  });
});
