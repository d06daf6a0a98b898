import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';
import { fastSchema } from './src/protocol/fastschema.ts';
import { entryBlocksRendering } from './src/entryhtml.ts';

const prose = new Set(['description', 'title', 'default', 'examples']);
/** A schema without its `description`s, `title`s and `default`s: they say nothing the checker uses, and are most of its bytes. */
function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (prose.has(k)) continue;
    // Names (of properties, of definitions) stay whatever they are; values to compare stay whole.
    if ((k === 'properties' || k === '$defs') && v !== null && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, s]) => [name, strip(s)]));
    } else out[k] = k === 'const' || k === 'enum' ? v : strip(v);
  }
  return out;
}

/** The protocol's schema as the page needs it (without its prose). */
function schemaWithoutProse(): Plugin {
  return {
    name: 'orbit-schema-without-prose',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('page-protocol.schema.json')) return null;
      return { code: JSON.stringify(strip(JSON.parse(code))), map: null };
    },
  };
}

/**
 * `virtual:orbit-fast-schema`: the schema's definitions as the page's
 * checker uses them, without prose and rewritten by `fastSchema` here, at
 * build time (rewriting them in the page cost its start a few
 * milliseconds); the tests check the rewrite against the schema as written.
 */
function fastSchemaDefs(): Plugin {
  const id = 'virtual:orbit-fast-schema';
  const file = fileURLToPath(new URL('../docs/page-protocol.schema.json', import.meta.url));
  return {
    name: 'orbit-fast-schema',
    resolveId(source) {
      return source === id ? `\0${id}` : null;
    },
    load(resolved) {
      if (resolved !== `\0${id}`) return null;
      this.addWatchFile(file);
      const schema = strip(JSON.parse(readFileSync(file, 'utf8'))) as { $defs: Record<string, unknown> };
      return `export default JSON.parse(${JSON.stringify(JSON.stringify(fastSchema(schema.$defs)))});`;
    },
  };
}

export default defineConfig({
  base: '/',
  plugins: [
    schemaWithoutProse(),
    fastSchemaDefs(),
    { name: 'orbit-entry-blocks-rendering', apply: 'build', transformIndexHtml: { order: 'post', handler: entryBlocksRendering } },
  ],
  // The frame checker's worker checks with the same definitions.
  worker: { plugins: () => [schemaWithoutProse(), fastSchemaDefs()] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or styles (the page's CSP forbids them). A small entry and chunks it
    // imports with `import()` (the map's at once, the rest after the first frame: src/hud/later.ts):
    // plain relative imports, so that they load wherever the page is served from (a VS Code
    // webview too); one stylesheet for the whole page, linked from index.html.
    assetsInlineLimit: 0,
    modulePreload: false,
    cssCodeSplit: false,
    rolldownOptions: {
      // The service worker is its own entry, at a fixed name: Orbit serves it at `/w/<id>/sw.js`.
      input: { index: 'index.html', sw: 'src/sw.ts' },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  server: {
    fs: { allow: ['..'] },
  },
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.ts'],
  },
});
