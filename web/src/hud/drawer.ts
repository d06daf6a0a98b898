/**
 * The drawer: conversation tabs with each one's phase, the prompt box
 * (`Ask Claude`: Enter sends, Shift+Enter a new line), New conversation,
 * Stop (the conversation shown), Stop all, and the turn's and session's cost.
 */
import type { HudPhase, PageRequest } from '../protocol/types';
import { actionFailed, type PageState } from '../state/store';
import { clear, formatCost, h, setText } from './dom';
import { isWatchedKey, READ_ONLY_HINT, untitledName } from './watched';

const PHASE_TEXT: Record<HudPhase, string> = {
  idle: 'Idle',
  thinking: 'Thinking',
  writing: 'Writing',
  reading: 'Reading',
  editing: 'Editing',
  asking: 'Asking',
  tool: 'Working',
  waiting: 'Waiting for you',
  compacting: 'Compacting',
  stopping: 'Stopping',
  failed: 'Failed',
};

export interface DrawerHost {
  /** Sends a request; returns the action's id. */
  send(request: PageRequest): string;
  show(key: string): void;
  shown(): string | null;
  /** The prompt's attachments (the panels' skills and file chips), spent once a prompt goes. */
  attachments?: { el: HTMLElement; attachments(): { skills: string[]; files: string[] }; clearAttachments(): void; bindDrop(target: HTMLElement): void };
}

export class Drawer {
  readonly el: HTMLElement;
  private readonly tabs: HTMLElement;
  private readonly box: HTMLTextAreaElement;
  private readonly stop: HTMLButtonElement;
  private readonly stopAll: HTMLButtonElement;
  private readonly newConversation: HTMLButtonElement;
  private readonly cost: HTMLElement;
  private readonly hint: HTMLElement;
  private readonly sendButton: HTMLButtonElement;
  private tabsKey = '';

  constructor(private readonly host: DrawerHost) {
    this.tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Conversations' });
    this.box = h('textarea', {
      class: 'prompt-box',
      rows: 2,
      'aria-label': 'Ask Claude',
      placeholder: 'Ask Claude… (Enter sends, Shift+Enter a new line)',
      onkeydown: (event: Event) => {
        const e = event as KeyboardEvent;
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          this.submit();
        }
      },
    });
    this.stop = h('button', { type: 'button', class: 'danger', onclick: () => {
      const key = this.host.shown();
      if (key) this.host.send({ type: 'stop', key });
    } }, 'Stop');
    this.stopAll = h('button', { type: 'button', onclick: () => { this.host.send({ type: 'stopAll' }); } }, 'Stop all');
    this.newConversation = h('button', { type: 'button', onclick: () => { this.host.send({ type: 'newConversation' }); } }, 'New conversation');
    this.cost = h('p', { class: 'cost muted', 'aria-live': 'off' });
    this.sendButton = h('button', { type: 'button', class: 'primary', onclick: () => { this.submit(); } }, 'Send');
    this.hint = h('p', { class: 'drawer-hint muted', role: 'status' });
    this.el = h(
      'section',
      { class: 'drawer', 'aria-label': 'Drawer' },
      h('div', { class: 'drawer-row' }, this.tabs, this.newConversation),
      // The attachments' row comes with the panels' code after the first frame: its slot holds its
      // room until then (style.css), so the conversation above does not move when it arrives.
      this.host.attachments ? h('div', { class: 'composer-slot' }, this.host.attachments.el) : undefined,
      h('div', { class: 'drawer-row prompt-row' }, this.box, this.sendButton),
      h('div', { class: 'drawer-row' }, this.stop, this.stopAll, this.cost),
      this.hint,
    );
    this.host.attachments?.bindDrop(this.box);
  }

  private current: string | null = null;
  /** The last prompt sent, until its ack or its drop: a refused or dropped prompt comes back to the box. */
  private sentPrompt: { id: string; text: string } | null = null;

  private submit(): void {
    const text = this.box.value;
    if (!text.trim() || this.box.disabled || this.sendButton.disabled) return;
    const shown = this.host.shown();
    // The conversation shown, unless it is the current one (then the host's own rule: current if idle, else a new one).
    const key = shown !== null && shown !== this.current ? shown : null;
    const { skills, files } = this.host.attachments?.attachments() ?? { skills: [], files: [] };
    const id = this.host.send({ type: 'prompt', key, text, skills, files });
    this.sentPrompt = { id, text };
    this.box.value = '';
    this.host.attachments?.clearAttachments();
  }

  render(state: PageState): void {
    this.current = state.current;
    const sent = this.sentPrompt;
    // Answered, or dropped unacknowledged (a minute offline, or Orbit restarted): a prompt that did
    // not go comes back to the box (the notice quotes only its start).
    if (sent && (state.acks[sent.id] || sent.id in state.dropped)) {
      this.sentPrompt = null;
      if (actionFailed(state, sent.id) && this.box.value === '') this.box.value = sent.text;
    }
    const shown = this.host.shown();
    const available = state.workspace?.trusted === true && state.workspace.agent.available;
    // While disconnected the box keeps its text, and nothing that sends is enabled.
    const online = state.connection === 'open';
    // A terminal's session (watched) is read-only.
    const watched = isWatchedKey(shown);
    this.box.disabled = !available || watched;
    this.sendButton.disabled = !available || !online || watched;
    this.newConversation.disabled = !online;
    setText(this.hint, !state.workspace
      ? ''
      : watched
        ? READ_ONLY_HINT
      : !state.workspace.trusted
        ? 'Conversations are unavailable until this folder is trusted.'
        : !state.workspace.agent.available
          ? 'Conversations are unavailable: Claude Code was not found.'
          : '');
    const session = shown ? state.sessions[shown] : undefined;
    const busy = session !== undefined && session.phase !== 'idle' && session.phase !== 'failed';
    this.stop.disabled = !busy || !online || watched;
    this.stopAll.disabled = !online || !Object.entries(state.sessions).some(([k, s]) => !isWatchedKey(k) && s.phase !== 'idle' && s.phase !== 'failed');
    setText(this.cost, session
      ? `Turn ${formatCost(session.turnCostUsd)} · Session ${formatCost(session.totalCostUsd)}`
      : '');
    const tabsKey = JSON.stringify([shown, state.conversations.map((c) => [c.key, c.phase, c.title])]);
    if (tabsKey !== this.tabsKey) {
      this.tabsKey = tabsKey;
      const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.key : undefined;
      clear(this.tabs);
      for (const conversation of state.conversations) {
        const selected = conversation.key === shown;
        const tab = h(
          'button',
          {
            type: 'button',
            role: 'tab',
            class: `tab phase-${conversation.phase}`,
            'aria-selected': String(selected),
            tabindex: selected ? 0 : -1,
            'data-key': conversation.key,
            title: conversation.title ?? conversation.key,
            onclick: () => { this.host.show(conversation.key); },
            onkeydown: (event: Event) => { this.tabKeys(event as KeyboardEvent); },
          },
          h('span', { class: 'tab-title' }, conversation.title ?? untitledName(conversation.key)),
          isWatchedKey(conversation.key) ? h('span', { class: 'tab-badge' }, 'Terminal') : null,
          h('span', { class: 'tab-phase' }, PHASE_TEXT[conversation.phase]),
        );
        this.tabs.appendChild(tab);
        if (focused === conversation.key) tab.focus();
      }
    }
  }

  /** Puts the focus in the prompt box (when it takes text), else on the conversation's tab. */
  focusPrompt(): void {
    if (!this.box.disabled) this.box.focus();
    else this.tabs.querySelector<HTMLElement>('[aria-selected="true"]')?.focus();
  }

  private tabKeys(e: KeyboardEvent): void {
    const tabs = Array.from(this.tabs.querySelectorAll<HTMLButtonElement>('[role="tab"]'));
    const at = tabs.findIndex((t) => t === e.currentTarget);
    let next = -1;
    if (e.key === 'ArrowRight') next = (at + 1) % tabs.length;
    else if (e.key === 'ArrowLeft') next = (at - 1 + tabs.length) % tabs.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = tabs.length - 1;
    const target = tabs[next];
    if (!target) return;
    e.preventDefault();
    const key = target.dataset.key;
    if (key) this.host.show(key);
    this.tabs.querySelector<HTMLButtonElement>(`[data-key="${key ?? ''}"]`)?.focus();
  }
}
