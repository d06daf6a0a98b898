/**
 * The page inside a VS Code webview: no socket of its own. Frames go to the
 * extension host with `postMessage`, which relays them to the running Orbit
 * over its control socket (`orbit.page.*`), and come back the same way.
 * Selected at start-up when `acquireVsCodeApi` exists.
 *
 * Messages, both ways, are `{orbit: <kind>, ...}`:
 * - page → host: `ready` (once, at start), `frame` (`frame`: a `PageFrame`),
 *   `openFile` (`path`: a graph path, `line`), `pickFiles` (VS Code's
 *   own dialog; the extension tells Orbit the paths before answering),
 *   `map` (`id`: the map's snapshot, which a browser fetches from
 *   `GET /w/<id>/map`; the extension reads it with `orbit.page.map`);
 * - host → page: `state` (`state`: a {@link ConnectionState}, `reason`),
 *   `frames` (`frames`: `HostFrame`s, in order), `picked` (`paths`),
 *   `map` (`id`, and `bytes`: the snapshot, or `error`: why not).
 */
import type { ConnectionState, Transport } from './transport';

/** What `acquireVsCodeApi()` gives a webview. */
export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** How long the page waits for the map's bytes from the host. */
export const MAP_TIMEOUT_MS = 60000;

/** Where a message from the host arrives (the webview's `window`). */
export interface MessageSource {
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}

export class WebviewTransport implements Transport {
  private frameListeners: ((data: unknown) => void)[] = [];
  private stateListeners: ((state: ConnectionState) => void)[] = [];
  private pickListeners: ((paths: string[]) => void)[] = [];
  private waitingPicks: ((paths: string[]) => void)[] = [];
  private state: ConnectionState = 'connecting';
  private closed = false;
  private mapRequests = new Map<number, { resolve: (bytes: ArrayBuffer) => void; reject: (error: Error) => void }>();
  private nextMap = 1;

  constructor(
    private readonly api: VsCodeApi,
    source: MessageSource,
  ) {
    source.addEventListener('message', (event) => {
      this.receive(event.data);
    });
  }

  onFrame(listener: (data: unknown) => void): void {
    this.frameListeners.push(listener);
  }

  onState(listener: (state: ConnectionState) => void): void {
    this.stateListeners.push(listener);
  }

  /** Paths the host's own file dialog returned. */
  onPicked(listener: (paths: string[]) => void): void {
    this.pickListeners.push(listener);
  }

  start(): void {
    this.closed = false;
    this.api.postMessage({ orbit: 'ready' });
  }

  send(frame: unknown): boolean {
    if (this.state !== 'open' || this.closed) return false;
    this.api.postMessage({ orbit: 'frame', frame });
    return true;
  }

  /** Asks the host to open a graph file in an editor, at `line`. */
  openFile(path: string, line: number | null): void {
    this.api.postMessage({ orbit: 'openFile', path, line });
  }

  /**
   * Asks the host for files through its own dialog: the absolute paths it
   * returned (none when cancelled). Only those paths, told to Orbit by the
   * extension's own code, may go into a prompt as absolute files.
   */
  pickFiles(): Promise<string[]> {
    return new Promise((resolve) => {
      this.waitingPicks.push(resolve);
      this.api.postMessage({ orbit: 'pickFiles' });
    });
  }

  /**
   * The map's binary snapshot through the host (a webview has no route of
   * its own): what `GET /w/<id>/map` answers a browser. Rejects with the
   * host's reason, or after {@link MAP_TIMEOUT_MS} without an answer.
   */
  fetchMap(timeoutMs = MAP_TIMEOUT_MS): Promise<ArrayBuffer> {
    const id = this.nextMap++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.mapRequests.delete(id);
        reject(new Error(`the editor sent no map in ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.mapRequests.set(id, {
        resolve: (bytes) => { clearTimeout(timer); resolve(bytes); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
      this.api.postMessage({ orbit: 'map', id });
    });
  }

  close(): void {
    this.closed = true;
    this.setState('closed');
  }

  private setState(state: ConnectionState): void {
    this.state = state;
    for (const listener of this.stateListeners) listener(state);
  }

  private receive(data: unknown): void {
    if (this.closed || data === null || typeof data !== 'object') return;
    const message = data as { orbit?: unknown; state?: unknown; frames?: unknown; paths?: unknown; id?: unknown; bytes?: unknown; error?: unknown };
    switch (message.orbit) {
      case 'state':
        if (message.state === 'connecting' || message.state === 'open' || message.state === 'reconnecting' || message.state === 'closed') {
          this.setState(message.state);
        }
        break;
      case 'frames':
        if (Array.isArray(message.frames)) {
          for (const frame of message.frames) for (const listener of this.frameListeners) listener(frame);
        }
        break;
      case 'picked':
        if (Array.isArray(message.paths)) {
          const paths = message.paths.filter((p): p is string => typeof p === 'string');
          this.waitingPicks.shift()?.(paths);
          for (const listener of this.pickListeners) listener(paths);
        }
        break;
      case 'map':
        this.mapAnswer(message.id, message.bytes, message.error);
        break;
      default:
        break;
    }
  }

  private mapAnswer(id: unknown, bytes: unknown, error: unknown): void {
    const waiting = typeof id === 'number' ? this.mapRequests.get(id) : undefined;
    if (!waiting || typeof id !== 'number') return;
    this.mapRequests.delete(id);
    if (typeof error === 'string') waiting.reject(new Error(error));
    else if (bytes instanceof ArrayBuffer) waiting.resolve(bytes);
    // A view (what a typed array posted becomes) is copied to a buffer of
    // its own: the decoder reads aligned sections from offset 0.
    else if (ArrayBuffer.isView(bytes)) waiting.resolve(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice().buffer);
    else waiting.reject(new Error('the editor sent no map bytes'));
  }
}
