/**
 * The channel: the envelope, the resume, and the action ids. It sends
 * `resume` on every open, applies validated frames to the store, and
 * sends each queued action (again after a reconnect, with the same id)
 * until its `ack` arrives.
 */
import type { Transport } from './transport';
import { validateHostFrame, validatePageFrame } from './validate';
import type { PageRequest } from './types';
import {
  addError,
  applyFrame,
  queueAction,
  queueTrust,
  resumeFrame,
  type OutboxItem,
  type Store,
} from '../state/store';

export class Channel {
  /** Whether the current connection has had its `hello` (actions wait for it). */
  private greeted = false;

  constructor(
    private readonly transport: Transport,
    private readonly store: Store,
  ) {
    transport.onState((connection) => {
      this.greeted = false;
      store.update((state) => {
        state.connection = connection;
        if (connection === 'open') state.connects += 1;
      });
      if (connection === 'open') this.sendFrame(resumeFrame(store.state));
    });
    transport.onFrame((data) => {
      this.receive(data);
    });
  }

  start(): void {
    this.transport.start();
  }

  /** Handles one frame as the transport got it. */
  receive(data: unknown): void {
    const checked = validateHostFrame(data);
    if (!checked.ok) {
      this.store.update((state) => {
        state.frames += 1;
        addError(state, checked.error);
      });
      return;
    }
    const frame = checked.value;
    this.store.update((state) => applyFrame(state, frame));
    if (frame.body.type === 'hello') {
      this.greeted = true;
      // Everything not yet acknowledged goes again, with the same ids.
      for (const item of this.store.state.outbox) this.sendFrame(item.frame);
    }
  }

  /** Queues a request as an action and sends it if connected. */
  act(request: PageRequest): OutboxItem {
    const item = this.store.update((state) => queueAction(state, request));
    if (this.greeted) this.sendFrame(item.frame);
    return item;
  }

  /** Asks the host to trust this workspace's folder. */
  trust(): OutboxItem {
    const item = this.store.update((state) => queueTrust(state));
    if (this.greeted) this.sendFrame(item.frame);
    return item;
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
