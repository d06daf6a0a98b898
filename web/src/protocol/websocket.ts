import type { ConnectionState, Transport } from './transport';

/** Reconnect delays: from 250 ms doubling to 5 s, with up to 20 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
  return Math.round(base * (0.8 + 0.2 * random()));
}

/** The page's WebSocket to `/ws?w=<workspace id>`, reconnecting with backoff. */
export class WebSocketTransport implements Transport {
  private socket: WebSocket | null = null;
  private frameListeners: ((data: unknown) => void)[] = [];
  private stateListeners: ((state: ConnectionState) => void)[] = [];
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private everOpened = false;

  constructor(private readonly url: string) {}

  onFrame(listener: (data: unknown) => void): void {
    this.frameListeners.push(listener);
  }

  onState(listener: (state: ConnectionState) => void): void {
    this.stateListeners.push(listener);
  }

  start(): void {
    this.closed = false;
    this.connect();
  }

  send(frame: unknown): boolean {
    const socket = this.socket;
    if (socket?.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(frame));
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.socket?.close();
    this.setState('closed');
  }

  private setState(state: ConnectionState): void {
    for (const listener of this.stateListeners) listener(state);
  }

  private connect(): void {
    this.setState(this.everOpened ? 'reconnecting' : 'connecting');
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.attempt = 0;
      this.everOpened = true;
      this.setState('open');
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      for (const listener of this.frameListeners) listener(event.data);
    });
    socket.addEventListener('close', () => {
      if (this.socket === socket) this.socket = null;
      if (!this.closed) this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    this.everOpened = true;
    this.setState('reconnecting');
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.connect();
    }, delay);
  }
}
