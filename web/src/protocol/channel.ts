/**
 * The channel: the envelope, the resume, and the action ids. It sends
 * `resume` on every open, applies validated frames to the store, and
 * sends each queued action (again after a reconnect or a reload, with the
 * same id) until its `ack` arrives. The outbox is kept in the tab's storage
 * (`state/outbox.ts`): an entry meant for an Orbit that has restarted since,
 * or not acknowledged within a minute, is dropped and the page says which.
 */
import type { FrameChecker } from './checker';
import type { Transport } from './transport';
import { PRELOAD_WORKER_FRAME_BYTES } from './preload';
import { validateHostFrame, validatePageFrame } from './validate';
import type { HostFrame, PageRequest, SearchMatch, SearchReply } from './types';
import {
  droppedNotice,
  memoryOutboxStorage,
  OUTBOX_MAX_AGE_MS,
  sortOutbox,
  type OutboxStorage,
} from '../state/outbox';
import {
  addError,
  addNotice,
  applyFrame,
  noteDropped,
  queueAction,
  queueTrust,
  resumeFrame,
  type OutboxItem,
  type PageState,
  type Store,
} from '../state/store';

/**
 * The entries of `items` still meant for the running Orbit (`instanceId`) and within their
 * minute; the others are dropped and the page says which.
 */
function keepCurrent(state: PageState, items: readonly OutboxItem[], instanceId: string, now: number): OutboxItem[] {
  const { keep, restarted, expired } = sortOutbox(items, instanceId, now);
  if (restarted.length > 0) {
    noteDropped(state, restarted, 'restarted');
    addNotice(state, droppedNotice(restarted, 'restarted'));
  }
  if (expired.length > 0) {
    noteDropped(state, expired, 'expired');
    addNotice(state, droppedNotice(expired, 'expired'));
  }
  return keep;
}

export interface ChannelOptions {
  /** Where the outbox survives a reload (default: memory only). */
  storage?: OutboxStorage;
  /** Milliseconds since the epoch (tests inject a clock). */
  now?: () => number;
  /** Checks text frames off the main thread (default: checked here, synchronously). */
  checker?: FrameChecker | null;
  /**
   * When given, the outbox kept in `storage` is read when this resolves (the page's first
   * frame shown: the tab's storage is a round trip to the browser), or before anything needs
   * it first (the socket opening, an action, a save), instead of at once.
   */
  restoreAfter?: Promise<unknown>;
}

/** Frames longer than this (characters) are checked in the worker: their validation would block the page. */
const WORKER_FRAME_BYTES = 32 * 1024;


/** How often unacknowledged actions are checked for their minute. */
const EXPIRY_CHECK_MS = 5000;

/** A search's connection dropped before its answer (the caller may ask again another way). */
export class ChannelDropped extends Error {
  constructor() {
    super('the connection to Orbit dropped');
  }
}

export class Channel {
  /** Whether the current connection has had its `hello` (actions wait for it). */
  private greeted = false;
  private readonly storage: OutboxStorage;
  private readonly now: () => number;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly checker: FrameChecker | null;
  /** Frames being checked, applied in order. */
  private queue: Promise<void> = Promise.resolve();
  /** How many frames wait in the worker. */
  private inWorker = 0;
  /** How many times the transport's state changed (a resume waiting for the queue goes only on its own connection). */
  private opened = 0;
  /** Whether the stored outbox has been read. */
  private restored = false;
  /** `search` frames waiting for their `searchAnswer`, by id. */
  private readonly searches = new Map<number, { resolve: (matches: SearchMatch[]) => void; reject: (error: Error) => void }>();
  private lastSearchId = 0;

  constructor(
    private readonly transport: Transport,
    private readonly store: Store,
    options: ChannelOptions = {},
  ) {
    this.storage = options.storage ?? memoryOutboxStorage();
    this.now = options.now ?? Date.now;
    this.checker = options.checker ?? null;
    if (options.restoreAfter) {
      void options.restoreAfter.then(() => {
        this.restore();
      });
    } else this.restore();
    transport.onState((connection) => {
      // The socket's opening needs the stored outbox (its actions go again once greeted); its
      // `connecting`, at `start()` in the page's first task, does not: the tab's storage is a
      // round trip to the browser that the first frame would wait for.
      if (connection === 'open') this.restore();
      this.greeted = false;
      this.dropSearches();
      this.opened += 1;
      store.update((state) => {
        state.connection = connection;
        if (connection === 'open') state.connects += 1;
      });
      if (connection !== 'open') return;
      if (this.inWorker === 0) {
        this.sendFrame(resumeFrame(store.state));
        return;
      }
      // Frames still being checked (the page's preloaded snapshot) are applied first: the resume
      // then asks only for what came after them.
      const opened = this.opened;
      void this.queue.then(() => {
        if (opened === this.opened) this.sendFrame(resumeFrame(store.state));
      });
    });
    transport.onFrame((data) => {
      this.incoming(data, true);
    });
  }

  /**
   * Applies the snapshot the page's HTML carried (`<script type="application/json"
   * id="orbit-snapshot">`: the frames a fresh connection's `resume` gets), checked as the
   * socket's frames are, so the page shows its state before the socket has opened. The
   * socket then resumes from the snapshot's `head`. A frame given as text is checked as a
   * socket's (a long one in the worker); one already parsed (`readPreloaded`, a block too short
   * to hold a long frame) is checked here as it is, without being written and parsed again.
   */
  preload(frames: readonly unknown[]): void {
    for (const frame of frames) this.incoming(frame, false);
  }

  /** One frame, from the socket or preloaded: a big one is checked in the worker. */
  private incoming(data: unknown, fromSocket: boolean): void {
    const checker = this.checker;
    // A big frame is checked in the worker; a small one here, unless frames wait in the worker
    // (frames are applied in arrival order).
    const limit = fromSocket ? WORKER_FRAME_BYTES : PRELOAD_WORKER_FRAME_BYTES;
    if (checker && typeof data === 'string' && (this.inWorker > 0 || data.length > limit)) {
      this.inWorker += 1;
      this.queued(async () => {
        let result: Awaited<ReturnType<FrameChecker['check']>>;
        try {
          result = await checker.check(data);
        } finally {
          this.inWorker -= 1;
        }
        this.receiveChecked(data, result, fromSocket);
      });
    } else if (this.inWorker > 0) {
      // A frame that is not text (parsed already) still waits for those in the worker.
      this.inWorker += 1;
      this.queued(() => {
        this.inWorker -= 1;
        this.receive(data, fromSocket);
      });
    } else {
      this.receive(data, fromSocket);
    }
  }

  /**
   * Chains one frame's work on the queue. An error in it (a listener's, rendering the frame) is
   * reported as an uncaught error, as a frame applied at once would be, and the frames after it
   * still go: the queue never stays rejected (every later frame would wait for ever).
   */
  private queued(work: () => void | Promise<void>): void {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      reportError(error);
    });
  }

  start(): void {
    this.transport.start();
    this.timer ??= setInterval(() => {
      this.expire();
    }, EXPIRY_CHECK_MS);
  }

  /** Drops (and says) the actions not acknowledged within a minute. */
  expire(): void {
    const now = this.now();
    const expired = this.store.state.outbox.filter((item) => now - item.at > OUTBOX_MAX_AGE_MS);
    if (expired.length === 0) return;
    this.store.update((state) => {
      state.outbox = state.outbox.filter((item) => !expired.includes(item));
      noteDropped(state, expired, 'expired');
      addNotice(state, droppedNotice(expired, 'expired'));
    });
    this.save();
  }

  /**
   * Reads the stored outbox (once). Entries queued before it came after them; when a `hello`
   * was applied already (the page's preloaded one), they are sorted as that `hello` would have.
   */
  private restore(): void {
    if (this.restored) return;
    this.restored = true;
    // One stored by another version of the page that this one's protocol refuses is left out: it
    // could not be sent, and saying it was dropped reads its request.
    const restored = this.storage.load().filter((item) => validatePageFrame(item.frame).ok);
    if (restored.length === 0) return;
    const kept = this.store.update((state) => {
      let items = restored.filter((r) => !state.outbox.some((o) => o.id === r.id));
      if (state.instanceId !== null) {
        items = keepCurrent(state, items, state.instanceId, this.now());
      }
      state.outbox = [...items, ...state.outbox];
      return items;
    });
    if (kept.length !== restored.length) this.storage.save(this.store.state.outbox);
    if (this.greeted) for (const item of kept) this.sendFrame(item.frame);
  }

  private save(): void {
    if (!this.restored) {
      // Nothing of this page's own yet: what is stored stays there until it is read.
      if (this.store.state.outbox.length === 0) return;
      this.restore();
    }
    this.storage.save(this.store.state.outbox);
  }

  /** Handles one frame as the transport got it (`fromSocket` false: preloaded with the page). */
  receive(data: unknown, fromSocket = true): void {
    const checked = validateHostFrame(data);
    if (!checked.ok) {
      this.refuse(checked.error);
      return;
    }
    this.apply(checked.value, fromSocket);
  }

  /** Handles a text frame the worker checked. */
  private receiveChecked(text: string, result: { ok: true } | { ok: false; error: string }, fromSocket: boolean): void {
    if (!result.ok) {
      this.refuse(result.error);
      return;
    }
    this.apply(JSON.parse(text) as HostFrame, fromSocket);
  }

  private refuse(error: string): void {
    this.store.update((state) => {
      state.frames += 1;
      addError(state, error);
    });
  }

  private apply(frame: HostFrame, fromSocket: boolean): void {
    const body = frame.body;
    // A search's answer is the asker's alone: the store (and the page's render) never sees it.
    if (body.type === 'searchAnswer') {
      this.answered(body);
      return;
    }
    this.store.update((state) => {
      applyFrame(state, frame);
      if (body.type === 'hello') {
        // Entries meant for an Orbit that restarted since, or past their minute, are dropped and said.
        state.outbox = keepCurrent(state, state.outbox, body.instanceId, this.now());
      }
    });
    if (body.type === 'hello' || body.type === 'ack') this.save();
    // A preloaded `hello` greets no connection: actions wait for the socket's own.
    if (body.type === 'hello' && fromSocket) {
      this.greeted = true;
      // Everything not yet acknowledged goes again, with the same ids.
      for (const item of this.store.state.outbox) this.sendFrame(item.frame);
    }
  }

  /** Queues a request as an action and sends it if connected. */
  act(request: PageRequest): OutboxItem {
    const item = this.store.update((state) => queueAction(state, request, undefined, this.now()));
    this.save();
    if (this.greeted) this.sendFrame(item.frame);
    return item;
  }

  /** Asks the host to trust this workspace's folder. */
  trust(): OutboxItem {
    const item = this.store.update((state) => queueTrust(state, undefined, this.now()));
    this.save();
    if (this.greeted) this.sendFrame(item.frame);
    return item;
  }

  /**
   * Asks the workspace's file matcher over the channel (a `search` frame, answered by
   * `searchAnswer` with its id; the same matcher as `GET /w/<id>/search`). `null` when the
   * channel cannot carry it now (not connected and greeted): the caller asks `/search`. The
   * promise is rejected when the connection drops before the answer, or with the answer's
   * `error`.
   */
  search(q: string, limit: number): Promise<SearchMatch[]> | null {
    if (!this.greeted) return null;
    this.lastSearchId = this.lastSearchId >= 0xffffffff ? 1 : this.lastSearchId + 1;
    const id = this.lastSearchId;
    const frame = { type: 'search', id, q, limit };
    const checked = validatePageFrame(frame);
    if (!checked.ok) return Promise.reject(new Error(checked.error));
    if (!this.transport.send(checked.value)) return null;
    return new Promise((resolve, reject) => {
      this.searches.set(id, { resolve, reject });
    });
  }

  private answered(reply: SearchReply): void {
    const waiting = this.searches.get(reply.id);
    if (!waiting) return;
    this.searches.delete(reply.id);
    if (reply.error) waiting.reject(new Error(reply.error));
    else waiting.resolve(reply.matches);
  }

  /** The connection changed: searches still out get no answer. */
  private dropSearches(): void {
    const waiting = [...this.searches.values()];
    this.searches.clear();
    for (const w of waiting) w.reject(new ChannelDropped());
  }

  private sendFrame(frame: unknown): void {
    const checked = validatePageFrame(frame);
    if (!checked.ok) {
      this.store.update((state) => {
        addError(state, checked.error);
      });
      return;
    }
    this.transport.send(checked.value);
  }
}
