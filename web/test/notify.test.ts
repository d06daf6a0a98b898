import { describe, expect, it, vi } from 'vitest';
import { Notifier, browserNotifyEnv, cardFromHash, notificationFor, titleWithCount, waitingCards, type NotifyEnv } from '../src/hud/notify';
import { applyFrame, initialState, type PageState } from '../src/state/store';
import { permission, questions, session, workspace } from './fixtures';

interface Shown { title: string; tag: string; data: unknown; actions: string[]; closed: boolean }

/** A registration that keeps its notifications as the browser does: one per tag. */
function fakeEnv(initial: NotificationPermission = 'granted') {
  let permission: NotificationPermission = initial;
  let visibility: DocumentVisibilityState = 'visible';
  let onVisibility: (() => void) | null = null;
  let onPageHide: (() => void) | null = null;
  let onWorkerMessage: ((data: unknown) => void) | null = null;
  const posted: unknown[] = [];
  const shown: Shown[] = [];
  let asked = 0;
  const open = () => shown.filter((n) => !n.closed);
  const registration = {
    active: { postMessage: (message: unknown) => { posted.push(message); } },
    showNotification: (title: string, options: NotificationOptions & { actions?: { action: string }[] }) => {
      for (const n of open()) if (n.tag === options.tag) n.closed = true;
      shown.push({ title, tag: options.tag ?? '', data: options.data, actions: (options.actions ?? []).map((a) => a.action), closed: false });
      return Promise.resolve();
    },
    getNotifications: (filter?: { tag?: string }) =>
      Promise.resolve(
        open()
          .filter((n) => !filter?.tag || n.tag === filter.tag)
          .map((n) => ({ tag: n.tag, title: n.title, body: '', close: () => { n.closed = true; } })),
      ),
  } as unknown as ServiceWorkerRegistration;
  const env: NotifyEnv = {
    visibility: () => visibility,
    permission: () => permission,
    requestPermission: () => {
      asked += 1;
      permission = 'granted';
      return Promise.resolve(permission);
    },
    registration: () => Promise.resolve(registration),
    onVisibilityChange: (l) => { onVisibility = l; },
    onPageHide: (l) => { onPageHide = l; },
    onWorkerMessage: (l) => { onWorkerMessage = l; },
  };
  return {
    env,
    posted,
    pageHide: () => { onPageHide?.(); },
    fromWorker: (data: unknown) => { onWorkerMessage?.(data); },
    show: () => { visibility = 'visible'; onVisibility?.(); },
    shown,
    open,
    asked: () => asked,
    hide: () => { visibility = 'hidden'; onVisibility?.(); },
  };
}

function stateWith(cards: { key: string; pending: typeof permission[] }[]): PageState {
  const state = initialState();
  applyFrame(state, { seq: null, body: { type: 'workspace', ...workspace } });
  applyFrame(state, { seq: 1, body: { type: 'sessions', current: 'c1', conversations: cards.map((c) => ({ key: c.key, phase: 'waiting', title: null, sessionId: null, warm: true })) } });
  for (const c of cards) applyFrame(state, { seq: null, body: { type: 'session', ...session(c.key, { phase: 'waiting', pending: c.pending }) } });
  return state;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('notifications', () => {
  it('counts the waiting cards of every conversation in the title', () => {
    const state = stateWith([{ key: 'c1', pending: [permission] }, { key: 'c2', pending: [questions] }]);
    expect(waitingCards(state).map((w) => [w.key, w.card.requestId])).toEqual([['c1', 'r1'], ['c2', 'r2']]);
    expect(titleWithCount('demo · Orbit', 2)).toBe('(2) demo · Orbit');
    expect(titleWithCount('demo · Orbit', 0)).toBe('demo · Orbit');
  });

  it('a permission offers to open Orbit, a question also to skip; both tagged by request id with the card address', () => {
    const p = notificationFor('ws1', 'demo', { key: 'c1', card: permission });
    expect(p.options.tag).toBe('r1');
    expect(p.options.actions.map((a) => a.action)).toEqual(['open']);
    expect(p.options.data).toMatchObject({ key: 'c1', requestId: 'r1', url: '/w/ws1/#card=c1/r1' });
    const q = notificationFor('ws1', 'demo', { key: 'c2', card: questions });
    expect(q.options.actions.map((a) => a.action)).toEqual(['open', 'skip']);
    expect(cardFromHash('#card=c2/r2')).toEqual({ key: 'c2', requestId: 'r2' });
    expect(cardFromHash('#nothing')).toBeNull();
  });

  it('shows nothing while visible, one per card once hidden, and closes it when the card is answered', async () => {
    const f = fakeEnv();
    const notifier = new Notifier(workspace.id, f.env);
    const state = stateWith([{ key: 'c1', pending: [permission, questions] }]);
    notifier.render(state);
    await settle();
    expect(f.shown).toEqual([]);
    f.hide();
    await settle();
    await settle();
    expect(f.open().map((n) => n.tag)).toEqual(['r1', 'r2']);
    // Rendering again (every frame) never raises a card twice.
    notifier.render(state);
    await settle();
    expect(f.shown).toHaveLength(2);
    // Answered (anywhere): the card leaves the list, its notification closes.
    applyFrame(state, { seq: null, body: { type: 'session', ...session('c1', { phase: 'waiting', pending: [questions] }) } });
    notifier.render(state);
    await settle();
    expect(f.open().map((n) => n.tag)).toEqual(['r2']);
  });

  it('another tab already raised it: not shown again; two at once share the tag (one notification)', async () => {
    const f = fakeEnv();
    const first = new Notifier(workspace.id, f.env);
    const state = stateWith([{ key: 'c1', pending: [permission] }]);
    f.hide();
    first.render(state);
    for (let i = 0; i < 4; i += 1) await settle();
    const second = new Notifier(workspace.id, f.env);
    second.render(state);
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.shown).toHaveLength(1);
    const third = new Notifier(workspace.id, f.env);
    const fourth = new Notifier(workspace.id, f.env);
    applyFrame(state, { seq: null, body: { type: 'session', ...session('c1', { phase: 'waiting', pending: [permission, questions] }) } });
    third.render(state);
    fourth.render(state);
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.open().map((n) => n.tag).sort()).toEqual(['r1', 'r2']);
  });

  it('asks for permission with the first card while hidden, never before', async () => {
    const f = fakeEnv('default');
    const notifier = new Notifier(workspace.id, f.env);
    expect(notifier.canAsk()).toBe(true);
    notifier.render(stateWith([]));
    f.hide();
    await settle();
    expect(f.asked()).toBe(0);
    notifier.render(stateWith([{ key: 'c1', pending: [permission] }]));
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.asked()).toBe(1);
    expect(f.open().map((n) => n.tag)).toEqual(['r1']);
  });

  it('a slow reload: told by the worker that the notifications closed, it raises the cards still waiting again (once hidden)', async () => {
    const f = fakeEnv();
    const state = stateWith([{ key: 'c1', pending: [permission, questions] }]);
    // The page before the reload raised both.
    f.hide();
    const before = new Notifier(workspace.id, f.env);
    before.render(state);
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.open().map((n) => n.tag)).toEqual(['r1', 'r2']);
    // The reloaded page comes hidden and finds them still shown; the worker then closes them
    // (it looked for tabs before this one was there).
    const after = new Notifier(workspace.id, f.env);
    after.render(state);
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.shown).toHaveLength(2);
    for (const n of f.open()) n.closed = true;
    // Another workspace's word, or another message, changes nothing.
    f.fromWorker({ type: 'orbit-notifications-closed', workspaceId: 'elsewhere', tags: ['r1', 'r2'] });
    f.fromWorker({ type: 'orbit-skip', key: 'c1', requestId: 'r1' });
    for (let i = 0; i < 4; i += 1) await settle();
    expect(f.open()).toEqual([]);
    // Told: both cards still wait and have their notification again.
    f.fromWorker({ type: 'orbit-notifications-closed', workspaceId: workspace.id, tags: ['r1', 'r2'] });
    for (let i = 0; i < 8; i += 1) await settle();
    expect(f.open().map((n) => n.tag)).toEqual(['r1', 'r2']);
    // A visible page raises nothing when told, and raises them once hidden.
    for (const n of f.open()) n.closed = true;
    f.show();
    f.fromWorker({ type: 'orbit-notifications-closed', workspaceId: workspace.id, tags: ['r1'] });
    for (let i = 0; i < 8; i += 1) await settle();
    expect(f.open()).toEqual([]);
    f.hide();
    for (let i = 0; i < 8; i += 1) await settle();
    expect(f.open().map((n) => n.tag)).toEqual(['r1']);
  });

  it('a service worker that could not start (Orbit away) is tried again at the next card, and the problem said no more once it starts', async () => {
    let failing = true;
    const registered: unknown[] = [];
    const ready = { active: null, showNotification: () => Promise.resolve(), getNotifications: () => Promise.resolve([]) };
    vi.stubGlobal('Notification', { permission: 'default', requestPermission: () => Promise.resolve('granted') });
    vi.stubGlobal('navigator', {
      serviceWorker: {
        ready: Promise.resolve(ready),
        register: (url: string) => {
          registered.push(url);
          return failing ? Promise.reject(new TypeError('Failed to fetch')) : Promise.resolve({});
        },
        addEventListener: () => undefined,
      },
    });
    try {
      const env = browserNotifyEnv(workspace.id);
      expect(await env.registration()).toBeNull();
      failing = false;
      expect(await env.registration()).toBe(ready);
      expect(registered).toHaveLength(2);
      // Kept once it started.
      expect(await env.registration()).toBe(ready);
      expect(registered).toHaveLength(2);
    } finally {
      vi.unstubAllGlobals();
    }
    // The notifier says the problem while it lasts, and no more once the worker started.
    const f = fakeEnv();
    let up = false;
    const real = f.env.registration.bind(f.env);
    f.env.registration = () => (up ? real() : Promise.resolve(null));
    const notifier = new Notifier(workspace.id, f.env);
    f.hide();
    notifier.render(stateWith([{ key: 'c1', pending: [permission] }]));
    await settle();
    expect(notifier.problem).toBe('Notifications need the page’s service worker, which could not start.');
    expect(f.open()).toHaveLength(0);
    up = true;
    notifier.render(stateWith([{ key: 'c1', pending: [permission, questions] }]));
    await settle();
    await settle();
    expect(notifier.problem).toBeNull();
    expect(f.open().map((n) => n.tag)).toEqual([permission.requestId, questions.requestId]);
  });

  it('tells the worker when the tab goes, at once (the worker decides whether other tabs keep the notifications)', async () => {
    const f = fakeEnv();
    new Notifier(workspace.id, f.env);
    await settle();
    f.pageHide();
    expect(f.posted).toEqual([{ type: 'orbit-page-gone', workspaceId: workspace.id }]);
    // Without permission there is no worker to tell (and no notification of this origin).
    const g = fakeEnv('default');
    new Notifier(workspace.id, g.env);
    await settle();
    g.pageHide();
    expect(g.posted).toEqual([]);
  });
});
