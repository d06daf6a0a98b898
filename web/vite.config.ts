import { defineConfig } from 'vitest/config';

export default defineConfig({
  base: '/',
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
