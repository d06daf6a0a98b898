import { describe, expect, it } from 'vitest';
import { Channel } from '../src/protocol/channel';
import type { ConnectionState, Transport } from '../src/protocol/transport';
import { Store } from '../src/state/store';
import { workspace } from './fixtures';

class FakeTransport implements Transport {
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

const hello = (resumed: boolean, head: number) => ({ seq: null, body: { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head, resumed } });

describe('Channel', () => {
  it('resumes on every open and resends unacknowledged actions with the same id', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: null, lastSeq: null }]);
    transport.deliver(hello(false, 5));
    transport.deliver({ seq: null, body: { type: 'snapshotEnd' } });
    const item = channel.act({ type: 'stopAll' });
    expect(transport.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    // The socket drops before the ack.
    transport.setState('reconnecting');
    expect(store.state.connection).toBe('reconnecting');
    transport.sent = [];
    transport.setState('open');
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: 'i1', lastSeq: 5 }]);
    expect(store.state.connects).toBe(2);
    transport.deliver(hello(true, 5));
    expect(transport.sent.at(-1)).toEqual({ type: 'action', id: item.id, request: { type: 'stopAll' } });
    transport.deliver({ seq: null, body: { type: 'ack', id: item.id, ok: true, code: null, message: null } });
    expect(store.state.outbox).toEqual([]);
  });

  it('an action made while disconnected waits for the hello', () => {
    const transport = new FakeTransport();
    const store = new Store();
    const channel = new Channel(transport, store);
    channel.start();
    const item = channel.trust();
    expect(transport.sent).toEqual([]);
    transport.setState('open');
    transport.deliver(hello(false, 0));
    expect(transport.sent).toEqual([{ type: 'resume', instanceId: null, lastSeq: null }, { type: 'trust', id: item.id }]);
  });

  it('a frame that does not match the protocol is refused visibly and changes nothing', () => {
    const transport = new FakeTransport();
    const store = new Store();
    new Channel(transport, store).start();
    transport.setState('open');
    transport.deliver({ seq: 1, body: { type: 'session', key: 'c1' } });
    expect(store.state.errors).toHaveLength(1);
    expect(store.state.errors[0]).toContain('"session" frame');
    expect(store.state.notices.at(-1)?.text).toContain('does not match the protocol');
    expect(store.state.sessions).toEqual({});
    expect(store.state.lastSeq).toBeNull();
  });
});
