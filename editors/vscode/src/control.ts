/**
 * A client of Orbit's control socket (`docs/control-socket.md`): newline
 * JSON, one answer per request, in order. One `ControlConnection` keeps its
 * socket open and queues its calls; the relay uses one for its long poll
 * and another for the page's actions, so an action never waits on a poll.
 */
import * as net from 'node:net';

export class ControlError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ControlError';
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The largest answer line accepted (the server's own limit). */
const MAX_LINE = 1 << 20;

export class ControlConnection {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private buffer = '';
  private readonly pending: Pending[] = [];
  private nextId = 1;

  constructor(private readonly path: string) {}

  /** Calls `method`; resolves its `result`, rejects a {@link ControlError}. */
  async call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const socket = await this.open();
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      socket.write(`${JSON.stringify({ id: this.nextId++, method, params })}\n`);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
    this.connecting = null;
  }

  private open(): Promise<net.Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    this.connecting = new Promise((resolve, reject) => {
      const socket = net.createConnection(this.path);
      socket.setEncoding('utf8');
      socket.once('connect', () => {
        this.socket = socket;
        this.connecting = null;
        resolve(socket);
      });
      socket.on('data', (chunk: string) => {
        this.receive(chunk);
      });
      socket.on('error', (error: Error) => {
        this.connecting = null;
        reject(new ControlError('not_running', `no Orbit answers on ${this.path}: ${error.message}`));
      });
      socket.on('close', () => {
        if (this.socket === socket) this.socket = null;
        this.fail(new ControlError('closed', 'the control connection closed'));
      });
    });
    return this.connecting;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE && !this.buffer.includes('\n')) {
      this.fail(new ControlError('bad_answer', 'an answer over 1 MiB'));
      this.close();
      return;
    }
    let newline = this.buffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      this.answer(line);
      newline = this.buffer.indexOf('\n');
    }
  }

  private answer(line: string): void {
    const waiting = this.pending.shift();
    if (!waiting) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      waiting.reject(new ControlError('bad_answer', 'the answer is not JSON'));
      return;
    }
    const answer = parsed as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (answer.error) {
      waiting.reject(
        new ControlError(String(answer.error.code ?? 'error'), String(answer.error.message ?? 'refused')),
      );
    } else {
      waiting.resolve(answer.result);
    }
  }

  private fail(error: Error): void {
    this.buffer = '';
    for (const waiting of this.pending.splice(0)) waiting.reject(error);
  }
}
