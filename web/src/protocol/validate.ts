/**
 * The one place every incoming frame is checked against the protocol's
 * JSON Schema (`docs/page-protocol.schema.json`, generated from the Rust
 * types). A frame it refuses never reaches the store; the caller shows the
 * returned error visibly. The schema is compiled into closures once
 * (`compiled.ts`: no `eval` or `new Function`, which the page's CSP
 * forbids); the tests check its verdicts against `@cfworker/json-schema`
 * interpreting the schema as written.
 */
import { CompiledSchema, pointer, type Check, type Failure } from './compiled';
import fastDefs from 'virtual:orbit-fast-schema';
import type { HostFrame, PageFrame, SearchAnswer } from './types';

export { fastSchema } from './fastschema';

type Result<T> = { ok: true; value: T } | { ok: false; error: string };

// The schema, rewritten and compiled once, on first use (`compiled.ts`; a frame is then checked by
// plain function calls).
let compiled: CompiledSchema | null = null;
function check(def: string): Check {
  compiled ??= new CompiledSchema(fastDefs);
  return compiled.def(def);
}

/** A short reason: where the value failed and why. */
function describe(failure: Failure): string {
  return `${pointer(failure)}: ${failure.error}`;
}

function typeOf(value: unknown): string {
  if (value !== null && typeof value === 'object') {
    const body = (value as { body?: unknown }).body;
    if (body !== null && typeof body === 'object') {
      const type = (body as { type?: unknown }).type;
      if (typeof type === 'string') return type.slice(0, 40);
    }
  }
  return 'unknown';
}

/** Parses (when text) and validates one host frame. */
export function validateHostFrame(data: unknown): Result<HostFrame> {
  let value: unknown = data;
  if (typeof data === 'string') {
    try {
      value = JSON.parse(data);
    } catch {
      return { ok: false, error: 'A frame from Orbit is not JSON; it was ignored.' };
    }
  }
  let failure: Failure | null;
  try {
    failure = check('HostFrame')(value);
  } catch (error) {
    // A reply's markdown nested thousands deep (`>>>>…`) overflows the checker's recursion (and
    // would the renderer's): refused and said, as a frame that does not match, instead of
    // thrown (in the worker, that refused every frame being checked with it).
    if (!(error instanceof RangeError)) throw error;
    return { ok: false, error: `A "${typeOf(value)}" frame from Orbit is nested too deeply to be shown; it was ignored.` };
  }
  if (failure) {
    return {
      ok: false,
      error: `A "${typeOf(value)}" frame from Orbit does not match the protocol (${describe(failure)}); it was ignored.`,
    };
  }
  return { ok: true, value: value as HostFrame };
}

/** Validates the answer of `GET /w/<id>/search` (already parsed from JSON). */
export function validateSearchAnswer(value: unknown): Result<SearchAnswer> {
  const failure = check('SearchAnswer')(value);
  if (failure) return { ok: false, error: `the search answer does not match the protocol (${describe(failure)})` };
  return { ok: true, value: value as SearchAnswer };
}

/** Validates a frame the page is about to send (a bug in the page otherwise). */
export function validatePageFrame(value: unknown): Result<PageFrame> {
  const failure = check('PageFrame')(value);
  if (failure) {
    return { ok: false, error: `The page built a frame Orbit would refuse (${describe(failure)}).` };
  }
  return { ok: true, value: value as PageFrame };
}
