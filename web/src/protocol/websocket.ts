import type { ConnectionState, Transport } from './transport';

/** Reconnect delays: from 250 ms doubling to 5 s, with up to 20 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
  return Math.round(base * (0.8 + 0.2 * random()));
}

/**
 * The socket's address as the transport opens it: `url` asking for batches (`batch=1`, set
 * unless the address says otherwise): a burst's frames come as one message, a JSON list
 * (docs/page-protocol.md, "Batches"), which the channel splits and handles in one task.
 */
export function batchedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.searchParams.has('batch')) return url;
  parsed.searchParams.set('batch', '1');
  return parsed.href;
}

/**
 * The page's WebSocket to `/ws?w=<workspace id>&batch=1`, reconnecting with backoff. A message
 * is a frame, or a batch of them (a JSON list), handed on as the text it is.
 */
export class WebSocketTransport implements Transport {
  private socket: WebSocket | null = null;
  private frameListeners: ((data: unknown) => void)[] = [];
  private stateListeners: ((state: ConnectionState) => void)[] = [];
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private everOpened = false;

  private readonly url: string;

  constructor(url: string) {
    this.url = batchedUrl(url);
  }

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
