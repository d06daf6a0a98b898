import type { ConnectionState, Transport } from '../src/protocol/transport';

/** A transport the test drives: it opens, drops and delivers frames when told. */
export class FakeTransport implements Transport {
  sent: unknown[] = [];
  private frame: ((d: unknown) => void)[] = [];
  private state: ((s: ConnectionState) => void)[] = [];
  open = false;
  send(frame: unknown): boolean {
    if (!this.open) return false;
    this.sent.push(frame);
    return true;
  }
  onFrame(l: (d: unknown) => void): void { this.frame.push(l); }
  onState(l: (s: ConnectionState) => void): void { this.state.push(l); }
  start(): void { this.setState('connecting'); }
  close(): void { this.setState('closed'); }
  setState(s: ConnectionState): void {
    this.open = s === 'open';
    for (const l of this.state) l(s);
  }
  deliver(frame: unknown): void { for (const l of this.frame) l(JSON.stringify(frame)); }
}
