/**
 * The protocol's JSON Schema compiled once into plain functions (closures:
 * no `eval` or `new Function`, which the page's CSP forbids), so that a
 * frame is checked by direct calls instead of by an interpreter walking
 * the schema for every value. It knows the keywords the schema generated
 * from the Rust types uses (`type`, `const`, `enum`, `properties`,
 * `required`, `additionalProperties`, `items`, `minimum`, `maximum`,
 * `$ref`, `oneOf`, `anyOf`, `allOf`, `if`/`then`/`else`; `format`,
 * `description`, `title`, `default` say nothing to check) and refuses to
 * compile any other, so that a schema it does not understand is found by
 * the tests, not passed. A tagged union rewritten by `fastSchema` (every
 * branch an `if` on one property's constant) becomes a lookup of that
 * property's value. `test/validate.test.ts` checks that it accepts and
 * refuses exactly what the schema as written does. Written here rather
 * than taken from a package because it was measured faster on the page's
 * own frames: a 400-entry snapshot checked in 16 ms cold and 0.6 ms warm,
 * against 154 ms and 57 ms for `@cfworker/json-schema` (bench/README.md,
 * "Branch `start`"), the package the tests check it against.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Own properties only: a value's `toString` is not a field. */
const has = (v: Json, key: string): boolean => Object.prototype.hasOwnProperty.call(v, key);

/** Where a value failed, and why (the path from the checked value, innermost last). */
export interface Failure {
  path: (string | number)[];
  error: string;
}

/** A compiled schema: `null` when `value` holds. */
export type Check = (value: unknown) => Failure | null;

const IGNORED = new Set(['description', 'title', 'default', 'format', '$schema', 'examples', '$comment']);
const KNOWN = new Set([
  'type', 'const', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'minimum', 'maximum',
  '$ref', 'oneOf', 'anyOf', 'allOf', 'if', 'then', 'else', '$defs',
]);

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null': return value === null;
    case 'boolean': return typeof value === 'boolean';
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number';
    case 'integer': return typeof value === 'number' && Number.isInteger(value);
    case 'array': return Array.isArray(value);
    case 'object': return isObject(value);
    default: throw new Error(`the schema names an unknown type "${type}"`);
  }
}

/** JSON equality (`const`, `enum`). */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => has(b, k) && equal(a[k], b[k]));
  }
  return false;
}

const fail = (error: string): Failure => ({ path: [], error });

/**
 * All of `checks`, the first failure. The loops here are indexed (no `for...of`, no
 * destructuring): a page's first frames are checked by code V8 has not optimised yet, where an
 * array iterator per loop cost the 400-entry snapshot's check most of its time (a CPU profile).
 */
function every(checks: readonly Check[]): Check {
  return (v) => {
    for (let i = 0; i < checks.length; i += 1) {
      const failure = (checks[i] as Check)(v);
      if (failure) return failure;
    }
    return null;
  };
}
const within = (key: string | number, failure: Failure): Failure => {
  failure.path.unshift(key);
  return failure;
};

/** The checks of a schema's `$defs`, each compiled once (at its first use: references may be recursive). */
export class CompiledSchema {
  private readonly compiled = new Map<string, Check>();

  constructor(private readonly defs: Json) {}

  /** The check of `$defs/<name>`. */
  def(name: string): Check {
    const held = this.compiled.get(name);
    if (held) return held;
    const schema = this.defs[name];
    if (schema === undefined) throw new Error(`the schema has no definition "${name}"`);
    // Set before compiling, for recursive references.
    let check: Check = () => null;
    this.compiled.set(name, (value) => check(value));
    check = this.compile(schema);
    this.compiled.set(name, check);
    return check;
  }

  /** Compiles one schema node. */
  compile(schema: unknown): Check {
    if (schema === true) return () => null;
    if (schema === false) return () => fail('No value is allowed here.');
    if (!isObject(schema)) throw new Error('a schema must be an object or a boolean');
    for (const key of Object.keys(schema)) {
      if (!KNOWN.has(key) && !IGNORED.has(key)) throw new Error(`the schema uses "${key}", which the page's checker does not know`);
    }
    const checks: Check[] = [];
    const { type } = schema;
    if (typeof type === 'string') {
      if (type === 'object') checks.push((v) => (isObject(v) ? null : fail(`Instance type "${typeName(v)}" is invalid. Expected "object".`)));
      else if (type === 'string') checks.push((v) => (typeof v === 'string' ? null : fail(`Instance type "${typeName(v)}" is invalid. Expected "string".`)));
      else {
        hasType(null, type);
        checks.push((v) => (hasType(v, type) ? null : fail(`Instance type "${typeName(v)}" is invalid. Expected "${type}".`)));
      }
    } else if (Array.isArray(type)) {
      const types = type.map(String);
      for (const t of types) hasType(null, t);
      checks.push((v) => {
        for (let i = 0; i < types.length; i += 1) if (hasType(v, types[i] as string)) return null;
        return fail(`Instance type "${typeName(v)}" is invalid. Expected "${types.join('", "')}".`);
      });
    } else if (type !== undefined) throw new Error('a schema\'s "type" must be a string or a list');

    if ('const' in schema) {
      const want = schema.const;
      checks.push(typeof want === 'string' || typeof want === 'number' || typeof want === 'boolean' || want === null
        ? (v) => (v === want ? null : fail(`Instance does not match ${JSON.stringify(want)}.`))
        : (v) => (equal(v, want) ? null : fail(`Instance does not match ${JSON.stringify(want)}.`)));
    }
    if (Array.isArray(schema.enum)) {
      const values = schema.enum as unknown[];
      const simple = values.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' || x === null);
      const set = new Set(values);
      checks.push(simple
        ? (v) => (set.has(v) ? null : fail(`Instance does not match any of ${JSON.stringify(values)}.`))
        : (v) => (values.some((x) => equal(v, x)) ? null : fail(`Instance does not match any of ${JSON.stringify(values)}.`)));
    }
    if (typeof schema.minimum === 'number') {
      const min = schema.minimum;
      checks.push((v) => (typeof v !== 'number' || v >= min ? null : fail(`${v} is less than ${min}.`)));
    }
    if (typeof schema.maximum === 'number') {
      const max = schema.maximum;
      checks.push((v) => (typeof v !== 'number' || v <= max ? null : fail(`${v} is greater than ${max}.`)));
    }
    const objectCheck = this.objectCheck(schema);
    if (objectCheck) checks.push(objectCheck);
    if (schema.items !== undefined) {
      const item = this.compile(schema.items);
      checks.push((v) => {
        if (!Array.isArray(v)) return null;
        for (let i = 0; i < v.length; i += 1) {
          const failure = item(v[i]);
          if (failure) return within(i, failure);
        }
        return null;
      });
    }
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      if (!ref.startsWith('#/$defs/')) throw new Error(`the schema refers to "${ref}", outside its $defs`);
      const name = ref.slice('#/$defs/'.length);
      let target: Check | null = null;
      checks.push((v) => {
        target ??= this.def(name);
        return target(v);
      });
    }
    if (Array.isArray(schema.anyOf)) {
      const branches = schema.anyOf.map((b) => this.compile(b));
      checks.push((v) => {
        let first: Failure | null = null;
        for (let i = 0; i < branches.length; i += 1) {
          const failure = (branches[i] as Check)(v);
          if (!failure) return null;
          first ??= failure;
        }
        return first ?? fail('No branch of anyOf matched.');
      });
    }
    if (Array.isArray(schema.oneOf)) {
      const branches = schema.oneOf.map((b) => this.compile(b));
      checks.push((v) => {
        let matched = 0;
        let first: Failure | null = null;
        for (let i = 0; i < branches.length; i += 1) {
          const failure = (branches[i] as Check)(v);
          if (failure) first ??= failure;
          else matched += 1;
        }
        if (matched === 1) return null;
        return matched === 0 ? (first ?? fail('No branch of oneOf matched.')) : fail(`Instance matched ${matched} branches of oneOf; exactly one is allowed.`);
      });
    }
    if (Array.isArray(schema.allOf)) checks.push(this.allOfCheck(schema.allOf));
    if (schema.if !== undefined) {
      const test = this.compile(schema.if);
      const then = schema.then === undefined ? null : this.compile(schema.then);
      const otherwise = schema.else === undefined ? null : this.compile(schema.else);
      checks.push((v) => (test(v) === null ? (then ? then(v) : null) : (otherwise ? otherwise(v) : null)));
    }
    if (checks.length === 1 && checks[0]) return checks[0];
    return every(checks);
  }

  /** `properties`, `required`, `additionalProperties`: checked only on objects. */
  private objectCheck(schema: Json): Check | null {
    const properties = isObject(schema.properties) ? schema.properties : null;
    const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
    const additional = schema.additionalProperties;
    if (!properties && required.length === 0 && additional === undefined) return null;
    const keys = Object.keys(properties ?? {});
    const checks = keys.map((k) => this.compile(properties?.[k]));
    const known = new Set(keys);
    const extra = additional === undefined || additional === true ? null : this.compile(additional);
    const closed = additional === false;
    return (v) => {
      if (!isObject(v)) return null;
      for (let i = 0; i < required.length; i += 1) {
        const key = required[i] as string;
        if (!has(v, key)) return fail(`Instance does not have required property "${key}".`);
      }
      for (let i = 0; i < keys.length; i += 1) {
        const key = keys[i] as string;
        if (has(v, key)) {
          const failure = (checks[i] as Check)(v[key]);
          if (failure) return within(key, failure);
        }
      }
      if (extra) {
        const own = Object.keys(v);
        for (let i = 0; i < own.length; i += 1) {
          const key = own[i] as string;
          if (known.has(key)) continue;
          if (closed) return within(key, fail(`Property "${key}" does not match additional properties schema.`));
          const failure = extra(v[key]);
          if (failure) return within(key, failure);
        }
      }
      return null;
    };
  }

  /**
   * `allOf`; when every entry is `{if: {properties: {K: {const: C}}}, then: B}` on the same
   * K (a tagged union as `fastSchema` writes it), only the branch of the value's own tag
   * applies: the others' `if` fails, so their `then` says nothing.
   */
  private allOfCheck(all: unknown[]): Check {
    const tagged = all.map((entry) => {
      if (!isObject(entry) || Object.keys(entry).some((k) => k !== 'if' && k !== 'then') || !isObject(entry.if)) return null;
      const test = entry.if;
      if (Object.keys(test).length !== 1 || !isObject(test.properties)) return null;
      const keys = Object.keys(test.properties);
      const only = keys[0];
      if (keys.length !== 1 || only === undefined) return null;
      const prop = test.properties[only];
      if (!isObject(prop) || Object.keys(prop).length !== 1 || typeof prop.const !== 'string') return null;
      return { key: only, tag: prop.const, then: entry.then };
    });
    const first = tagged[0];
    if (first && tagged.every((t) => t !== null && t.key === first.key)) {
      const key = first.key;
      // Each tag's branches are compiled at the tag's first value, as a `$ref` is at its first
      // use: the page's first frames (its snapshot) use a few of the protocol's ~40 frame types,
      // and compiling all of them was most of the schema's cost at start-up (bench/README.md,
      // branch `ld2`). The tests check every tag against the schema as written.
      const byTag = new Map<string, unknown[]>();
      for (const t of tagged) {
        if (!t) continue;
        const list = byTag.get(t.tag) ?? [];
        list.push(t.then);
        byTag.set(t.tag, list);
      }
      const byTagCheck = new Map<string, Check>();
      const tagCheck = (tag: string): Check | undefined => {
        const held = byTagCheck.get(tag);
        if (held) return held;
        const branches = byTag.get(tag);
        if (!branches) return undefined;
        const list = branches.map((then): Check => (then === undefined ? () => null : this.compile(then)));
        const check = list.length === 1 && list[0] ? list[0] : every(list);
        byTagCheck.set(tag, check);
        return check;
      };
      return (v) => {
        if (!isObject(v)) return null;
        const tag = v[key];
        const check = typeof tag === 'string' ? tagCheck(tag) : undefined;
        return check ? check(v) : null;
      };
    }
    return every(all.map((s) => this.compile(s)));
  }
}

/** A failure's location as a JSON pointer from the checked value (`#/body/turns`). */
export function pointer(failure: Failure): string {
  return failure.path.length === 0 ? '#' : `#/${failure.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}
