/**
 * The page inside a VS Code webview: no socket of its own. Frames go to the
 * extension host with `postMessage`, which relays them to the running Orbit
 * over its control socket (`orbit.page.*`), and come back the same way.
 * Selected at start-up when `acquireVsCodeApi` exists.
 *
 * Messages, both ways, are `{orbit: <kind>, ...}`:
 * - page → host: `ready` (once, at start), `frame` (`frame`: a `PageFrame`),
 *   `openFile` (`path`: a graph path, `line`), `pickFiles` (VS Code's
 *   own dialog; the extension tells Orbit the paths before answering);
 * - host → page: `state` (`state`: a {@link ConnectionState}, `reason`),
 *   `frames` (`frames`: `HostFrame`s, in order), `picked` (`paths`).
 */
import type { ConnectionState, Transport } from './transport';

/** What `acquireVsCodeApi()` gives a webview. */
export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

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
    const message = data as { orbit?: unknown; state?: unknown; frames?: unknown; paths?: unknown };
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
      default:
        break;
    }
  }
}
