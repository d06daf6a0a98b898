/**
 * The permission card and the question card. A card is a `group` named by
 * its title; it never takes focus by itself. Keys on a permission card
 * (when it has focus and no text field does): `y` allow, `a` always,
 * `n` deny.
 */
import type { PageRequest, PermissionCard, QuestionAnswer, QuestionCard } from '../protocol/types';
import { h, uniqueId } from './dom';

export interface CardActions {
  send(request: PageRequest): void;
}

type Permission = PermissionCard & { kind: 'permission' };
type Questions = QuestionCard & { kind: 'questions' };

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A line diff of an edit: common lines around, removed and added lines between. */
export function diffLines(oldText: string, newText: string): { sign: ' ' | '-' | '+'; text: string }[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  return [
    ...a.slice(0, start).map((text) => ({ sign: ' ' as const, text })),
    ...a.slice(start, endA).map((text) => ({ sign: '-' as const, text })),
    ...b.slice(start, endB).map((text) => ({ sign: '+' as const, text })),
    ...a.slice(endA).map((text) => ({ sign: ' ' as const, text })),
  ];
}

function diffView(oldText: string, newText: string, label: string): HTMLElement {
  return h(
    'pre',
    { class: 'diff', 'aria-label': label },
    diffLines(oldText, newText).map((line) =>
      h(
        'span',
        { class: line.sign === '-' ? 'del' : line.sign === '+' ? 'ins' : 'ctx' },
        h('span', { class: 'sign', 'aria-hidden': 'true' }, line.sign),
        line.sign === '-' ? h('span', { class: 'sr-only' }, 'removed: ') : null,
        line.sign === '+' ? h('span', { class: 'sr-only' }, 'added: ') : null,
        line.text,
        '\n',
      ),
    ),
  );
}

/** What the tool will touch, in full. */
export function permissionBody(card: Permission): HTMLElement {
  const input = record(card.input);
  const path = str(input.file_path) ?? str(input.notebook_path) ?? str(input.path);
  const parts: Node[] = [];
  if (path) parts.push(h('p', { class: 'card-path' }, h('span', { class: 'muted' }, 'File: '), h('code', null, path)));
  switch (card.tool) {
    case 'Edit':
      parts.push(diffView(str(input.old_string) ?? '', str(input.new_string) ?? '', 'The edit'));
      if (input.replace_all === true) parts.push(h('p', { class: 'muted' }, 'Every occurrence is replaced.'));
      break;
    case 'MultiEdit': {
      const edits = Array.isArray(input.edits) ? input.edits : [];
      edits.forEach((raw, i) => {
        const edit = record(raw);
        parts.push(diffView(str(edit.old_string) ?? '', str(edit.new_string) ?? '', `Edit ${i + 1} of ${edits.length}`));
      });
      break;
    }
    case 'Write':
      parts.push(h('pre', { class: 'content', 'aria-label': 'The content written' }, h('code', null, str(input.content) ?? '')));
      break;
    case 'Bash': {
      const description = str(input.description);
      if (description) parts.push(h('p', null, description));
      parts.push(h('pre', { class: 'command', 'aria-label': 'The command' }, h('code', null, str(input.command) ?? '')));
      break;
    }
    default:
      parts.push(h('pre', { class: 'content', 'aria-label': 'The input' }, h('code', null, JSON.stringify(card.input, null, 2))));
  }
  if (card.reason) parts.push(h('p', { class: 'card-reason' }, card.reason));
  if (card.blockedPath) parts.push(h('p', { class: 'card-reason' }, 'Outside the allowed folders: ', h('code', null, card.blockedPath)));
  return h('div', { class: 'card-body' }, parts);
}

function isTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target instanceof HTMLTextAreaElement) return true;
  if (target instanceof HTMLInputElement) return !['checkbox', 'radio', 'button', 'submit'].includes(target.type);
  return target.isContentEditable;
}

export function permissionCard(key: string, card: Permission, actions: CardActions): HTMLElement {
  const titleId = uniqueId('card-title');
  const messageId = uniqueId('deny-message');
  const status = h('p', { class: 'card-status', role: 'status' });
  const message = h('textarea', {
    id: messageId,
    rows: 1,
    class: 'deny-message',
    placeholder: 'Tell Claude why, or what to do instead',
  });
  const buttons: HTMLButtonElement[] = [];
  const answer = (choice: 'allow' | 'always' | 'deny'): void => {
    if (buttons.some((b) => b.disabled)) return;
    const text = message.value.trim();
    actions.send({
      type: 'answerPermission',
      key,
      requestId: card.requestId,
      choice,
      message: choice === 'deny' && text ? text : null,
    });
    for (const b of buttons) b.disabled = true;
    status.textContent = 'Sent…';
  };
  const allow = h('button', { type: 'button', class: 'primary', onclick: () => { answer('allow'); } }, 'Allow');
  buttons.push(allow);
  const always = card.always
    ? h('button', { type: 'button', onclick: () => { answer('always'); } }, card.always)
    : null;
  if (always) buttons.push(always);
  const deny = h('button', { type: 'button', class: 'danger', onclick: () => { answer('deny'); } }, 'Deny');
  buttons.push(deny);
  const el = h(
    'section',
    {
      class: 'card permission-card',
      role: 'group',
      'aria-labelledby': titleId,
      tabindex: 0,
      'data-request-id': card.requestId,
      onkeydown: (event: Event) => {
        const e = event as KeyboardEvent;
        if (e.ctrlKey || e.metaKey || e.altKey || isTextField(e.target)) return;
        const k = e.key.toLowerCase();
        if (k === 'y') answer('allow');
        else if (k === 'a' && always) answer('always');
        else if (k === 'n') answer('deny');
        else return;
        e.preventDefault();
      },
    },
    h('h3', { id: titleId, class: 'card-title' }, card.title),
    card.subagent ? h('p', { class: 'muted' }, 'Asked by a subagent') : null,
    permissionBody(card),
    h(
      'div',
      { class: 'card-actions' },
      allow,
      always,
      h('label', { for: messageId, class: 'sr-only' }, 'Message for Claude if you deny (optional)'),
      message,
      deny,
    ),
    h('p', { class: 'muted keys-hint' }, `Keys: y allow${always ? ', a always' : ''}, n deny`),
    status,
  );
  return el;
}

/** What the user chose on one question: options, or their own text. */
export interface QuestionChoice {
  options: string[];
  text: string;
}

/** The answers, or the headers of the questions still without one. */
export function collectAnswers(
  card: Questions,
  choices: readonly QuestionChoice[],
): { ok: true; answers: QuestionAnswer[] } | { ok: false; missing: string[] } {
  const missing: string[] = [];
  const answers: QuestionAnswer[] = card.questions.map((question, i) => {
    const choice = choices[i] ?? { options: [], text: '' };
    const text = choice.text.trim();
    if (text) return { options: [], text };
    if (choice.options.length === 0) missing.push(question.header || `question ${i + 1}`);
    return { options: choice.options, text: null };
  });
  return missing.length > 0 ? { ok: false, missing } : { ok: true, answers };
}

export function questionCard(key: string, card: Questions, actions: CardActions): HTMLElement {
  const titleId = uniqueId('card-title');
  const missingId = uniqueId('missing');
  const title = card.questions.length === 1 ? 'Claude has a question' : `Claude has ${card.questions.length} questions`;
  const choices: QuestionChoice[] = card.questions.map(() => ({ options: [], text: '' }));
  const missingNote = h('p', { id: missingId, class: 'missing', 'aria-live': 'polite' });
  const status = h('p', { class: 'card-status', role: 'status' });
  const buttons: HTMLButtonElement[] = [];

  const refresh = (): void => {
    const result = collectAnswers(card, choices);
    if (result.ok) {
      missingNote.textContent = '';
      send.disabled = buttons.some((b) => b.dataset.sent === 'true');
    } else {
      missingNote.textContent = `Still to answer: ${result.missing.join(', ')}`;
      send.disabled = true;
    }
  };

  const fieldsets = card.questions.map((question, qi) => {
    const name = uniqueId('q');
    const legendId = uniqueId('legend');
    const inputType = question.multiSelect ? 'checkbox' : 'radio';
    const own = h('input', {
      type: 'text',
      class: 'own-answer',
      'aria-label': `Your own answer to: ${question.header || question.question}`,
      placeholder: 'Or your own answer',
      oninput: (event: Event) => {
        const target = event.target as HTMLInputElement;
        const choice = choices[qi];
        if (choice) choice.text = target.value;
        refresh();
      },
    });
    const options = question.options.map((option) => {
      const input = h('input', {
        type: inputType,
        name,
        value: option.label,
        onchange: () => {
          const chosen = Array.from(
            fieldset.querySelectorAll<HTMLInputElement>(`input[name="${name}"]`),
          ).filter((i) => i.checked).map((i) => i.value);
          const choice = choices[qi];
          if (choice) choice.options = chosen;
          refresh();
        },
      });
      return h(
        'label',
        { class: 'option' },
        input,
        h('span', { class: 'option-label' }, option.label),
        option.description ? h('span', { class: 'option-description' }, option.description) : null,
      );
    });
    const fieldset = h(
      'fieldset',
      { class: 'question', 'aria-labelledby': legendId },
      h('legend', { id: legendId }, question.header ? h('span', { class: 'chip' }, question.header) : null, ' ', question.question),
      question.multiSelect ? h('p', { class: 'muted' }, 'Choose any that apply.') : null,
      options,
      own,
    );
    return fieldset;
  });

  const send = h(
    'button',
    {
      type: 'button',
      class: 'primary',
      'aria-describedby': missingId,
      onclick: () => {
        const result = collectAnswers(card, choices);
        if (!result.ok) {
          refresh();
          return;
        }
        actions.send({ type: 'answerQuestions', key, requestId: card.requestId, answers: result.answers });
        for (const b of buttons) {
          b.disabled = true;
          b.dataset.sent = 'true';
        }
        status.textContent = 'Sent…';
      },
    },
    'Send answers',
  );
  const skip = h(
    'button',
    {
      type: 'button',
      onclick: () => {
        actions.send({ type: 'skipQuestions', key, requestId: card.requestId });
        for (const b of buttons) {
          b.disabled = true;
          b.dataset.sent = 'true';
        }
        status.textContent = 'Skipped…';
      },
    },
    'Skip',
  );
  buttons.push(send, skip);
  refresh();
  return h(
    'section',
    { class: 'card question-card', role: 'group', 'aria-labelledby': titleId, tabindex: 0, 'data-request-id': card.requestId },
    h('h3', { id: titleId, class: 'card-title' }, title),
    card.subagent ? h('p', { class: 'muted' }, 'Asked by a subagent') : null,
    fieldsets,
    h('div', { class: 'card-actions' }, send, skip),
    missingNote,
    status,
  );
}
