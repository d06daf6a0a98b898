/**
 * The page's state: the workspace, the conversations, each one's session
 * and transcripts, the pending cards, and the channel's bookkeeping (last
 * seq, instance id, the outbox of unacknowledged actions). Reducers take
 * validated frames; nothing here touches the DOM.
 */
import type { ConnectionState } from '../protocol/transport';
import type {
  ActionAck,
  CatalogState,
  ConversationEntry,
  HistoryState,
  McpState,
  SettingsState,
  HostBody,
  HostFrame,
  PageFrame,
  PageRequest,
  PendingCard,
  SessionState,
  SubagentMessage,
  TranscriptEntry,
  TranscriptUpdate,
  WorkspaceState,
} from '../protocol/types';

/** The channel protocol this page speaks (`hello.protocol`; `CHANNEL_PROTOCOL` in orbit-types). */
export const CHANNEL_PROTOCOL = 1;

/**
 * Entries kept per conversation and per subagents' history: the host's
 * rings (400 of each), so the page's memory is flat however long the
 * session runs.
 */
export const TRANSCRIPT_LIMIT = 400;
/** Notices kept (refusals, refused frames, failed actions). */
export const NOTICE_LIMIT = 20;

export interface SubagentInfo {
  id: string;
  agentType: string | null;
  description: string | null;
  running: boolean;
  status: string | null;
  output: string | null;
}

/** A message for the map: `mapDelta`, `mapReset`, or `snapshot` (the channel started afresh: deltas may be missing). */
export type MapInboxItem = Extract<HostBody, { type: 'mapDelta' | 'mapReset' }> | { type: 'snapshot' };

/**
 * Files whose content changed in place, for the file panel ({@link Store.takeFilesChanged}):
 * a `filesChanged` message, or `more` alone after a snapshot (the log may have skipped some).
 */
export interface FilesChangedItem {
  paths: string[];
  more: boolean;
}

/** `filesChanged` items kept until taken; past this they collapse into one `more`. */
export const FILES_CHANGED_INBOX_LIMIT = 100;

/** Claude's activity and subagent messages for the scene's effects ({@link Store.takeActivity}). */
export type ActivityInboxItem = Extract<HostBody, { type: 'activity' | 'subagent' }>;

/** Activity messages kept for the scene; past this the oldest go (the scene takes them on every render). */
export const ACTIVITY_INBOX_LIMIT = 2000;

/** Map messages kept for the scene; past this, they collapse into one `snapshot` (the scene fetches afresh). */
export const MAP_INBOX_LIMIT = 10000;

export interface Notice {
  id: number;
  text: string;
}

/** An action sent (or to send) and not yet acknowledged. */
export interface OutboxItem {
  id: string;
  frame: Extract<PageFrame, { type: 'action' } | { type: 'trust' }>;
  /** When it was made (ms since the epoch): past a minute unacknowledged it is dropped. */
  at: number;
  /** The boot id of the Orbit it was meant for (`null` before the first `hello`). */
  instanceId: string | null;
}

export interface PageState {
  connection: ConnectionState;
  /** How many times the transport opened (a reconnect adds one). */
  connects: number;
  instanceId: string | null;
  lastSeq: number | null;
  /** Between a `hello` with `resumed:false` and `snapshotEnd`. */
  inSnapshot: boolean;
  /** Whether a whole state has arrived (the first snapshot ended, or a resume). */
  ready: boolean;
  workspace: WorkspaceState | null;
  current: string | null;
  conversations: ConversationEntry[];
  sessions: Record<string, SessionState>;
  transcripts: Record<string, TranscriptEntry[]>;
  subagentTranscripts: Record<string, TranscriptEntry[]>;
  subagents: Record<string, Record<string, SubagentInfo>>;
  outbox: OutboxItem[];
  acks: Record<string, ActionAck>;
  /**
   * Actions dropped unacknowledged (past their minute, or meant for an Orbit that restarted),
   * by id, the last {@link DROPPED_KEPT}: what waited on one (a card's "Sent…", the prompt box)
   * is given back, as for a refusal.
   */
  dropped: Record<string, 'expired' | 'restarted'>;
  notices: Notice[];
  frames: number;
  duplicates: number;
  errors: string[];
  /** Map messages the scene has not taken yet ({@link Store.takeMapMessages}). */
  mapInbox: MapInboxItem[];
  /** Activity and subagent messages the scene has not taken yet. */
  activityInbox: ActivityInboxItem[];
  /** Content changes the file panel has not taken yet. */
  filesChangedInbox: FilesChangedItem[];
  /** The panels' workspace messages (issue 20): the last of each. */
  catalog: CatalogState | null;
  settings: SettingsState | null;
  mcp: McpState | null;
  history: HistoryState | null;
}

export function initialState(): PageState {
  return {
    connection: 'connecting',
    connects: 0,
    instanceId: null,
    lastSeq: null,
    inSnapshot: false,
    ready: false,
    workspace: null,
    current: null,
    conversations: [],
    sessions: {},
    transcripts: {},
    subagentTranscripts: {},
    subagents: {},
    outbox: [],
    acks: {},
    dropped: {},
    notices: [],
    frames: 0,
    duplicates: 0,
    errors: [],
    mapInbox: [],
    activityInbox: [],
    filesChangedInbox: [],
    catalog: null,
    settings: null,
    mcp: null,
    history: null,
  };
}

let noticeCounter = 0;

export function addNotice(state: PageState, text: string): void {
  noticeCounter += 1;
  state.notices.push({ id: noticeCounter, text });
  if (state.notices.length > NOTICE_LIMIT) state.notices.splice(0, state.notices.length - NOTICE_LIMIT);
}

export function addError(state: PageState, text: string): void {
  state.errors.push(text);
  if (state.errors.length > 200) state.errors.splice(0, state.errors.length - 200);
  addNotice(state, text);
}

/** Dropped action ids kept ({@link PageState.dropped}), as many as acks. */
export const DROPPED_KEPT = 200;

/** Notes actions dropped unacknowledged (the notice is the caller's). */
export function noteDropped(state: PageState, items: readonly OutboxItem[], why: 'expired' | 'restarted'): void {
  for (const item of items) state.dropped[item.id] = why;
  const keys = Object.keys(state.dropped);
  if (keys.length > DROPPED_KEPT) {
    for (const old of keys.slice(0, keys.length - DROPPED_KEPT)) Reflect.deleteProperty(state.dropped, old);
  }
}

/** Whether action `id` will get no answer: refused (`ack` not ok) or dropped unacknowledged. */
export function actionFailed(state: PageState, id: string): boolean {
  return state.acks[id]?.ok === false || id in state.dropped;
}

/** Adds entries to a ring: an entry whose seq is held replaces it, others go in seq order. */
export function mergeEntries(held: TranscriptEntry[], incoming: readonly TranscriptEntry[]): TranscriptEntry[] {
  const out = held.slice();
  for (const entry of incoming) {
    const last = out[out.length - 1];
    if (last === undefined || last.seq < entry.seq) {
      out.push(entry);
      continue;
    }
    // Binary search for the entry's place.
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const at = out[mid];
      if (at !== undefined && at.seq < entry.seq) lo = mid + 1;
      else hi = mid;
    }
    if (out[lo]?.seq === entry.seq) out[lo] = entry;
    else out.splice(lo, 0, entry);
  }
  if (out.length > TRANSCRIPT_LIMIT) out.splice(0, out.length - TRANSCRIPT_LIMIT);
  return out;
}

function applyTranscript(state: PageState, update: TranscriptUpdate): void {
  const rings = update.subagents ? state.subagentTranscripts : state.transcripts;
  const held = update.reset ? [] : (rings[update.key] ?? []);
  rings[update.key] = mergeEntries(held, update.entries);
}

/**
 * Subagents kept per conversation ({@link PageState.subagents}): as many as the transcript's ring
 * has entries, so as many as its entries can name (each holds up to 16 KiB of output; the host
 * forgets a subagent at its turn's end).
 */
export const SUBAGENT_LIMIT = TRANSCRIPT_LIMIT;

function applySubagent(state: PageState, message: SubagentMessage): void {
  const byId = (state.subagents[message.key] ??= {});
  if (!(message.id in byId)) {
    // Past the limit, the oldest that has ended goes (one still running is kept).
    const ids = Object.keys(byId);
    let over = ids.length + 1 - SUBAGENT_LIMIT;
    for (const id of ids) {
      if (over <= 0) break;
      if (byId[id]?.running) continue;
      Reflect.deleteProperty(byId, id);
      over -= 1;
    }
  }
  const info = (byId[message.id] ??= {
    id: message.id,
    agentType: null,
    description: null,
    running: false,
    status: null,
    output: null,
  });
  if (message.event === 'started') {
    info.running = true;
    info.agentType = message.agentType ?? info.agentType;
    info.description = message.description ?? info.description;
  } else if (message.event === 'ended') {
    info.running = false;
    info.status = message.status ?? null;
  } else {
    info.output = message.output ?? null;
  }
}

function clearConversations(state: PageState): void {
  state.current = null;
  state.conversations = [];
  state.sessions = {};
  state.transcripts = {};
  state.subagentTranscripts = {};
  state.subagents = {};
}

function pushMap(state: PageState, item: MapInboxItem): void {
  if (state.mapInbox.length >= MAP_INBOX_LIMIT) state.mapInbox = [{ type: 'snapshot' }];
  state.mapInbox.push(item);
}

function pushFilesChanged(state: PageState, item: FilesChangedItem): void {
  if (state.filesChangedInbox.length >= FILES_CHANGED_INBOX_LIMIT) state.filesChangedInbox = [{ paths: [], more: true }];
  state.filesChangedInbox.push(item);
}

function pushActivity(state: PageState, item: ActivityInboxItem): void {
  if (state.activityInbox.length >= ACTIVITY_INBOX_LIMIT) state.activityInbox.shift();
  state.activityInbox.push(item);
}

/**
 * Applies one validated host frame. Returns false when the frame was a
 * duplicate (a `seq` the page already holds) and was ignored.
 */
export function applyFrame(state: PageState, frame: HostFrame): boolean {
  state.frames += 1;
  if (frame.seq !== null && frame.seq !== undefined) {
    if (state.lastSeq !== null && frame.seq <= state.lastSeq) {
      state.duplicates += 1;
      return false;
    }
    state.lastSeq = frame.seq;
  }
  const body = frame.body;
  switch (body.type) {
    case 'hello':
      if (body.protocol !== CHANNEL_PROTOCOL) {
        addError(state, `Orbit speaks channel protocol ${body.protocol}, this page ${CHANNEL_PROTOCOL}: reload the page (or update Orbit).`);
      }
      if (!body.resumed) {
        // A snapshot follows: what it holds is the state up to `head`.
        clearConversations(state);
        pushMap(state, { type: 'snapshot' });
        // A file may have changed while the log went on without this page.
        pushFilesChanged(state, { paths: [], more: true });
        state.inSnapshot = true;
        state.ready = false;
        state.lastSeq = body.head;
      } else {
        state.ready = true;
      }
      state.instanceId = body.instanceId;
      break;
    case 'snapshotEnd':
      state.inSnapshot = false;
      state.ready = true;
      break;
    case 'workspace': {
      const { type: _type, ...workspace } = body;
      state.workspace = workspace;
      break;
    }
    case 'ack': {
      const { type: _type, ...ack } = body;
      state.acks[ack.id] = ack;
      const ackKeys = Object.keys(state.acks);
      if (ackKeys.length > 200) {
        for (const old of ackKeys.slice(0, ackKeys.length - 200)) Reflect.deleteProperty(state.acks, old);
      }
      state.outbox = state.outbox.filter((item) => item.id !== ack.id);
      if (!ack.ok) {
        addNotice(state, `Orbit refused that: ${ack.message ?? 'no reason given'}${ack.code ? ` (${ack.code})` : ''}`);
      }
      break;
    }
    case 'sessions': {
      state.current = body.current ?? null;
      state.conversations = body.conversations;
      const keys = new Set(body.conversations.map((c) => c.key));
      for (const ring of [state.sessions, state.transcripts, state.subagentTranscripts, state.subagents]) {
        for (const key of Object.keys(ring)) if (!keys.has(key)) Reflect.deleteProperty(ring, key);
      }
      break;
    }
    case 'session': {
      const { type: _type, ...session } = body;
      state.sessions[session.key] = session;
      // Keep the tab's phase in step with the session's.
      state.conversations = state.conversations.map((c) =>
        c.key === session.key ? { ...c, phase: session.phase } : c,
      );
      break;
    }
    case 'transcript':
      applyTranscript(state, body);
      break;
    case 'subagent':
      applySubagent(state, body);
      pushActivity(state, body);
      break;
    case 'refused':
      addNotice(state, `Orbit refused ${body.request}: ${body.message} (${body.code})`);
      break;
    case 'mapDelta':
    case 'mapReset':
      pushMap(state, body);
      break;
    case 'filesChanged':
      pushFilesChanged(state, { paths: body.paths, more: body.more });
      break;
    case 'catalog':
    case 'settings':
    case 'mcp':
    case 'history': {
      const { type, ...panel } = body;
      if (type === 'catalog') state.catalog = panel as CatalogState;
      else if (type === 'settings') state.settings = panel as SettingsState;
      else if (type === 'mcp') state.mcp = panel as McpState;
      else state.history = panel as HistoryState;
      break;
    }
    case 'historyProgress':
      applyHistoryProgress(state, body);
      break;
    case 'activity':
      pushActivity(state, body);
      break;
    case 'keypad':
      // The keypad panel fetches its own state.
      break;
  }
  return true;
}

/**
 * `historyProgress`: the scan's state on its own; the list stays the last
 * `history`'s (a new object, so that the panel sees the change).
 */
function applyHistoryProgress(state: PageState, body: { scanning: boolean; done: number; total: number }): void {
  const progress = body.scanning && body.total > 0 ? { done: body.done, total: body.total } : null;
  state.history = { ...(state.history ?? { error: null, conversations: [] }), scanning: body.scanning, progress };
}

/** The frame that opens each connection. */
export function resumeFrame(state: PageState): PageFrame {
  // A snapshot cut short (the socket dropped before `snapshotEnd`) is not a state to resume from:
  // its `head` was never wholly received, so the page asks for a whole snapshot again.
  return { type: 'resume', instanceId: state.instanceId, lastSeq: state.inSnapshot ? null : state.lastSeq };
}

let idCounter = 0;

/** A page-made action id: unique per page load and across reloads. */
export function newActionId(): string {
  idCounter += 1;
  const random = Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0');
  return `p${Date.now().toString(36)}-${random}-${idCounter}`;
}

/** Queues an action in the outbox; returns its item (sent now, and again after a reconnect until acked). */
export function queueAction(state: PageState, request: PageRequest, id = newActionId(), at = Date.now()): OutboxItem {
  const item: OutboxItem = { id, frame: { type: 'action', id, request }, at, instanceId: state.instanceId };
  state.outbox.push(item);
  return item;
}

export function queueTrust(state: PageState, id = newActionId(), at = Date.now()): OutboxItem {
  const item: OutboxItem = { id, frame: { type: 'trust', id }, at, instanceId: state.instanceId };
  state.outbox.push(item);
  return item;
}

/** The cards waiting in one conversation, oldest first. */
export function pendingCards(state: PageState, key: string): PendingCard[] {
  return state.sessions[key]?.pending ?? [];
}

/** A plain JSON snapshot of the state, for `window.orbitInspect`. */
export function inspect(state: PageState, shown: string | null): unknown {
  const perKey = <T, U>(rings: Record<string, T>, f: (v: T) => U): Record<string, U> =>
    Object.fromEntries(Object.entries(rings).map(([k, v]) => [k, f(v)]));
  return JSON.parse(
    JSON.stringify({
      connection: state.connection,
      connects: state.connects,
      ready: state.ready,
      lastSeq: state.lastSeq,
      instanceId: state.instanceId,
      workspace: state.workspace,
      current: state.current,
      shown,
      conversations: state.conversations,
      sessions: state.sessions,
      transcripts: perKey(state.transcripts, (entries) => ({
        length: entries.length,
        seqs: entries.map((e) => e.seq),
        kinds: entries.map((e) => e.body.kind),
      })),
      subagentTranscripts: perKey(state.subagentTranscripts, (entries) => ({
        length: entries.length,
        seqs: entries.map((e) => e.seq),
      })),
      pending: perKey(state.sessions, (s) =>
        s.pending.map((card) => ({
          kind: card.kind,
          requestId: card.requestId,
          title: card.kind === 'permission' ? card.title : null,
        })),
      ),
      outbox: state.outbox.map((item) => item.id),
      notices: state.notices.map((n) => n.text),
      duplicates: state.duplicates,
    }),
  ) as unknown;
}

/** The store: the state, plus change listeners. */
export class Store {
  readonly state: PageState = initialState();
  private listeners: (() => void)[] = [];

  subscribe(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** The map messages received since the last call, oldest first. */
  takeMapMessages(): MapInboxItem[] {
    const taken = this.state.mapInbox;
    this.state.mapInbox = [];
    return taken;
  }

  /** The content changes received since the last call, oldest first. */
  takeFilesChanged(): FilesChangedItem[] {
    const taken = this.state.filesChangedInbox;
    if (taken.length > 0) this.state.filesChangedInbox = [];
    return taken;
  }

  /** The activity and subagent messages received since the last call, oldest first. */
  takeActivity(): ActivityInboxItem[] {
    const taken = this.state.activityInbox;
    this.state.activityInbox = [];
    return taken;
  }

  /** Runs a change and tells every listener once. */
  update<T>(change: (state: PageState) => T): T {
    const result = change(this.state);
    for (const listener of this.listeners) listener();
    return result;
  }
}
