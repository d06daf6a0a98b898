/**
 * The protocol's schema rewritten for a fast check (`fastSchema`). It runs
 * where the page is built (`vite.config.ts` bundles the rewritten
 * definitions: the page does not rewrite the schema while it starts) and
 * in the tests, which check that the rewritten schema accepts exactly
 * what the schema as written does. No imports: the build's config loads it.
 */
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
