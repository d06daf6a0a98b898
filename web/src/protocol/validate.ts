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
import schemaDocument from '../../../docs/page-protocol.schema.json';
import type { HostFrame, PageFrame, SearchAnswer } from './types';

type Result<T> = { ok: true; value: T } | { ok: false; error: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The tag of a tagged-union branch: `properties[key].const`, required. */
function tagOf(branch: unknown, key: string): string | null {
  if (!isObject(branch) || !isObject(branch.properties) || !Array.isArray(branch.required) || !branch.required.includes(key)) return null;
  const prop = branch.properties[key];
  return isObject(prop) && typeof prop.const === 'string' ? prop.const : null;
}

/** A tagged union's key (`type`, `kind`, `t`): the one property every branch fixes to a distinct constant. */
function unionKey(branches: unknown[]): string | null {
  const first = branches[0];
  if (!isObject(first) || !isObject(first.properties)) return null;
  for (const key of Object.keys(first.properties)) {
    const tags = branches.map((b) => tagOf(b, key));
    if (tags.every((t) => t !== null) && new Set(tags).size === tags.length) return key;
  }
  return null;
}

/**
 * The same schema, faster to check: the interpreter checks every branch
 * of a `oneOf` (to see that exactly one matches), so a frame of 400
 * entries, each a union of 9 kinds over markdown nodes of 16, costs
 * hundreds of milliseconds. A union whose branches each fix one
 * property to a distinct constant (`type`, `kind`, `t`) becomes "that
 * property is one of the constants, and the branch it names holds"
 * (`if`/`then` per branch), which accepts exactly what the `oneOf` did;
 * a union of constant strings becomes an `enum`; an `anyOf` of `$ref`s
 * to such unions on the same key is merged into one.
 */
export function fastSchema(defs: Json): Json {
  const resolve = (v: unknown): unknown => {
    if (isObject(v) && typeof v.$ref === 'string' && Object.keys(v).every((k) => k === '$ref' || k === 'description')) {
      const name = v.$ref.startsWith('#/$defs/') ? v.$ref.slice(8) : null;
      return name === null ? v : defs[name];
    }
    return v;
  };
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = rewrite(v);
    // Only a bare union (a description beside it at most) is rewritten.
    if (!Object.keys(out).every((k) => ['oneOf', 'anyOf', 'description'].includes(k))) return out;
    for (const word of ['oneOf', 'anyOf'] as const) {
      const held = out[word];
      if (!Array.isArray(held) || held.length < 2) continue;
      let branches: unknown[] = held;
      // anyOf/oneOf of references to tagged unions: one union of all their branches.
      const inner = branches.map(resolve).map((b) => (isObject(b) && Array.isArray(b.oneOf) ? b.oneOf : null));
      if (inner.every((b) => b !== null)) {
        const merged = (inner as unknown[][]).flat();
        if (unionKey(merged) !== null) branches = merged.map(rewrite);
      }
      const key = unionKey(branches);
      if (key !== null) {
        const tags = branches.map((b) => tagOf(b, key));
        out[word] = undefined;
        out.type = 'object';
        out.required = [key];
        out.properties = { [key]: { type: 'string', enum: tags } };
        out.allOf = branches.map((b, i) => ({ if: { properties: { [key]: { const: tags[i] } } }, then: b }));
        continue;
      }
      const consts = branches.map((b) => (isObject(b) && typeof b.const === 'string' && Object.keys(b).every((k) => ['const', 'type', 'description'].includes(k)) ? b.const : null));
      if (word === 'oneOf' && consts.every((c) => c !== null) && new Set(consts).size === consts.length) {
        out[word] = undefined;
        out.type = 'string';
        out.enum = consts;
      }
    }
    // A union rewritten above is left as `undefined`: gone from the schema.
    return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
  };
  return rewrite(defs) as Json;
}

// The schema, rewritten and compiled once, on first use (`compiled.ts`; a frame is then checked by
// plain function calls).
let compiled: CompiledSchema | null = null;
function check(def: string): Check {
  compiled ??= new CompiledSchema(fastSchema((schemaDocument as { $defs: Json }).$defs));
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
  const failure = check('HostFrame')(value);
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
