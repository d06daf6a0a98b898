/**
 * The frame checker's worker: parses and validates each host frame (text)
 * against the protocol's schema off the main thread, so a big frame (a
 * 1 MB reply's node tree takes the schema validator hundreds of
 * milliseconds) never blocks the page. Answers `{n, ok, error}` in order;
 * the page parses an accepted frame again itself (cheap), so no big object
 * is cloned across.
 */
import { validateHostFrame } from './validate';

interface Request {
  n: number;
  text: string;
}

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<Request>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (event) => {
  const { n, text } = event.data;
  const result = validateHostFrame(text);
  scope.postMessage(result.ok ? { n, ok: true, error: null } : { n, ok: false, error: result.error });
};
