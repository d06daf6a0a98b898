/**
 * One relayed page connection (`orbit.page.*` on the control socket): what
 * a webview panel (or the extension's own watcher, for the status bar and
 * the notifications) holds instead of a WebSocket. The page's own frames
 * drive it: a `resume` connects (again), an `action` is acted on, a `trust`
 * is never relayed (VS Code's trust is the trust; the extension sends its
 * own). Frames and connection states go to `post`.
 */
import { ControlConnection, ControlError } from './control';

export type RelayState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface RelayEvents {
  /** Frames from Orbit, in order. */
  frames(frames: unknown[]): void;
  /** The connection's state, as the page's transport reports it. */
  state(state: RelayState, reason?: string): void;
  /** An MCP sign-in's address, for the system browser (never the page). */
  openExternal?(url: string): void;
}

export interface RelayOptions {
  socket: string;
  /** The workspace folder (absolute) or id. */
  workspace: string;
  /** Whether VS Code trusts the folder now. */
  trusted: () => boolean;
  events: RelayEvents;
  /** How long one long poll waits (ms). */
  pollMs?: number;
  /** Delays before a new connection (ms), by attempt. */
  backoff?: (attempt: number) => number;
  connection?: (socket: string) => ControlConnection;
}

/** The host's settings for the workspace (`orbit.page.settings`); `null` leaves Orbit's own. */
export interface HostSettings {
  path: string | null;
  extraArgs: string[] | null;
  model: string | null;
  effort: string | null;
  permissionMode: string | null;
}

/** What Orbit did with them. */
export interface SettingsApplied {
  reprobed: boolean;
  options: boolean;
  warnings: string[];
  agent: { available: boolean; message?: string | null };
}

interface Ack {
  id: string;
  ok: boolean;
  code: string | null;
  message: string | null;
  /** An MCP sign-in's address for the host (`orbit.page.act` only); never passed to the page. */
  openUrl?: string;
}

/** The largest map accepted from `orbit.page.map` (a 100k-file workspace's is about 11 MiB). */
export const MAX_MAP_BYTES = 256 * 1024 * 1024;

export class Relay {
  private conn: string | null = null;
  private workspaceId: string | null = null;
  private readonly poller: ControlConnection;
  private readonly actor: ControlConnection;
  private closed = false;
  private generation = 0;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private connectedOnce: (() => void) | null = null;
  private readonly connected: Promise<void>;

  constructor(private readonly options: RelayOptions) {
    const make = options.connection ?? ((path: string) => new ControlConnection(path));
    this.poller = make(options.socket);
    this.actor = make(options.socket);
    this.connected = new Promise((resolve) => {
      this.connectedOnce = resolve;
    });
  }

  /** Resolves once the first connection is up (or after `ms`, whichever is first). */
  whenConnected(ms: number): Promise<void> {
    return Promise.race([this.connected, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
  }

  /** Tells the page it may send `resume` (the page's transport opened). */
  start(): void {
    this.closed = false;
    this.options.events.state(this.attempt === 0 ? 'connecting' : 'reconnecting');
    this.options.events.state('open');
  }

  /** The workspace id, once connected. */
  get workspace(): string | null {
    return this.workspaceId;
  }

  /** A frame the page sent. */
  async fromPage(frame: unknown): Promise<void> {
    if (frame === null || typeof frame !== 'object') return;
    const f = frame as { type?: unknown; id?: unknown; instanceId?: unknown; lastSeq?: unknown };
    if (f.type === 'resume') {
      await this.connect(
        typeof f.instanceId === 'string' ? f.instanceId : null,
        typeof f.lastSeq === 'number' ? f.lastSeq : null,
      );
    } else if (f.type === 'trust') {
      this.ackToPage({
        id: String(f.id),
        ok: false,
        code: 'untrusted',
        message: 'In VS Code, trust the folder with "Workspaces: Manage Workspace Trust"; Orbit follows it',
      });
    } else if (f.type === 'action') {
      const { openUrl, ...ack } = await this.act(frame);
      if (typeof openUrl === 'string' && /^https?:\/\//i.test(openUrl)) this.options.events.openExternal?.(openUrl);
      this.ackToPage(ack);
    }
  }

  /** Acts as the extension itself (commands, settings, trust). */
  async act(frame: unknown): Promise<Ack> {
    const id = String((frame as { id?: unknown }).id ?? '');
    if (this.conn === null) {
      return { id, ok: false, code: 'not_connected', message: 'Orbit is not connected yet; try again' };
    }
    try {
      return (await this.actor.call('orbit.page.act', { conn: this.conn, frame })) as Ack;
    } catch (error) {
      const e = error as ControlError;
      return { id, ok: false, code: e.code ?? 'error', message: e.message };
    }
  }

  /** Gives Orbit the host's settings for this workspace; `null` when not connected. Rejects a {@link ControlError}. */
  async settings(settings: HostSettings): Promise<SettingsApplied | null> {
    if (this.conn === null) return null;
    return (await this.actor.call('orbit.page.settings', { conn: this.conn, settings: { ...settings } })) as SettingsApplied;
  }

  /**
   * Tells Orbit the absolute files VS Code's own dialog returned: this
   * page's prompts may name them (the page itself cannot add one).
   */
  async picked(paths: string[]): Promise<void> {
    if (this.conn === null || paths.length === 0) return;
    await this.actor.call('orbit.page.picked', { conn: this.conn, paths });
  }

  /**
   * The map's binary snapshot (what `GET /w/<id>/map` answers a browser),
   * read in chunks with `orbit.page.map`: the first call takes a snapshot
   * at offset 0, the next ones read on from it. Rejects a
   * {@link ControlError} (`not_connected` before the connection is up).
   */
  async map(): Promise<Uint8Array> {
    const conn = this.conn;
    if (conn === null) throw new ControlError('not_connected', 'Orbit is not connected yet; try again');
    let bytes: Uint8Array | null = null;
    let offset = 0;
    for (;;) {
      const answer = (await this.actor.call('orbit.page.map', { conn, offset })) as { total?: unknown; offset?: unknown; data?: unknown };
      const total = answer.total;
      if (typeof total !== 'number' || !Number.isInteger(total) || total < 0 || total > MAX_MAP_BYTES || answer.offset !== offset || typeof answer.data !== 'string') {
        throw new ControlError('bad_answer', 'orbit.page.map answered something else than a chunk of the map');
      }
      bytes ??= new Uint8Array(total);
      if (bytes.length !== total) throw new ControlError('bad_answer', 'the map changed size between two chunks');
      const chunk = Buffer.from(answer.data, 'base64');
      if (chunk.length === 0 && offset < total) throw new ControlError('bad_answer', 'orbit.page.map answered an empty chunk');
      if (offset + chunk.length > total) throw new ControlError('bad_answer', 'orbit.page.map answered past the map\'s end');
      bytes.set(chunk, offset);
      offset += chunk.length;
      if (offset === total) return bytes;
    }
  }

  /** VS Code's trust changed. */
  async trustChanged(): Promise<void> {
    if (this.conn === null) return;
    const trusted = this.options.trusted();
    await this.actor.call('orbit.page.trust', { conn: this.conn, trusted }).catch(() => undefined);
  }

  close(): void {
    this.closed = true;
    this.generation += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    const conn = this.conn;
    this.conn = null;
    if (conn !== null) {
      void this.actor
        .call('orbit.page.close', { conn })
        .catch(() => undefined)
        .finally(() => {
          this.actor.close();
        });
    } else {
      this.actor.close();
    }
    this.poller.close();
    this.options.events.state('closed');
  }

  private ackToPage(ack: Ack): void {
    this.options.events.frames([{ seq: null, body: { type: 'ack', ...ack } }]);
  }

  private async connect(instanceId: string | null, lastSeq: number | null): Promise<void> {
    const generation = ++this.generation;
    const old = this.conn;
    this.conn = null;
    if (old !== null) await this.actor.call('orbit.page.close', { conn: old }).catch(() => undefined);
    let answer: { conn: string; workspaceId: string; first: unknown[] };
    try {
      answer = (await this.actor.call('orbit.page.connect', {
        workspace: this.workspaceId ?? this.options.workspace,
        instanceId,
        lastSeq,
        trusted: this.options.trusted(),
      })) as typeof answer;
    } catch (error) {
      this.lost(generation, (error as Error).message);
      return;
    }
    if (generation !== this.generation || this.closed) {
      await this.actor.call('orbit.page.close', { conn: answer.conn }).catch(() => undefined);
      return;
    }
    this.attempt = 0;
    this.conn = answer.conn;
    this.workspaceId = answer.workspaceId;
    this.options.events.frames(answer.first);
    this.connectedOnce?.();
    void this.poll(generation, answer.conn);
  }

  private async poll(generation: number, conn: string): Promise<void> {
    const timeoutMs = this.options.pollMs ?? 20000;
    while (generation === this.generation && !this.closed) {
      let answer: { frames: unknown[]; ended: string | null };
      try {
        answer = (await this.poller.call('orbit.page.next', { conn, timeoutMs })) as typeof answer;
      } catch (error) {
        this.lost(generation, (error as Error).message);
        return;
      }
      if (generation !== this.generation) return;
      if (answer.frames.length > 0) this.options.events.frames(answer.frames);
      if (answer.ended !== null) {
        this.lost(generation, `the connection ended (${answer.ended})`);
        return;
      }
    }
  }

  /** The connection is gone: the page is told, and may resume shortly. */
  private lost(generation: number, reason: string): void {
    if (generation !== this.generation || this.closed) return;
    this.conn = null;
    this.options.events.state('reconnecting', reason);
    const delay = (this.options.backoff ?? defaultBackoff)(this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed && generation === this.generation) this.options.events.state('open');
    }, delay);
  }
}

function defaultBackoff(attempt: number): number {
  return Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
}
