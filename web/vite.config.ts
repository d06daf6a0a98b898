import { defineConfig } from 'vitest/config';

export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One small bundle; no inline scripts or styles (the page's CSP forbids them).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    fs: { allow: ['..'] },
  },
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.ts'],
  },
});
