// Bundles the extension into one CommonJS file (the `vscode` module is the host's).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  outfile: 'dist/extension.js',
  sourcemap: false,
  minify: false,
  logLevel: 'warning',
});
