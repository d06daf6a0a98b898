/**
 * The keypad panel and Settings › Agents: every visible session of the
 * keypad hub as a key in its adapter's colour (its activity's motion, its
 * message typed out, in the slots the hub assigned), and the hub's
 * settings (the Adapter API switch, Regenerate token, each adapter live or
 * disconnected with Allow / Deny, the user's base hue). A key of Orbit's
 * own conversation that waits for a permission shows the whole request
 * before it offers Allow or Deny; the always choice stays on the card.
 *
 * The state comes from `GET /w/<id>/keypad` (polled while the panel is
 * open); actions are `POST /w/<id>/keypad` `{method, params}`.
 */
import './keypad.css';
import { append, clear, h } from './dom';
import type { KeypadKey, KeypadRequest, KeypadView } from '../protocol/types';

/** The hub's types on the wire (`orbit_types::keypad`), generated from the page schema. */
export type { KeypadKey, KeypadRequest, KeypadView };

export interface KeypadOptions {
  workspaceId: string;
  /** Shows a conversation of this workspace. */
  showConversation: (key: string) => void;
}

export interface KeypadPanel {
  /** The last state drawn (for `window.orbitInspect`). */
  state(): KeypadView | null;
}

const POLL_MS = 250;
/** Typewriter speed, characters per second. */
const TYPE_RATE = 80;
/** Allow and Deny wait this long after the request shows (no stray clicks). */
const ARMING_MS = 500;

const ACTIVITY_TEXT: Record<string, string> = {
  starting: 'Starting',
  idle: 'Idle',
  thinking: 'Thinking',
  tool: 'Using a tool',
  streaming: 'Writing',
  waitingPermission: 'Needs permission',
  waitingQuestion: 'Has a question',
  done: 'Done',
  error: 'Error',
  compacting: 'Compacting',
  offline: 'Offline',
};

function reasonText(reason: string | null): string {
  switch (reason) {
    case null:
      return 'live';
    case 'disconnected':
      return 'disconnected';
    case 'awaiting_user':
      return 'waiting for your Allow';
    case 'disabled_by_user':
      return 'denied';
    default:
      return reason;
  }
}

export function mountKeypad(root: HTMLElement, options: KeypadOptions): KeypadPanel {
  const base = `/w/${encodeURIComponent(options.workspaceId)}/keypad`;
  let view: KeypadView | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  const typewriters = new Map<string, { id: string; started: number }>();

  const status = h('p', { class: 'keypad-status', role: 'status' });
  const grid = h('div', { class: 'keypad-grid', role: 'group', 'aria-label': 'Keys', tabindex: '-1' });
  const review = h('div', { class: 'keypad-review', role: 'dialog', 'aria-label': 'Permission request', tabindex: '-1', hidden: true });
  const apiSwitch = h('input', { type: 'checkbox', role: 'switch', id: 'keypad-api-switch' });
  const regenerate = h('button', { type: 'button' }, 'Regenerate token');
  const banners = h('div', { class: 'keypad-banners' });
  const adapterList = h('ul', { class: 'keypad-adapters', 'aria-label': 'Adapters' });
  const settings = h('section', { class: 'keypad-settings', role: 'region', 'aria-label': 'Settings › Agents' },
    h('h3', null, 'Settings › Agents'),
    h('p', null, apiSwitch, h('label', { for: 'keypad-api-switch' }, 'Adapter API')),
    regenerate,
    banners,
    adapterList,
  );
  const panel = h('section', { class: 'keypad-panel', role: 'region', 'aria-label': 'Keypad', hidden: true },
    h('h2', null, 'Keypad'), status, grid, review, settings);
  const toggle = h('button', { type: 'button', class: 'keypad-toggle', 'aria-expanded': 'false' }, 'Keypad');
  // Right after the map, where the button is seen (fixed at its bottom-left): Tab reaches it after the
  // map's own controls, not last of all after the prompt box's Send.
  const stage = root.querySelector('.stage');
  if (stage) stage.after(toggle, panel);
  else root.append(toggle, panel);

  async function call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const response = await fetch(base, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method, params }),
    });
    const body = (await response.json().catch(() => null)) as { result?: unknown; error?: { message?: string } } | null;
    if (!response.ok) throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
    return body?.result;
  }

  function act(what: string, method: string, params: Record<string, unknown> = {}): void {
    call(method, params)
      .then(() => {
        status.textContent = what;
        return refresh();
      })
      .catch((error: unknown) => {
        status.textContent = `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
      });
  }

  async function refresh(): Promise<void> {
    try {
      const response = await fetch(base, { headers: { Accept: 'application/json' } });
      if (!response.ok) {
        status.textContent = `The keypad is unavailable (HTTP ${response.status}).`;
        return;
      }
      view = (await response.json()) as KeypadView;
      draw(view);
    } catch {
      status.textContent = 'The keypad is unavailable (Orbit does not answer).';
    }
  }

  /** The key's button now (the grid is drawn again at every poll), else the grid. */
  function keyButton(uid: string): HTMLElement {
    return Array.from(grid.children).find((el): el is HTMLElement => el instanceof HTMLElement && el.dataset.uid === uid) ?? grid;
  }

  /** The review goes; the focus goes back to its key, not to the page's start. */
  function closeReview(uid: string): void {
    const focused = review.contains(document.activeElement);
    review.hidden = true;
    if (focused) keyButton(uid).focus();
  }

  function openReview(key: KeypadKey, request: KeypadRequest): void {
    clear(review);
    review.hidden = false;
    review.dataset.requestId = request.requestId;
    review.dataset.uid = key.uid;
    const allow = h('button', { type: 'button', class: 'primary', disabled: true }, 'Allow');
    const deny = h('button', { type: 'button', disabled: true }, 'Deny');
    const answer = (choice: 'allow' | 'deny'): void => {
      closeReview(key.uid);
      act(choice === 'allow' ? `Allowed: ${request.title}` : `Denied: ${request.title}`, 'keypad.answer', {
        uid: key.uid,
        requestId: request.requestId,
        choice,
      });
    };
    allow.addEventListener('click', () => { answer('allow'); });
    deny.addEventListener('click', () => { answer('deny'); });
    setTimeout(() => {
      allow.disabled = false;
      deny.disabled = false;
    }, ARMING_MS);
    append(review,
      h('h3', null, `${key.title} asks to use ${request.tool ?? 'a tool'}`),
      h('p', null, request.title),
      h('pre', { class: 'keypad-request-text' }, request.text),
      request.alwaysOnPage
        ? h('p', null, 'An “always” choice is on the card, where its rule is shown in full.')
        : null,
      h('p', { class: 'keypad-review-actions' },
        allow,
        deny,
        h('button', { type: 'button', onclick: () => { closeReview(key.uid); tap(key); } }, 'Open the card'),
        h('button', { type: 'button', onclick: () => { closeReview(key.uid); } }, 'Back')),
    );
    // Read out and reachable from the keyboard at once (Allow and Deny arm a moment later).
    review.focus();
  }

  function tap(key: KeypadKey): void {
    call('keypad.tap', { uid: key.uid })
      .then((result) => {
        const tapped = result as { action: string; url: string | null };
        if (tapped.action === 'markedIdle') {
          status.textContent = `${key.title}: done → idle`;
        } else if (tapped.action === 'openUrl' && tapped.url) {
          openUrl(tapped.url);
        } else {
          status.textContent = `${key.title}: nothing to open`;
        }
        return refresh();
      })
      .catch((error: unknown) => {
        status.textContent = `Tap failed: ${error instanceof Error ? error.message : String(error)}`;
      });
  }

  function openUrl(url: string): void {
    let target: URL;
    try {
      target = new URL(url, window.location.href);
    } catch {
      status.textContent = 'The key’s address is not valid.';
      return;
    }
    const conversation = /^#conversation=(.+)$/.exec(target.hash)?.[1];
    if (target.origin === window.location.origin && target.pathname === window.location.pathname && conversation) {
      options.showConversation(decodeURIComponent(conversation));
      status.textContent = 'Opened the conversation.';
    } else if (target.origin === window.location.origin) {
      window.location.assign(target.href);
    } else {
      window.open(target.href, '_blank', 'noopener,noreferrer');
    }
  }

  function onKey(key: KeypadKey): void {
    if (key.activity === 'waitingPermission' && key.request?.kind === 'permission') {
      openReview(key, key.request);
    } else {
      tap(key);
    }
  }

  function typed(key: KeypadKey, now: number): string {
    if (!key.messageText) return '';
    const id = key.messageId ?? '';
    let tw = typewriters.get(key.uid);
    if (!tw || tw.id !== id) {
      tw = { id, started: now };
      typewriters.set(key.uid, tw);
    }
    const shown = Math.floor(((now - tw.started) / 1000) * TYPE_RATE);
    return Array.from(key.messageText).slice(0, shown).join('');
  }

  function drawKeys(keys: KeypadKey[]): void {
    const now = performance.now();
    // Drawn again at every poll: the key the focus was on keeps it (a keyboard user lost it every 250 ms).
    const active = document.activeElement;
    const focusedUid = active instanceof HTMLElement && grid.contains(active) ? active.dataset.uid : undefined;
    let refocus: HTMLElement | null = null;
    clear(grid);
    if (keys.length === 0) grid.append(h('p', { class: 'keypad-empty' }, 'No sessions yet.'));
    for (const key of keys) {
      const activityText = ACTIVITY_TEXT[key.activity] ?? key.activity;
      const detail = [key.model, key.toolLabel ?? key.statusDetail].filter(Boolean).join(' · ');
      const button = h('button', {
        type: 'button',
        class: 'keypad-key',
        'data-activity': key.activity,
        'data-tool-kind': key.activity === 'tool' ? (key.toolKind ?? 'other') : null,
        'data-slot': key.slot,
        'data-uid': key.uid,
        'data-adapter': key.adapterId,
        'aria-label': `${key.adapterShortName}: ${key.title}, ${activityText}`,
      },
      h('span', { class: 'keypad-key-name' }, key.monogram ? `${key.monogram} ${key.adapterShortName}` : key.adapterShortName,
        key.host === 'local' ? null : ` @${key.host}`),
      h('span', { class: 'keypad-key-activity' }, h('span', { class: 'keypad-motion', 'aria-hidden': 'true' }), activityText,
        key.subagentCount > 0 ? ` +${key.subagentCount}` : null),
      h('span', { class: 'keypad-key-title' }, key.title),
      h('span', { class: 'keypad-key-detail' }, detail),
      h('span', { class: 'keypad-key-message' }, typed(key, now)));
      // Colours through the CSSOM (the page's CSP allows no inline style).
      button.style.setProperty('--key-working', key.colors.working);
      button.style.setProperty('--key-attention', key.colors.attention);
      button.style.setProperty('--key-dimmed', key.colors.dimmed);
      button.style.setProperty('--key-text', key.colors.text);
      button.dataset.color = key.activity === 'offline'
        ? key.colors.dimmed
        : key.activity.startsWith('waiting') ? key.colors.attention : key.colors.working;
      button.addEventListener('click', () => { onKey(key); });
      grid.append(button);
      if (key.uid === focusedUid) refocus = button;
    }
    refocus?.focus({ preventScroll: true });
  }

  function drawSettings(state: KeypadView): void {
    apiSwitch.checked = state.keypad.adapterApi;
    apiSwitch.setAttribute('aria-checked', String(state.keypad.adapterApi));
    regenerate.disabled = !state.keypad.adapterApi;
    clear(banners);
    for (const banner of state.keypad.banners) {
      banners.append(h('div', { class: 'banner banner-trust keypad-banner', role: 'alert' },
        h('span', null, banner.text),
        h('button', { type: 'button', 'aria-label': `Deny ${banner.name}`, onclick: () => { act(`Denied ${banner.name}`, 'hub.deny', { id: banner.adapterId }); } }, 'Deny'),
        h('button', { type: 'button', class: 'primary', 'aria-label': `Allow ${banner.name}`, onclick: () => { act(`Allowed ${banner.name}`, 'hub.allow', { id: banner.adapterId }); } }, 'Allow')));
    }
    // Re-drawn only when the list changes: the hue inputs keep their typing.
    const rows = [
      ...state.builtin.map((b) => ({ id: b.id, name: b.name, state: 'built in', enabled: true })),
      ...state.adapters.map((a) => ({ id: a.id, name: a.name, state: reasonText(a.reason ?? null), enabled: a.enabled })),
    ];
    const signature = JSON.stringify(rows);
    if (adapterList.dataset.signature === signature) return;
    adapterList.dataset.signature = signature;
    clear(adapterList);
    for (const row of rows) {
      const hue = h('input', { type: 'number', min: 0, max: 359, step: 1, 'aria-label': `Base hue for ${row.name}` });
      adapterList.append(h('li', { 'data-adapter': row.id },
        h('span', { class: 'keypad-adapter-name' }, row.name),
        h('span', { class: 'keypad-adapter-state' }, ` (${row.state})`),
        row.state === 'built in' || row.enabled
          ? null
          : h('button', { type: 'button', 'aria-label': `Allow ${row.name}`, onclick: () => { act(`Allowed ${row.name}`, 'hub.allow', { id: row.id }); } }, 'Allow'),
        row.state === 'built in' || row.state === 'denied'
          ? null
          : h('button', { type: 'button', 'aria-label': `Deny ${row.name}`, onclick: () => { act(`Denied ${row.name}`, 'hub.deny', { id: row.id }); } }, 'Deny'),
        hue,
        h('button', { type: 'button', 'aria-label': `Set the base hue for ${row.name}`, onclick: () => {
          const value = Number(hue.value);
          if (hue.value === '' || !Number.isFinite(value) || value < 0 || value >= 360) {
            status.textContent = 'A base hue is a number from 0 to 359.';
            return;
          }
          act(`Base hue of ${row.name} set to ${value}`, 'hub.setHue', { id: row.id, hue: value });
        } }, 'Set hue'),
        h('button', { type: 'button', 'aria-label': `Reset the base hue for ${row.name}`, onclick: () => { act(`Base hue of ${row.name} reset`, 'hub.setHue', { id: row.id, hue: null }); } }, 'Reset')));
    }
  }

  function draw(state: KeypadView): void {
    drawKeys(state.keypad.keys);
    drawSettings(state);
    if (!review.hidden) {
      const still = state.keypad.keys.some((k) => k.uid === review.dataset.uid && k.request?.requestId === review.dataset.requestId);
      if (!still) {
        review.hidden = true;
        status.textContent = 'The request was answered elsewhere.';
      }
    }
  }

  apiSwitch.addEventListener('change', () => {
    act(apiSwitch.checked ? 'Adapter API on' : 'Adapter API off', apiSwitch.checked ? 'hub.on' : 'hub.off');
  });
  regenerate.addEventListener('click', () => { act('Token regenerated: every adapter registers again', 'hub.regenerateToken'); });
  toggle.addEventListener('click', () => {
    const open = panel.hidden;
    panel.hidden = !open;
    toggle.setAttribute('aria-expanded', String(open));
    if (open) {
      void refresh();
      timer = setInterval(() => void refresh(), POLL_MS);
    } else if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  });

  return { state: () => view };
}
