/**
 * A stand-in for the running Orbit's control socket, for the extension's
 * unit tests: a real Unix socket speaking the real framing, answering
 * `orbit.ping` and `orbit.page.*`, and recording every call. (The real
 * Orbit's relay is tested in crates/orbit/tests/it/page_relay.rs.)
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface Call { method: string; params: Record<string, unknown> }

export class FakeOrbit {
  readonly calls: Call[] = [];
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orbit-code-'));
  readonly socket = path.join(this.dir, 'run', 'control.sock');
  private server: net.Server | null = null;
  private queued: unknown[] = [];
  private ended: string | null = null;
  private wake: (() => void) | null = null;
  /** The frames each connect answers first. */
  first: unknown[] = [
    { seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: 'w1', head: 0, resumed: false } },
    { seq: null, body: { type: 'workspace', trusted: true, agent: { available: true } } },
    { seq: null, body: { type: 'snapshotEnd' } },
  ];
  /** A method answered `unknown_method` (an older Orbit). */
  refuse: string | null = null;
  /** The address a sign-in answers with. */
  signInUrl = 'https://auth.example.test/authorize?state=s1';
  /** The map `orbit.page.map` serves, and its chunk size. */
  map: Uint8Array = new Uint8Array(0);
  mapChunk = 4;
  /** The map of each connection, taken at offset 0. */
  private readonly maps = new Map<string, Uint8Array>();
  /** What `orbit.page.settings` answers as warnings. */
  settingsWarnings: string[] = [];
  private conns = 0;
  private readonly sockets = new Set<net.Socket>();

  async start(): Promise<void> {
    fs.mkdirSync(path.dirname(this.socket), { recursive: true, mode: 0o700 });
    this.server = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.setEncoding('utf8');
      let buffer = '';
      let chain = Promise.resolve();
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        let nl = buffer.indexOf('\n');
        while (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          chain = chain.then(async () => {
            const request = JSON.parse(line) as { id: number; method: string; params?: Record<string, unknown> };
            const answer = await this.answer(request.method, request.params ?? {});
            if (!socket.destroyed) socket.write(`${JSON.stringify({ id: request.id, ...answer })}\n`);
          });
          nl = buffer.indexOf('\n');
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => this.server?.listen(this.socket, resolve));
  }

  /** Frames the next `orbit.page.next` answers. */
  push(...frames: unknown[]): void {
    this.queued.push(...frames);
    this.wake?.();
  }

  /** The connection ends (`lagged`, `gone`) at the next poll. */
  end(why: string): void {
    this.ended = why;
    this.wake?.();
  }

  method(name: string): Call[] {
    return this.calls.filter((c) => c.method === name);
  }

  async until(check: () => boolean, ms = 3000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`never happened; calls: ${JSON.stringify(this.calls)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    this.wake?.();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => {
      if (!this.server) resolve();
      else this.server.close(() => { resolve(); });
    });
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private async answer(method: string, params: Record<string, unknown>): Promise<{ result?: unknown; error?: unknown }> {
    this.calls.push({ method, params });
    if (method === this.refuse) return { error: { code: 'unknown_method', message: method } };
    switch (method) {
      case 'orbit.ping':
        return { result: { version: 'test', pid: 1, instanceId: 'i1' } };
      case 'orbit.page.connect':
        this.conns += 1;
        this.ended = null;
        return { result: { conn: `r${this.conns}`, workspaceId: 'w1', first: this.first } };
      case 'orbit.page.next': {
        if (this.queued.length === 0 && this.ended === null) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(Number(params.timeoutMs ?? 0), 200));
            this.wake = () => { clearTimeout(timer); resolve(); };
          });
          this.wake = null;
        }
        const frames = this.queued.splice(0);
        const ended = this.ended;
        this.ended = null;
        return { result: { frames, ended } };
      }
      case 'orbit.page.act': {
        const frame = params.frame as { id: string; request?: { type?: string; action?: string } };
        // A sign-in's address comes to the host alone.
        const openUrl = frame.request?.type === 'mcpAction' && frame.request.action === 'signIn' ? { openUrl: this.signInUrl } : {};
        return { result: { id: frame.id, ok: true, code: null, message: null, ...openUrl } };
      }
      case 'orbit.page.settings':
        return { result: { reprobed: false, options: true, warnings: this.settingsWarnings, agent: { available: true } } };
      case 'orbit.page.picked':
        return { result: { picked: (params.paths as unknown[]).length } };
      case 'orbit.page.map': {
        // As Orbit does: a snapshot at offset 0, read on from it.
        const conn = String(params.conn);
        const offset = Number(params.offset);
        if (offset === 0) this.maps.set(conn, this.map);
        const held = this.maps.get(conn);
        if (!held) return { error: { code: 'not_found', message: 'no map taken at offset 0' } };
        if (!Number.isInteger(offset) || offset < 0 || offset > held.length) return { error: { code: 'invalid_params', message: '`offset` is past the map' } };
        const data = Buffer.from(held.subarray(offset, offset + this.mapChunk)).toString('base64');
        return { result: { total: held.length, offset, data } };
      }
      case 'orbit.page.trust':
      case 'orbit.page.close':
        return { result: {} };
      default:
        return { error: { code: 'unknown_method', message: method } };
    }
  }
}
