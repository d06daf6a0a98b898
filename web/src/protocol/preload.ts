/**
 * The snapshot Orbit puts in the page's HTML (`docs/page-protocol.md`,
 * "The snapshot in the page"): a `<script type="application/json"
 * id="orbit-snapshot">` data block (never run: the CSP stays strict) holding
 * the frames a fresh connection's `resume` would get, so the page shows its
 * state without waiting for the socket. Each frame is handed on as text and
 * checked like the socket's.
 */

/** The element's id. */
export const PRELOAD_ID = 'orbit-snapshot';

export type Preloaded = { ok: true; frames: string[] } | { ok: false; error: string };

/** The preloaded frames of `doc` (none when it carries no snapshot); the block is removed once read. */
export function readPreloaded(doc: Document): Preloaded {
  const block = doc.getElementById(PRELOAD_ID);
  if (!block) return { ok: true, frames: [] };
  const text = block.textContent;
  block.remove();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'The snapshot in the page is not JSON; the page waits for its connection instead.' };
  }
  if (!Array.isArray(value)) {
    return { ok: false, error: 'The snapshot in the page is not a list of frames; the page waits for its connection instead.' };
  }
  return { ok: true, frames: value.map((frame) => JSON.stringify(frame)) };
}
