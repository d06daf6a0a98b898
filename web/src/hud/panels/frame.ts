/**
 * The frame every panel opens in: a non-modal dialog named after its
 * button (`History`, `MCP servers`, `Settings`, `Changes`, `Usage`), with a
 * heading and a Close button; Escape closes it and gives the focus back to
 * the button that opened it.
 */
import { h, uniqueId } from '../dom';

export interface PanelBody {
  readonly el: HTMLElement;
  /** Called each time the panel opens. */
  opened?(): void;
}

export class PanelFrame {
  readonly button: HTMLButtonElement;
  readonly el: HTMLElement;

  constructor(
    readonly name: string,
    private readonly body: PanelBody,
    private readonly onToggle: (frame: PanelFrame, open: boolean) => void,
  ) {
    const id = uniqueId('panel');
    const heading = h('h2', { class: 'panel-title', id: `${id}-title` }, name);
    const close = h('button', { type: 'button', class: 'link-button', 'aria-label': `Close ${name}`, onclick: () => { this.close(); } }, '×');
    this.el = h(
      'section',
      {
        class: 'panel',
        id,
        role: 'dialog',
        'aria-labelledby': `${id}-title`,
        hidden: true,
        onkeydown: (event: Event) => {
          if ((event as KeyboardEvent).key === 'Escape') {
            event.stopPropagation();
            this.close();
          }
        },
      },
      h('div', { class: 'panel-head' }, heading, close),
      body.el,
    );
    this.button = h('button', {
      type: 'button',
      class: 'panel-button',
      'aria-expanded': 'false',
      'aria-controls': id,
      onclick: () => { if (this.isOpen()) this.close(); else this.open(); },
    }, name);
  }

  isOpen(): boolean {
    return !this.el.hidden;
  }

  open(): void {
    this.el.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.body.opened?.();
    this.onToggle(this, true);
  }

  close(): void {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    this.onToggle(this, false);
    this.button.focus();
  }
}

/** Where a setting comes from, as the page says it. */
export function sourceText(source: 'page' | 'settings' | 'default'): string {
  switch (source) {
    case 'page':
      return 'chosen here, remembered for this workspace';
    case 'settings':
      return 'from settings.json';
    case 'default':
      return "Claude Code's default";
  }
}

/** Replaces an element's children only when `key` changed (keeps focus and scroll otherwise). */
export function keyed(el: HTMLElement, key: string): boolean {
  if (el.dataset.key === key) return false;
  el.dataset.key = key;
  return true;
}
