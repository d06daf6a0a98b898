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

/**
 * The id of the map's data block (`docs/page-protocol.md`, "The map in the
 * page"): a `<script type="application/octet-stream" id="orbit-map">` holding
 * the bytes `GET /w/<id>/map` would answer at that moment, in base64, when
 * they are small enough (the server's bound). The page then draws its map
 * from them in its entry's task, with no rendering opportunity between its
 * WebGL context's creation and the map's first draw.
 */
export const MAP_PRELOAD_ID = 'orbit-map';

/** The map's bytes from the page's HTML, or what is wrong with them (shown as a `/map` failure is). */
export type PreloadedMap = { ok: true; bytes: ArrayBuffer } | { ok: false; error: string };

/** `Uint8Array.fromBase64` (Chromium 140+, not yet in TypeScript's lib). */
type FromBase64 = (text: string) => Uint8Array;

/**
 * The bytes of `text` (base64, the standard alphabet, padded; ASCII
 * whitespace ignored). Throws on anything else.
 */
export function bytesFromBase64(text: string): ArrayBuffer {
  const native = (Uint8Array as unknown as { fromBase64?: FromBase64 }).fromBase64;
  let bytes: Uint8Array;
  if (native) {
    bytes = native(text);
  } else {
    const clean = text.replace(/[\t\n\f\r ]+/g, '');
    if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw new Error('not base64');
    const binary = atob(clean);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  }
  return bytes.buffer.byteLength === bytes.byteLength ? bytes.buffer as ArrayBuffer : bytes.slice().buffer;
}

/** The map's bytes `doc` carries (null when it carries none: the map is fetched); the block is removed once read. */
export function readPreloadedMap(doc: Document): PreloadedMap | null {
  const block = doc.getElementById(MAP_PRELOAD_ID);
  if (!block) return null;
  const text = block.textContent;
  block.remove();
  try {
    return { ok: true, bytes: bytesFromBase64(text) };
  } catch {
    return { ok: false, error: 'the map in the page is not base64' };
  }
}
