/**
 * The snapshot Orbit puts in the page's HTML (`docs/page-protocol.md`,
 * "The snapshot in the page"): a `<script type="application/json"
 * id="orbit-snapshot">` data block (never run: the CSP stays strict) holding
 * the frames a fresh connection's `resume` would get, so the page shows its
 * state without waiting for the socket. Each frame is checked like the
 * socket's (`Channel.preload`).
 */

/** The element's id. */
export const PRELOAD_ID = 'orbit-snapshot';

/**
 * A preloaded frame longer than this (characters) is checked in the frame
 * checker's worker. The worker is still starting when the page applies its
 * snapshot (its script, the schema; 150-250 ms on a busy 2-core machine),
 * while checking a 400-entry transcript (~115 KB) on the page's thread
 * takes ~10 ms, so only a bigger frame waits for the worker.
 */
export const PRELOAD_WORKER_FRAME_BYTES = 256 * 1024;

/**
 * The frames, parsed (a block no longer than {@link PRELOAD_WORKER_FRAME_BYTES}: no frame in it
 * can be, and the channel checks each as it is) or as text each (a bigger block: the channel
 * sends a long frame's text to the worker).
 */
export type Preloaded = { ok: true; frames: unknown[] } | { ok: false; error: string };

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
  // Parsed once: each frame as text again (and parsed again to be checked) only when one may be long.
  return { ok: true, frames: text.length > PRELOAD_WORKER_FRAME_BYTES ? value.map((frame) => JSON.stringify(frame)) : value };
}
