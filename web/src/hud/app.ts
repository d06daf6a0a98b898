/**
 * The HUD: lays out the page (the scene's main area, the bubbles, the
 * conversation view with its cards, the drawer, the banners, the file
 * panel) and keeps it in step with the store.
 */
import type { Channel } from '../protocol/channel';
import type { PreloadedMap } from '../protocol/preload';
import type { PageRequest, PendingCard } from '../protocol/types';
import type { PageState } from '../state/store';
import type { Store } from '../state/store';
import type { MapMessage } from '../scene/model';
import type { Scene } from '../scene/scene';
import { actionFailed, addError, addNotice } from '../state/store';
import { Bubbles } from './bubbles';
import { permissionCard, questionCard } from './cards';
import { TranscriptView, subagentHistoryView } from './conversation';
import { clear, h, setText } from './dom';
import { Drawer } from './drawer';
import type { MarkdownContext } from './markdown';
import { titleWithCount, waitingCards, type Notifier } from './notify';
import { offlineReason } from './offline';
// Not in the page's entry: their code is imported after the first frame (the map's at once).
import { deferredFilePanel, deferredPanels, deferredScene, deferredSearch, noPanels, noSearch, type DeferredPanels, type DeferredSearch, type LoadFailed } from './deferred';
import type { PanelsInspect } from './panels';

/** An editor hosting the page (a VS Code webview): its trust is the trust, and it opens files itself. */
export interface HudHost {
  /** The editor's name, as the page says it. */
  name: string;
  /** Opens a graph file in an editor (at `line`). */
  openFile(path: string, line: number | null): void;
  /** Files through the editor's own dialog (absolute paths; none when cancelled), for a prompt's files. */
  pickFiles?(): Promise<string[]>;
  /** The map's snapshot through the editor (a webview has no `/map` route). */
  fetchMap?(): Promise<ArrayBuffer>;
}

export interface HudOptions {
  workspaceId: string;
  /** Raises the cards' notifications while the page is hidden (none: no notifications). */
  notifier?: Notifier;
  /** The editor hosting the page; `null` in a browser. */
  host?: HudHost | null;
  /** When the map starts: null at the end of the mounting task, else when the promise settles (`hud/deferred.ts`). */
  sceneStart?: () => Promise<void> | null;
  /**
   * When the side column's contents (the conversation, its cards, the prompt
   * box, the panels) are made: when this settles (none: at once). The top
   * bar, the banners and the map's place are made at once either way, so the
   * map has its final size from the start; a fresh open (nothing to read)
   * makes the rest after the map's first frame (`main.ts`).
   */
  restAfter?: Promise<unknown>;
  /** The map's bytes the page's HTML carried (`protocol/preload.ts`): the map's first snapshot. */
  preloadedMap?: PreloadedMap | null;
}

export interface Hud {
  /** The conversation the view shows. */
  shown(): string | null;
  /** Shows a conversation (the keypad's tap, `#conversation=<key>`). */
  show(key: string): void;
  /** How many transcript entries are in the DOM (the view is a window). */
  rendered(): number;
  /** The conversation search's state. */
  search(): { open: boolean; query: string; matches: number[]; current: number | null };
  /** Shows the conversation `key` and brings its card `requestId` into view (once it arrives). */
  openCard(key: string, requestId: string): void;
  /** The map. */
  scene: Scene;
  /** Which panel is open, the prompt's attachments, the way the last file completion came. */
  panels(): PanelsInspect;
}

/** The side column's contents (`HudOptions.restAfter`). */
interface SideParts {
  transcript: TranscriptView;
  search: DeferredSearch;
  panels: DeferredPanels;
  drawer: Drawer;
  cards: HTMLElement;
  cardsGate: HTMLFieldSetElement;
  conversationTitle: HTMLElement;
}

const CONNECTION_TEXT: Record<PageState['connection'], string> = {
  connecting: 'Connecting…',
  open: 'Connected',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
};

/** After this long reconnecting, the status says Orbit may have stopped. */
const LONG_WAIT_MS = 15000;

function cardKey(card: PendingCard): string {
  return `${card.kind}:${card.requestId}`;
}

export function mountHud(root: HTMLElement, store: Store, channel: Channel, options: HudOptions): Hud {
  let shown: string | null = null;
  /** Whether the user picked a tab; otherwise the view follows the current conversation. */
  let pinned = false;
  let lastCurrent: string | null = null;
  let longWait: ReturnType<typeof setTimeout> | null = null;

  const send = (request: PageRequest): string => channel.act(request).id;

  const failed: LoadFailed = (what, error) => {
    store.update((state) => { addError(state, `The code of ${what} could not be loaded (${String(error)}); reload the page.`); });
  };
  const filePanel = deferredFilePanel(options.workspaceId, failed);
  const show = (key: string): void => {
    shown = key;
    pinned = true;
    render();
  };
  const mdContext: MarkdownContext = {
    openFile: (path, line) => {
      if (options.host) options.host.openFile(path, line);
      else void filePanel.open(path, line);
    },
  };
  // On a software GPU the bubble's fly-in goes in steps (bubbles.ts): `scene` is made below, read when a bubble is.
  const bubbles = new Bubbles(show, { software: () => scene.software() });
  const scene = deferredScene({
    workspaceId: options.workspaceId,
    openFile: (path) => {
      // In an editor, a file on the map opens in the editor.
      if (options.host) options.host.openFile(path, null);
      else void filePanel.open(path, null);
    },
    rearrange: () => {
      send({ type: 'rearrange' });
    },
    takeMapMessages: (): MapMessage[] => {
      const taken = store.takeMapMessages();
      // The file panel hears of its file leaving the map, or coming back.
      for (const message of taken) {
        if (message.type === 'mapDelta') filePanel.mapChanged(message.removed, message.added.map((node) => node.path));
      }
      return taken;
    },
    takeActivity: () => store.takeActivity(),
    onRead: (key) => { bubbles.lightRead(key); },
    ...(options.host?.fetchMap ? { fetchMap: () => options.host?.fetchMap?.() ?? Promise.reject(new Error('the editor gives no map')) } : {}),
    ...(options.preloadedMap ? { preloadedMap: options.preloadedMap } : {}),
  }, failed, options.sceneStart);

  const connection = h('p', { class: 'connection', role: 'status' });
  const offlineBanner = h('div', { class: 'banner banner-offline', role: 'alert', hidden: true });
  const notifier = options.notifier;
  const notifyButton = h('button', { type: 'button', class: 'link-button notify-button', hidden: true, onclick: () => {
    void notifier?.ask().then(render);
  } }, 'Notify me of cards');
  const notifyProblem = h('span', { class: 'notify-problem muted', role: 'status' });
  notifier?.onChange(() => { render(); });
  /** A card the page was asked to open (from a notification), until it is in view. */
  let wantedCard: { key: string; requestId: string } | null = null;
  const wsName = h('span', { class: 'ws-name' });
  const agentBanner = h('div', { class: 'banner banner-error', role: 'alert', hidden: true });
  const trustBanner = h('div', { class: 'banner banner-trust', hidden: true });
  const notices = h('div', { class: 'notices', role: 'alert', 'aria-label': 'Errors' });

  const trustButton = h('button', { type: 'button', class: 'primary', onclick: () => {
    channel.trust();
    trustButton.disabled = true;
    trustButton.textContent = 'Trusting…';
  } }, 'Trust this folder');
  if (options.host) {
    // The editor's trust is the trust: no button of the page's own.
    trustBanner.append(
      h('p', null,
        h('strong', null, 'This folder is not trusted. '),
        `Conversations with Claude are unavailable here until ${options.host.name} trusts it, because Claude can read and change its files and run commands in it. Trust it in ${options.host.name} (Workspaces: Manage Workspace Trust); Orbit follows without a reload.`),
    );
  } else {
    trustBanner.append(
      h('p', null,
        h('strong', null, 'This folder is not trusted. '),
        'Conversations with Claude are unavailable here until you trust it, because Claude can read and change its files and run commands in it. Trust is remembered for this folder, as ',
        h('code', null, 'orbit trust'),
        ' does.'),
      trustButton,
    );
  }

  const dismissed = new Set<number>();
  const cardNodes = new Map<string, { node: HTMLElement; actionIds: string[] }>();

  // The page's layout: the top bar, the banners and the map's place now (what sizes the map);
  // the side column is in place (its width is the layout's), its contents come with `mountSide`.
  const sideEl = h('aside', { class: 'side', 'aria-label': 'Claude' });
  root.append(
    h('header', { class: 'topbar' }, h('h1', { class: 'brand' }, 'Orbit'), wsName, notifyButton, notifyProblem, connection),
    h('div', { class: 'banners' }, offlineBanner, agentBanner, trustBanner, notices),
    h('main', { class: 'stage' }, scene.el, bubbles.el),
    sideEl,
    filePanel.el,
  );

  /** The side column's contents, once made. */
  let side: SideParts | null = null;
  function mountSide(): SideParts {
    const transcript = new TranscriptView({
      ...mdContext,
      subagentHistory: (toolUseId) => (shown ? subagentHistoryView(store.state, shown, toolUseId, mdContext) : null),
    });
    const search = deferredSearch({
      entries: () => (shown ? (store.state.transcripts[shown] ?? []) : []),
      reveal: (seq, query) => { transcript.reveal(seq, query); },
    }, failed);
    const panels = deferredPanels({
      workspaceId: options.workspaceId,
      // In a browser the file completion asks over the socket (an editor's relay answers no `search`).
      channelSearch: options.host ? undefined : (q, limit) => channel.search(q, limit),
      send,
      show,
      openFile: (path) => { mdContext.openFile(path, null); },
    }, failed);
    const drawer = new Drawer({ send, show, shown: () => shown, attachments: panels.composer });
    const cards = h('div', { class: 'cards', role: 'region', 'aria-label': 'Waiting for you' });
    // While disconnected nothing on a card can be sent: a disabled fieldset disables every control in it
    // without touching the controls' own state.
    const cardsGate = h('fieldset', { class: 'cards-gate' }, cards);
    const conversationTitle = h('h2', { class: 'conversation-title' }, 'Conversation');
    sideEl.append(panels.toolbar, panels.el, conversationTitle, panels.continuation, search.el, transcript.el, cardsGate, drawer.el);
    search.bind(sideEl);
    return { transcript, search, panels, drawer, cards, cardsGate, conversationTitle };
  }

  function renderCards(state: PageState, cards: HTMLElement): void {
    const pending = shown ? (state.sessions[shown]?.pending ?? []) : [];
    const key = shown;
    const keep = new Set<string>();
    let before: Node | null = null;
    for (let i = pending.length - 1; i >= 0; i -= 1) {
      const card = pending[i];
      if (!card || key === null) continue;
      const id = `${key}\n${cardKey(card)}`;
      keep.add(id);
      let held = cardNodes.get(id);
      // A card whose answer was refused, or dropped unacknowledged (a minute offline), is built again, answerable.
      const refused = held?.actionIds.some((a) => actionFailed(state, a)) ?? false;
      if (!held || refused) {
        const actionIds: string[] = [];
        const actions = { send: (r: PageRequest) => { actionIds.push(send(r)); } };
        const node = card.kind === 'permission' ? permissionCard(key, card, actions) : questionCard(key, card, actions);
        if (held) {
          const focused = held.node.contains(document.activeElement);
          held.node.replaceWith(node);
          // The focus stays on the card, built again.
          if (focused) node.focus();
        }
        held = { node, actionIds };
        cardNodes.set(id, held);
      }
      if (held.node.parentNode !== cards || held.node.nextSibling !== before) cards.insertBefore(held.node, before);
      before = held.node;
    }
    // A card of another conversation (the user switched tabs) is taken off the page but kept, with
    // what was typed or sent in it, until it no longer waits: built again on return, it would lose
    // the typing and offer an answer already in flight a second time.
    // What waits across conversations is looked up only when a held card is not shown.
    let waiting: Set<string> | null = null;
    let focusLost = false;
    for (const [id, held] of cardNodes) {
      if (keep.has(id)) continue;
      if (held.node.parentNode) {
        focusLost ||= held.node.contains(document.activeElement);
        held.node.remove();
      }
      waiting ??= new Set(Object.entries(state.sessions).flatMap(([k, s]) => s.pending.map((card) => `${k}\n${cardKey(card)}`)));
      if (!waiting.has(id)) cardNodes.delete(id);
    }
    // The card the focus was on went (answered, from the keyboard): the focus goes to the next card
    // waiting, else to the prompt box, not to the page's start.
    if (focusLost) {
      const next = cards.querySelector<HTMLElement>('[data-request-id]');
      if (next) next.focus();
      else side?.drawer.focusPrompt();
    }
    if (wantedCard && wantedCard.key === key) {
      const wanted = Array.from(cards.querySelectorAll<HTMLElement>('[data-request-id]')).find(
        (node) => node.dataset.requestId === wantedCard?.requestId,
      );
      if (wanted) {
        wantedCard = null;
        wanted.scrollIntoView({ block: 'nearest' });
        wanted.focus();
      } else if (state.sessions[wantedCard.key] && !pending.some((card) => card.requestId === wantedCard?.requestId)) {
        // Its conversation is known and the card no longer waits: answered before the page opened
        // on it (elsewhere, or a notification outlived it). Said, not silently shown without it.
        wantedCard = null;
        queueMicrotask(() => {
          store.update((s) => { addNotice(s, 'The card you opened was already answered.'); });
        });
      }
    }
  }

  function renderNotices(state: PageState): void {
    const visible = state.notices.filter((n) => !dismissed.has(n.id)).slice(-5);
    const ids = visible.map((n) => n.id).join(',');
    if (notices.dataset.ids === ids) return;
    notices.dataset.ids = ids;
    clear(notices);
    for (const notice of visible) {
      notices.appendChild(
        h('div', { class: 'notice-item' },
          h('span', null, notice.text),
          h('button', { type: 'button', class: 'link-button', 'aria-label': 'Dismiss', onclick: () => {
            dismissed.add(notice.id);
            renderNotices(store.state);
          } }, '×')),
      );
    }
  }

  function render(): void {
    const state = store.state;
    if (state.current !== lastCurrent) {
      lastCurrent = state.current;
      // A new current conversation (a prompt, New conversation) is shown.
      if (state.current) {
        shown = state.current;
        pinned = false;
      }
    }
    if (shown !== null && !state.conversations.some((c) => c.key === shown)) {
      shown = state.current;
      pinned = false;
    }
    if (!pinned && shown === null) shown = state.current;

    const offline = state.connection !== 'open';
    // Said at once; the first connection of a load is not a disconnection.
    offlineBanner.hidden = !offline || state.connects === 0;
    if (!offlineBanner.hidden) {
      const waiting = state.outbox.length;
      setText(offlineBanner, `Disconnected from Orbit: reconnecting… Cards and prompts can be sent again once it is back${
        waiting > 0 ? `; ${waiting} action${waiting === 1 ? '' : 's'} will be sent then` : ''
      }.`);
    }
    if (state.connection !== connection.dataset.state) {
      connection.dataset.state = state.connection;
      connection.textContent = CONNECTION_TEXT[state.connection];
      if (longWait !== null) clearTimeout(longWait);
      longWait = null;
      if (state.connection === 'reconnecting') {
        // Every LONG_WAIT_MS while it lasts, in a browser, the server is asked why (a webview's host has
        // no such routes): an Orbit started again meanwhile is said once it answers.
        const longer = 'Reconnecting… (if Orbit stopped, run `orbit open` again)';
        const waitLonger = (): void => {
          longWait = setTimeout(() => {
            if (connection.dataset.state !== 'reconnecting') return;
            if (connection.textContent === CONNECTION_TEXT.reconnecting) connection.textContent = longer;
            if (options.host) return;
            void offlineReason(options.workspaceId).then((reason) => {
              if (connection.dataset.state === 'reconnecting') connection.textContent = reason ?? longer;
            });
            waitLonger();
          }, LONG_WAIT_MS);
        };
        waitLonger();
      }
    }
    const ws = state.workspace;
    setText(wsName, ws ? ws.name : '');
    wsName.title = ws ? ws.root : '';
    const waiting = waitingCards(state).length;
    document.title = titleWithCount(ws ? `${ws.name} · Orbit` : 'Orbit', waiting);
    notifyButton.hidden = !notifier?.canAsk();
    setText(notifyProblem, notifier?.problem ?? '');
    notifier?.render(state);

    const agentMissing = ws !== null && !ws.agent.available;
    agentBanner.hidden = !agentMissing;
    if (agentMissing) {
      clear(agentBanner);
      agentBanner.append(
        h('strong', null, 'Claude Code is not available, so conversations are too. '),
        ws.agent.message ?? 'Install Claude Code and reopen Orbit.',
      );
    }
    trustBanner.hidden = ws === null || ws.trusted;
    if (ws?.trusted === false && state.outbox.every((o) => o.frame.type !== 'trust')) {
      trustButton.disabled = false;
      trustButton.textContent = 'Trust this folder';
    }

    // The file panel hears of its file's content changing in place.
    for (const change of store.takeFilesChanged()) filePanel.filesChanged(change.paths, change.more);
    scene.render(state);
    bubbles.render(state);
    if (side) {
      side.cardsGate.disabled = offline;
      const conversation = state.conversations.find((c) => c.key === shown);
      setText(side.conversationTitle, conversation?.title ?? 'Conversation');
      side.transcript.render(state, shown);
      renderCards(state, side.cards);
      side.drawer.render(state);
      side.panels.render(state, shown);
    }
    renderNotices(state);
  }

  store.subscribe(render);
  if (options.restAfter) {
    const rest = (): void => {
      side ??= mountSide();
      render();
    };
    void options.restAfter.then(rest, rest);
  } else side = mountSide();
  render();
  return {
    shown: () => shown,
    panels: () => side?.panels.inspect() ?? noPanels(),
    scene,
    show,
    search: () => side?.search.inspect() ?? noSearch(),
    rendered: () => side?.transcript.rendered() ?? 0,
    openCard: (key, requestId) => {
      wantedCard = { key, requestId };
      if (store.state.conversations.some((c) => c.key === key)) {
        shown = key;
        pinned = true;
      } else {
        // Not here yet (the page is loading): shown once its conversation arrives. A page that has
        // its snapshot and no such conversation (ended, or an Orbit restarted since) says so and
        // stops waiting: a conversation of that key coming later is another one.
        const gone = (): void => {
          if (wantedCard?.key === key) wantedCard = null;
          queueMicrotask(() => {
            store.update((s) => { addNotice(s, 'The card you opened is gone: its conversation is no longer here.'); });
          });
        };
        if (store.state.ready) gone();
        else {
          const stop = store.subscribe(() => {
            if (store.state.conversations.some((c) => c.key === key)) {
              stop();
              shown = key;
              pinned = true;
              render();
            } else if (store.state.ready) {
              stop();
              gone();
            }
          });
        }
      }
      render();
    },
  };
}
