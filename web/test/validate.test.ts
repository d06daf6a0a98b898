import { describe, expect, it } from 'vitest';
import { Validator } from '@cfworker/json-schema';
import schemaDocument from '../../docs/page-protocol.schema.json';
import { fastSchema, validateHostFrame, validatePageFrame } from '../src/protocol/validate';
import { CompiledSchema, pointer } from '../src/protocol/compiled';
import { frames, pageFrames } from './fixtures';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('validateHostFrame', () => {
  it('accepts a frame of every message kind, as objects and as text', () => {
    for (const frame of frames) {
      expect(validateHostFrame(frame), JSON.stringify(frame.body)).toMatchObject({ ok: true });
      expect(validateHostFrame(JSON.stringify(frame))).toMatchObject({ ok: true });
    }
  });

  it('refuses text that is not JSON', () => {
    const result = validateHostFrame('{"seq":');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain('not JSON');
  });

  it('refuses a field of the wrong type', () => {
    const frame = clone(frames[5]) as unknown as { body: { turns: unknown } };
    frame.body.turns = 'three';
    const result = validateHostFrame(frame);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/"session" frame/);
  });

  it('refuses a missing required field', () => {
    const frame = clone(frames[6]) as unknown as { body: Record<string, unknown> };
    delete frame.body.entries;
    expect(validateHostFrame(frame).ok).toBe(false);
  });

  it('refuses an unknown message type and a negative seq', () => {
    expect(validateHostFrame({ seq: 1, body: { type: 'surprise' } }).ok).toBe(false);
    expect(validateHostFrame({ seq: -1, body: { type: 'snapshotEnd' } }).ok).toBe(false);
  });

  it('refuses a markdown node of an unknown kind (no HTML node can slip through)', () => {
    const frame = clone(frames[6]) as unknown as { body: { entries: { body: { nodes?: unknown[] } }[] } };
    const reply = frame.body.entries[1];
    if (!reply) throw new Error('fixture');
    reply.body.nodes = [{ t: 'html', text: '<script>alert(1)</script>' }];
    expect(validateHostFrame(frame).ok).toBe(false);
  });

  it('refuses a reply nested deeper than it can check (thousands of `>`), said, not thrown; a deep one it can check passes', () => {
    const nested = (depth: number): unknown => {
      let node: unknown = { t: 'paragraph', children: [{ t: 'text', text: 'x' }] };
      for (let i = 0; i < depth; i += 1) node = { t: 'quote', children: [node] };
      return { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [{ seq: 1, turn: 1, subagent: null, body: { kind: 'reply', messageId: 'm', nodes: [node] } }] } };
    };
    expect(validateHostFrame(nested(100)).ok).toBe(true);
    const deep = validateHostFrame(nested(20000));
    expect(deep.ok).toBe(false);
    if (!deep.ok) expect(deep.error).toBe('A "transcript" frame from Orbit is nested too deeply to be shown; it was ignored.');
  });

  it('refuses a card with a wrong kind', () => {
    const frame = clone(frames[5]) as unknown as { body: { pending: { kind: string }[] } };
    const card = frame.body.pending[0];
    if (!card) throw new Error('fixture');
    card.kind = 'bribe';
    expect(validateHostFrame(frame).ok).toBe(false);
  });
});

describe('validatePageFrame', () => {
  it('accepts what the page sends', () => {
    for (const frame of pageFrames) expect(validatePageFrame(frame), JSON.stringify(frame)).toMatchObject({ ok: true });
  });

  it('refuses an extra field where the protocol forbids one', () => {
    expect(validatePageFrame({ type: 'resume', instanceId: null, lastSeq: null, extra: 1 }).ok).toBe(false);
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'stopAll', all: true } }).ok).toBe(false);
  });

  it('refuses a wrong choice, a missing key and a wrong type', () => {
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'answerPermission', key: 'c1', requestId: 'r', choice: 'yes' } }).ok).toBe(false);
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'stop' } }).ok).toBe(false);
    expect(validatePageFrame({ type: 'trust', id: 7 }).ok).toBe(false);
  });
});

describe('fastSchema', () => {
  const defs = (schemaDocument as { $defs: Record<string, unknown> }).$defs;
  const slow = (def: string) => new Validator({ $defs: defs, $ref: `#/$defs/${def}` }, '2020-12', false);
  const fast = (def: string) => new Validator({ $defs: fastSchema(defs), $ref: `#/$defs/${def}` }, '2020-12', false);

  it('leaves no tagged union or union of constants as a oneOf', () => {
    const left: string[] = [];
    const walk = (v: unknown, at: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => { walk(x, `${at}/${i}`); });
      else if (v !== null && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'oneOf') left.push(at);
          walk(x, `${at}/${k}`);
        }
      }
    };
    walk(fastSchema(defs), '#');
    expect(left).toEqual([]);
  });

  it('accepts and refuses exactly what the schema as written does', () => {
    const host = [slow('HostFrame'), fast('HostFrame')] as const;
    const page = [slow('PageFrame'), fast('PageFrame')] as const;
    const cases: unknown[] = [];
    for (const frame of frames) {
      cases.push(frame);
      // Each string field in turn made a number, each `type`/`kind`/`t` an unknown one, each object given an extra field.
      const text = JSON.stringify(frame);
      const paths: (string | number)[][] = [];
      const walk = (v: unknown, at: (string | number)[]): void => {
        if (Array.isArray(v)) v.forEach((x, i) => { walk(x, [...at, i]); });
        else if (v !== null && typeof v === 'object') {
          paths.push(at);
          for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
        } else paths.push(at);
      };
      walk(frame, []);
      // At most 60 places per frame, spread over it.
      const step = Math.max(1, Math.ceil(paths.length / 60));
      for (const path of paths.filter((_, i) => i % step === 0)) {
        for (const mutate of [
          (v: unknown) => (typeof v === 'string' ? 7 : typeof v === 'number' ? 'seven' : v),
          (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, zzExtra: 1 } : v),
          (v: unknown) => (typeof v === 'string' ? 'surprise' : v),
        ]) {
          const copy = JSON.parse(text) as unknown;
          if (path.length === 0) {
            cases.push(mutate(copy));
            continue;
          }
          let parent = copy as Record<string | number, unknown>;
          for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
          const last = path[path.length - 1] as string | number;
          parent[last] = mutate(parent[last]);
          cases.push(copy);
        }
      }
    }
    // The page's own checker: the rewritten schema compiled into closures.
    const compiled = new CompiledSchema(fastSchema(defs));
    let refused = 0;
    for (const c of cases) {
      const want = host[0].validate(c).valid;
      expect(host[1].validate(c).valid, JSON.stringify(c).slice(0, 300)).toBe(want);
      expect(compiled.def('HostFrame')(c) === null, JSON.stringify(c).slice(0, 300)).toBe(want);
      if (!want) refused += 1;
    }
    expect(refused).toBeGreaterThan(100);
    for (const frame of pageFrames) {
      expect(page[1].validate(frame).valid).toBe(page[0].validate(frame).valid);
      expect(compiled.def('PageFrame')(frame) === null).toBe(page[0].validate(frame).valid);
    }
  }, 60_000);
});

describe('the compiled schema', () => {
  it('refuses to compile a keyword it does not know, a type it does not know and a reference outside $defs', () => {
    expect(() => new CompiledSchema({ A: { type: 'string', pattern: '^a' } }).def('A')).toThrow(/pattern/);
    expect(() => new CompiledSchema({ A: { type: 'text' } }).def('A')).toThrow(/unknown type/);
    expect(() => new CompiledSchema({ A: { $ref: 'https://example.com/s.json' } }).def('A')).toThrow(/outside/);
  });

  it('compiles a tagged union\'s branch at its tag\'s first value, and checks it as written then', () => {
    const branch = (type: string, then: unknown) => ({ if: { properties: { type: { const: type } } }, then });
    const schema = new CompiledSchema({
      Frame: {
        type: 'object',
        required: ['type'],
        allOf: [
          branch('a', { properties: { n: { type: 'integer' } } }),
          // A keyword the checker does not know: found when a `b` is checked, not before.
          branch('b', { properties: { s: { type: 'string', pattern: '^x' } } }),
        ],
      },
    });
    const frame = schema.def('Frame');
    expect(frame({ type: 'a', n: 1 })).toBeNull();
    expect(frame({ type: 'a', n: 'one' })?.path).toEqual(['n']);
    expect(frame({ type: 'c' })).toBeNull();
    expect(() => frame({ type: 'b', s: 'x' })).toThrow(/pattern/);
  });

  it('says where a value failed and why', () => {
    const schema = new CompiledSchema({
      A: { type: 'object', required: ['list'], properties: { list: { type: 'array', items: { $ref: '#/$defs/B' } } }, additionalProperties: false },
      B: { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } },
    });
    const a = schema.def('A');
    expect(a({ list: [{ n: 1 }, { n: 2 }] })).toBeNull();
    const failure = a({ list: [{ n: 1 }, { n: -2 }] });
    expect(failure && pointer(failure)).toBe('#/list/1/n');
    expect(failure?.error).toMatch(/less than 0/);
    expect(a({ list: [], more: 1 })?.path).toEqual(['more']);
    expect(a({})?.error).toMatch(/required property "list"/);
    // Inherited properties are not fields.
    expect(a(Object.create({ list: [] }))?.error).toMatch(/required property "list"/);
    expect(schema.def('B')({ n: 1.5 })?.error).toMatch(/Expected "integer"/);
  });

  it('checks recursive definitions and exactly-one unions', () => {
    const schema = new CompiledSchema({
      Tree: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/Tree' } } }, additionalProperties: false },
      One: { oneOf: [{ type: 'integer' }, { type: 'number' }] },
    });
    expect(schema.def('Tree')({ kids: [{ kids: [{}] }] })).toBeNull();
    expect(pointer(schema.def('Tree')({ kids: [{ kids: [{ x: 1 }] }] }) ?? { path: [], error: '' })).toBe('#/kids/0/kids/0/x');
    expect(schema.def('One')(1.5)).toBeNull();
    expect(schema.def('One')(2)?.error).toMatch(/matched 2 branches/);
  });
});
