/**
 * Every card reaches the user while the page is out of sight: one system
 * notification per permission or question card, raised through the page's
 * service worker (`sw.ts`, registered at `/w/<id>/sw.js`) and tagged with
 * the card's request id, so a card is never shown twice (every tab of the
 * workspace uses the same tag) and its notification is closed as soon as
 * the card leaves the waiting list, wherever it was answered. The tab's
 * title counts the waiting cards.
 *
 * Permission to notify is asked at a moment that makes sense: when the
 * first card arrives while the page is hidden, or from the "Notify me"
 * button; never on load.
 *
 * A tab that goes (`pagehide`) tells the worker (`orbit-page-gone`), which
 * closes the workspace's notifications when no other tab of it is left:
 * Orbit's own desktop notification takes over then, never beside them. A
 * reload slower than the worker's grace is told which closed
 * (`orbit-notifications-closed`) and raises them again while hidden.
 */
import { afterSettled } from './later';
import type { PendingCard } from '../protocol/types';
import type { PageState } from '../state/store';

/** A card waiting, with its conversation. */
export interface WaitingCard {
  key: string;
  card: PendingCard;
}

/** Every card waiting in every conversation, in conversation order. */
export function waitingCards(state: PageState): WaitingCard[] {
  const out: WaitingCard[] = [];
  const keys = state.conversations.map((c) => c.key);
  for (const key of Object.keys(state.sessions)) if (!keys.includes(key)) keys.push(key);
  for (const key of keys) {
    for (const card of state.sessions[key]?.pending ?? []) out.push({ key, card });
  }
  return out;
}

/** The tab's title: the waiting cards counted first, as `(2) demo · Orbit`. */
export function titleWithCount(base: string, waiting: number): string {
  return waiting > 0 ? `(${waiting}) ${base}` : base;
}

/** What a notification says and offers for one card. */
export function notificationFor(
  workspaceId: string,
  workspaceName: string,
  waiting: WaitingCard,
): { title: string; options: NotificationOptions & { actions: { action: string; title: string }[] } } {
  const { key, card } = waiting;
  const url = `/w/${encodeURIComponent(workspaceId)}/#card=${encodeURIComponent(key)}/${encodeURIComponent(card.requestId)}`;
  const data = { workspaceId, key, requestId: card.requestId, kind: card.kind, url };
  if (card.kind === 'permission') {
    return {
      title: `Claude asks: ${card.title}`,
      options: {
        tag: card.requestId,
        body: `${workspaceName}: allow, always or deny in Orbit.`,
        data,
        requireInteraction: true,
        actions: [{ action: 'open', title: 'Open Orbit' }],
      },
    };
  }
  const first = card.questions[0]?.question ?? '';
  const more = card.questions.length > 1 ? ` (and ${card.questions.length - 1} more)` : '';
  return {
    title: card.questions.length === 1 ? 'Claude has a question' : `Claude has ${card.questions.length} questions`,
    options: {
      tag: card.requestId,
      body: `${workspaceName}: ${first}${more}`,
      data,
      requireInteraction: true,
      actions: [
        { action: 'open', title: 'Open Orbit' },
        { action: 'skip', title: 'Skip the questions' },
      ],
    },
  };
}

/** What the notifier needs from the browser (injectable for tests). */
export interface NotifyEnv {
  visibility(): DocumentVisibilityState;
  permission(): NotificationPermission | 'unsupported';
  requestPermission(): Promise<NotificationPermission>;
  /** The service worker's registration once ready; `null` when there is none. */
  registration(): Promise<ServiceWorkerRegistration | null>;
  onVisibilityChange(listener: () => void): void;
  /** The tab goes (closed, reloaded, navigated away): `pagehide`. */
  onPageHide?(listener: () => void): void;
  /** A message from the service worker (`orbit-notifications-closed`). */
  onWorkerMessage?(listener: (data: unknown) => void): void;
}

/** The browser's own. */
export function browserNotifyEnv(workspaceId: string): NotifyEnv {
  const supported = 'Notification' in window && 'serviceWorker' in navigator;
  let registration: Promise<ServiceWorkerRegistration | null> | null = null;
  // `Notification.permission` asks the browser process each time (milliseconds
  // under load) and the HUD reads it on every render: it is kept for a second,
  // and forgotten when it changes, when asked, and when the page's visibility changes.
  let known: { value: NotificationPermission; at: number } | null = null;
  const forget = (): void => {
    known = null;
  };
  if (supported) {
    document.addEventListener('visibilitychange', forget);
    // Asked once the page has settled after its first frame (a round trip to the browser).
    if ('permissions' in navigator) void afterSettled(() => navigator.permissions.query({ name: 'notifications' })).then((status) => {
      status.addEventListener('change', forget);
    }, forget);
  }
  return {
    visibility: () => document.visibilityState,
    permission: () => {
      if (!supported) return 'unsupported';
      const now = performance.now();
      if (known === null || now - known.at > 1000) known = { value: Notification.permission, at: now };
      return known.value;
    },
    requestPermission: () => {
      forget();
      return Notification.requestPermission().finally(forget);
    },
    registration: () => {
      if (!supported) return Promise.resolve(null);
      // A failure is not kept: one while Orbit was away (restarting) is tried again at the next card.
      registration ??= navigator.serviceWorker
        .register(`/w/${encodeURIComponent(workspaceId)}/sw.js`, { scope: `/w/${encodeURIComponent(workspaceId)}/` })
        .then(() => navigator.serviceWorker.ready)
        .catch(() => {
          registration = null;
          return null;
        });
      return registration;
    },
    onVisibilityChange: (listener) => {
      document.addEventListener('visibilitychange', listener);
    },
    onPageHide: (listener) => {
      window.addEventListener('pagehide', listener);
    },
    onWorkerMessage: (listener) => {
      if (supported) navigator.serviceWorker.addEventListener('message', (event: MessageEvent) => { listener(event.data); });
    },
  };
}

/** What the page says when the service worker could not start. */
const WORKER_PROBLEM = 'Notifications need the page’s service worker, which could not start.';

export class Notifier {
  /** Request ids this page raised (or found raised) a notification for. */
  private readonly raised = new Set<string>();
  /** The cards waiting at the last render, by request id. */
  private waiting = new Map<string, WaitingCard>();
  private asked = false;
  private workspaceName = 'Orbit';
  private readonly listeners: (() => void)[] = [];
  /** The worker's registration once known (the tab going tells it, with no time to wait for it). */
  private registered: ServiceWorkerRegistration | null = null;
  /** Why notifications cannot be shown, when they cannot. */
  problem: string | null = null;

  constructor(
    private readonly workspaceId: string,
    private readonly env: NotifyEnv,
  ) {
    env.onVisibilityChange(() => {
      if (env.visibility() === 'hidden') void this.raiseAll();
    });
    // The worker is registered early (it only handles clicks); permission is not asked here.
    if (env.permission() === 'granted') void this.registration();
    env.onPageHide?.(() => {
      this.registered?.active?.postMessage({ type: 'orbit-page-gone', workspaceId: this.workspaceId });
    });
    // The worker closed the workspace's notifications (no tab of it was left within its grace)
    // while this page was coming (a slow reload), perhaps after it found them still shown: the
    // cards still waiting have none now, and are raised again (at once when hidden).
    env.onWorkerMessage?.((data) => {
      const message = data as { type?: unknown; workspaceId?: unknown; tags?: unknown } | null;
      if (message?.type !== 'orbit-notifications-closed' || message.workspaceId !== this.workspaceId || !Array.isArray(message.tags)) return;
      for (const tag of message.tags) if (typeof tag === 'string') this.raised.delete(tag);
      void this.raiseAll();
    });
  }

  /** The worker's registration (kept once known); `null` when there is none. */
  private async registration(): Promise<ServiceWorkerRegistration | null> {
    const registration = await this.env.registration();
    if (registration) this.registered = registration;
    return registration;
  }

  /** Called when the permission or problem changes (the HUD's button follows it). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Whether the HUD should offer its "Notify me" button. */
  canAsk(): boolean {
    return this.env.permission() === 'default';
  }

  /** Asks for permission (from the button, or the first card while hidden). */
  async ask(): Promise<NotificationPermission | 'unsupported'> {
    if (this.env.permission() === 'unsupported') {
      this.problem = 'This browser cannot show notifications.';
      this.changed();
      return 'unsupported';
    }
    this.asked = true;
    const answer = await this.env.requestPermission();
    if (answer === 'denied') this.problem = 'Notifications are blocked for this page in the browser.';
    this.changed();
    if (answer === 'granted') await this.raiseAll();
    return answer;
  }

  /** Keeps the notifications in step with the waiting cards. */
  render(state: PageState): void {
    this.workspaceName = state.workspace?.name ?? 'Orbit';
    const now = new Map(waitingCards(state).map((w) => [w.card.requestId, w]));
    const gone = [...this.waiting.keys()].filter((id) => !now.has(id));
    const fresh = [...now.keys()].filter((id) => !this.waiting.has(id));
    this.waiting = now;
    if (gone.length > 0) void this.close(gone);
    if (fresh.length > 0 && this.env.visibility() === 'hidden') void this.raiseAll();
  }

  /** Raises a notification for each waiting card that has none (page hidden only). */
  private async raiseAll(): Promise<void> {
    if (this.env.visibility() !== 'hidden' || this.waiting.size === 0) return;
    const permission = this.env.permission();
    if (permission === 'default' && !this.asked) {
      // The first card while hidden: the moment to ask (ask() raises them once granted).
      await this.ask();
      return;
    }
    if (permission !== 'granted') return;
    const registration = await this.registration();
    if (!registration) {
      this.problem = WORKER_PROBLEM;
      this.changed();
      return;
    }
    if (this.problem === WORKER_PROBLEM) {
      // It started after all: the page no longer says it could not.
      this.problem = null;
      this.changed();
    }
    for (const [requestId, waiting] of this.waiting) {
      if (this.raised.has(requestId)) continue;
      this.raised.add(requestId);
      // Another tab (or this one before a reload) may have raised it: never twice.
      const existing = await registration.getNotifications({ tag: requestId });
      if (existing.length > 0) continue;
      // Answered meanwhile?
      if (!this.waiting.has(requestId)) continue;
      const { title, options } = notificationFor(this.workspaceId, this.workspaceName, waiting);
      await registration.showNotification(title, options);
      // Answered while it was being shown.
      if (!this.waiting.has(requestId)) await this.close([requestId]);
    }
  }

  private async close(requestIds: string[]): Promise<void> {
    for (const id of requestIds) this.raised.delete(id);
    if (this.env.permission() !== 'granted') return;
    const registration = await this.registration();
    if (!registration) return;
    for (const id of requestIds) {
      for (const n of await registration.getNotifications({ tag: id })) n.close();
    }
  }

  /** The notifications shown now (for `window.orbitInspect`). */
  async shown(): Promise<{ tag: string; title: string; body: string; actions: string[]; url: string | null }[]> {
    if (this.env.permission() !== 'granted') return [];
    const registration = await this.registration();
    if (!registration) return [];
    const list = await registration.getNotifications();
    return list.map((n) => {
      const url = (n.data as { url?: unknown } | null)?.url;
      return {
      tag: n.tag,
      title: n.title,
      body: n.body,
      actions: ((n as Notification & { actions?: { action: string }[] }).actions ?? []).map((a) => a.action),
      url: typeof url === 'string' ? url : null,
      };
    });
  }
}

/** Where the page was asked to open a card: `#card=<key>/<requestId>`. */
export function cardFromHash(hash: string): { key: string; requestId: string } | null {
  const match = /^#card=([^/]+)\/(.+)$/.exec(hash);
  if (!match?.[1] || !match[2]) return null;
  try {
    return { key: decodeURIComponent(match[1]), requestId: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}
