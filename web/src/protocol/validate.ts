/**
 * The one place every incoming frame is checked against the protocol's
 * JSON Schema (`docs/page-protocol.schema.json`, generated from the Rust
 * types). A frame it refuses never reaches the store; the caller shows the
 * returned error visibly. `@cfworker/json-schema` interprets the schema
 * without `eval` or `new Function`, which the page's CSP forbids.
 */
import { Validator, type Schema } from '@cfworker/json-schema';
import schemaDocument from '../../../docs/page-protocol.schema.json';
import type { HostFrame, PageFrame, SearchAnswer } from './types';

type Result<T> = { ok: true; value: T } | { ok: false; error: string };

const defs = (schemaDocument as { $defs: Record<string, unknown> }).$defs;

function validatorFor(def: string): Validator {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: defs,
    $ref: `#/$defs/${def}`,
  } as unknown as Schema;
  return new Validator(schema, '2020-12', false);
}

const hostFrameValidator = validatorFor('HostFrame');
const pageFrameValidator = validatorFor('PageFrame');
const searchAnswerValidator = validatorFor('SearchAnswer');

/** A short reason: the deepest error's location and message. */
function describe(errors: readonly { instanceLocation: string; error: string }[]): string {
  const deepest = [...errors].sort(
    (a, b) => b.instanceLocation.length - a.instanceLocation.length,
  )[0];
  if (!deepest) return 'does not match the schema';
  return `${deepest.instanceLocation || '#'}: ${deepest.error}`;
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
  const result = hostFrameValidator.validate(value);
  if (!result.valid) {
    return {
      ok: false,
      error: `A "${typeOf(value)}" frame from Orbit does not match the protocol (${describe(result.errors)}); it was ignored.`,
    };
  }
  return { ok: true, value: value as HostFrame };
}

/** Validates the answer of `GET /w/<id>/search` (already parsed from JSON). */
export function validateSearchAnswer(value: unknown): Result<SearchAnswer> {
  const result = searchAnswerValidator.validate(value);
  if (!result.valid) return { ok: false, error: `the search answer does not match the protocol (${describe(result.errors)})` };
  return { ok: true, value: value as SearchAnswer };
}

/** Validates a frame the page is about to send (a bug in the page otherwise). */
export function validatePageFrame(value: unknown): Result<PageFrame> {
  const result = pageFrameValidator.validate(value);
  if (!result.valid) {
    return { ok: false, error: `The page built a frame Orbit would refuse (${describe(result.errors)}).` };
  }
  return { ok: true, value: value as PageFrame };
}
