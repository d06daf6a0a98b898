// Builds the two baseline pages (minimal.html, sigma.html) into
// bench/scene/dist. `orbit-map-decoder` is the page's own decoder
// (web/src/scene/decode.ts); only while that file does not exist, the
// bench's stand-in (pages/standin-decode.ts), and dist/decoder.json says which.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const pageDecoder = resolve(here, '../../web/src/scene/decode.ts');
const decoder = existsSync(pageDecoder) ? pageDecoder : resolve(here, 'pages/standin-decode.ts');

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  resolve: { alias: { 'orbit-map-decoder': decoder } },
  build: {
    outDir: resolve(here, 'dist'),
    emptyOutDir: true,
    rollupOptions: { input: { minimal: resolve(here, 'minimal.html'), sigma: resolve(here, 'sigma.html') } },
  },
  plugins: [
    {
      name: 'decoder-note',
      writeBundle() {
        mkdirSync(resolve(here, 'dist'), { recursive: true });
        writeFileSync(
          resolve(here, 'dist/decoder.json'),
          JSON.stringify({ decoder: decoder === pageDecoder ? 'web/src/scene/decode.ts' : 'stand-in' }),
        );
      },
    },
  ],
});
