/**
 * The page's service worker, served by Orbit at `/w/<workspace id>/sw.js`
 * (scope: that workspace's page). It does one thing: it handles what the
 * user does with a card's notification, which the page raises through it
 * (`hud/notify.ts`) tagged with the card's request id.
 *
 * - `open` (and a click on the notification itself): focuses a tab of the
 *   workspace and tells it to show the card, or opens the page at
 *   `#card=<key>/<requestId>`.
 * - `skip` (question cards): the skip goes through the controller like the
 *   card's own Skip: a tab of the workspace sends it through its channel
 *   (its outbox, so it survives a reconnect); with no tab open, the worker
 *   opens the channel itself for that one action.
 * - A tab that goes (`pagehide`: closed, reloaded, navigated away) says so
 *   (`orbit-page-gone`). When, a moment later, no other tab of the workspace
 *   is left, the workspace's card notifications close: Orbit raises its own
 *   desktop notification for a card once no page has been connected for
 *   2 s, and a card never has two. A tab that reloads is back by then, and
 *   another tab (hidden, relying on the notification) keeps it. A reload
 *   slower than that finds them closed, or is told they closed
 *   (`orbit-notifications-closed`), and raises them again while hidden.
 *
 * Self-contained (no imports): the build emits it as one classic script.
 * `orbit-notification-action` messages run the same handler as a click, so
 * the page's `window.orbitInspect.notificationAction` (and the end-to-end
 * tests, which cannot click a system notification) reach the same code.
 */

/** What the page puts in each notification's `data`. */
interface CardNotificationData {
  workspaceId: string;
  key: string;
  requestId: string;
  kind: 'permission' | 'questions';
  url: string;
}

/** The few service-worker types used here (the page's TS lib is the DOM's). */
interface WindowClientLike {
  /** The client's id (a reloaded tab's new document has a new one). */
  id: string;
  url: string;
  focused: boolean;
  visibilityState: DocumentVisibilityState;
  focus(): Promise<WindowClientLike>;
  postMessage(message: unknown): void;
}
interface ExtendableEventLike extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface NotificationEventLike extends ExtendableEventLike {
  action: string;
  notification: Notification;
}
interface ExtendableMessageEventLike extends ExtendableEventLike {
  data: unknown;
  source: { id?: string; postMessage(message: unknown): void } | null;
}
interface WorkerScope {
  location: Location;
  registration: ServiceWorkerRegistration;
  clients: {
    matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClientLike[]>;
    openWindow(url: string): Promise<WindowClientLike | null>;
    claim(): Promise<void>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: string, listener: (event: Event) => void): void;
}

const scope = self as unknown as WorkerScope;

/** How long the worker's own channel waits for the action's ack. */
const ACK_TIMEOUT_MS = 15000;

/**
 * How long after a tab said it goes the worker looks for the workspace's other tabs: a reloading
 * tab's new document is a client by then, and tabs that close together (their window) have all
 * said so. Under the 2 s Orbit waits without a page before its own desktop notification.
 */
const GONE_GRACE_MS = 500;

/** The clients that said they go (`orbit-page-gone`), while this worker lives (the newest kept). */
const gone = new Set<string>();
const GONE_KEPT = 256;

function isCardData(value: unknown): value is CardNotificationData {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.workspaceId === 'string' &&
    typeof v.key === 'string' &&
    typeof v.requestId === 'string' &&
    (v.kind === 'permission' || v.kind === 'questions') &&
    typeof v.url === 'string'
  );
}

async function workspaceClients(workspaceId: string): Promise<WindowClientLike[]> {
  const prefix = `/w/${encodeURIComponent(workspaceId)}/`;
  const all = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const mine = all.filter((c) => new URL(c.url).pathname.startsWith(prefix));
  // A visible or focused tab first.
  return mine.sort((a, b) => Number(b.focused) - Number(a.focused) || Number(b.visibilityState === 'visible') - Number(a.visibilityState === 'visible'));
}

/** Sends one `skipQuestions` over a channel of the worker's own, and waits for its ack. */
function skipOverOwnChannel(data: CardNotificationData): Promise<string> {
  const origin = scope.location.origin.replace(/^http/, 'ws');
  const url = `${origin}/ws?w=${encodeURIComponent(data.workspaceId)}`;
  const id = `sw-${Date.now().toString(36)}-${Math.floor(Math.random() * 0x100000000).toString(16)}`;
  return new Promise((resolve) => {
    let done = false;
    const socket = new WebSocket(url);
    const finish = (outcome: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.close();
      resolve(outcome);
    };
    const timer = setTimeout(() => { finish('timeout'); }, ACK_TIMEOUT_MS);
    socket.addEventListener('open', () => {
      socket.send(JSON.stringify({ type: 'resume', instanceId: null, lastSeq: null }));
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      let frame: unknown;
      try {
        frame = JSON.parse(String(event.data));
      } catch {
        return;
      }
      const body = (frame as { body?: { type?: unknown; id?: unknown; ok?: unknown } } | null)?.body;
      if (body?.type === 'snapshotEnd' || (body?.type === 'hello' && (frame as { body: { resumed?: unknown } }).body.resumed === true)) {
        socket.send(JSON.stringify({ type: 'action', id, request: { type: 'skipQuestions', key: data.key, requestId: data.requestId } }));
      } else if (body?.type === 'ack' && body.id === id) {
        finish(body.ok === true ? 'skipped' : 'refused');
      }
    });
    socket.addEventListener('close', () => { finish('closed'); });
    socket.addEventListener('error', () => { finish('error'); });
  });
}

/**
 * A tab of `workspaceId` went (`client`: its id). A moment later, with no other tab of the
 * workspace left, the workspace's card notifications close; otherwise they stay for the tabs
 * there. Returns what it did (`kept`, `closed <n>`).
 */
async function pageGone(workspaceId: string, client: string | null): Promise<string> {
  if (client !== null) {
    gone.add(client);
    if (gone.size > GONE_KEPT) {
      const oldest = gone.values().next();
      if (!oldest.done) gone.delete(oldest.value);
    }
  }
  await new Promise((resolve) => setTimeout(resolve, GONE_GRACE_MS));
  const left = (await workspaceClients(workspaceId)).filter((c) => !gone.has(c.id));
  if (left.length > 0) return 'kept';
  const tags: string[] = [];
  for (const notification of await scope.registration.getNotifications()) {
    const data: unknown = notification.data;
    if (isCardData(data) && data.workspaceId === workspaceId) {
      notification.close();
      tags.push(notification.tag);
    }
  }
  // A reload slower than the grace: its new document may have come while they closed, and found
  // them still shown. It is told which closed, and raises them again if it is hidden.
  if (tags.length > 0) {
    for (const c of await workspaceClients(workspaceId)) {
      if (!gone.has(c.id)) c.postMessage({ type: 'orbit-notifications-closed', workspaceId, tags });
    }
  }
  return `closed ${tags.length}`;
}

/** What a notification's action (or a click on it) does; returns what happened. */
async function act(action: string, data: CardNotificationData): Promise<string> {
  const clients = await workspaceClients(data.workspaceId);
  if (action === 'skip' && data.kind === 'questions') {
    const target = clients[0];
    if (target) {
      target.postMessage({ type: 'orbit-skip', key: data.key, requestId: data.requestId });
      return 'skip-sent-to-page';
    }
    return skipOverOwnChannel(data);
  }
  const target = clients[0];
  if (target) {
    target.postMessage({ type: 'orbit-open-card', key: data.key, requestId: data.requestId });
    await target.focus().catch(() => target);
    return 'opened-in-page';
  }
  await scope.clients.openWindow(data.url);
  return 'opened-window';
}

scope.addEventListener('install', () => {
  void scope.skipWaiting();
});

scope.addEventListener('activate', (event) => {
  (event as ExtendableEventLike).waitUntil(scope.clients.claim());
});

scope.addEventListener('notificationclick', (event) => {
  const e = event as NotificationEventLike;
  const data: unknown = e.notification.data;
  e.notification.close();
  if (!isCardData(data)) return;
  e.waitUntil(act(e.action || 'open', data));
});

scope.addEventListener('message', (event) => {
  const e = event as ExtendableMessageEventLike;
  const message = e.data as { type?: unknown; tag?: unknown; action?: unknown; workspaceId?: unknown } | null;
  if (message?.type === 'orbit-page-gone' && typeof message.workspaceId === 'string') {
    e.waitUntil(pageGone(message.workspaceId, typeof e.source?.id === 'string' ? e.source.id : null));
    return;
  }
  if (message?.type !== 'orbit-notification-action' || typeof message.tag !== 'string' || typeof message.action !== 'string') return;
  const tag = message.tag;
  const action = message.action;
  e.waitUntil(
    (async () => {
      const [notification] = await scope.registration.getNotifications({ tag });
      const data: unknown = notification?.data;
      let outcome = 'no-notification';
      if (notification && isCardData(data)) {
        notification.close();
        outcome = await act(action, data);
      }
      e.source?.postMessage({ type: 'orbit-notification-action-done', tag, outcome });
    })(),
  );
});
