/**
 * The one interface the page talks to its host through: a WebSocket in a
 * browser ({@link WebSocketTransport}); a VS Code webview's `postMessage`
 * relay later. A transport carries text frames both ways and reports its
 * connection state; it knows nothing of what the frames say.
 */

/** Where the connection stands, as the page shows it. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface Transport {
  /** Sends one frame (an object, serialised by the transport). Returns false when not connected. */
  send(frame: unknown): boolean;
  /** Called with each frame received, as the transport got it (text, or an object from a relay). */
  onFrame(listener: (data: unknown) => void): void;
  /** Called whenever the connection state changes; `open` means the page must send `resume` now. */
  onState(listener: (state: ConnectionState) => void): void;
  /** Starts connecting (and reconnecting, until {@link Transport.close}). */
  start(): void;
  /** Closes for good. */
  close(): void;
}
