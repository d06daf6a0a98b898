// Packages the extension: the page's build (web/dist) copied in as `page/`,
// the bundle built, and `target/artifacts/vscode/orbit-code.vsix` written
// with @vscode/vsce.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(here, '../..');
const dist = join(repo, 'web/dist');
if (!existsSync(join(dist, 'index.html'))) {
  console.error('package: web/dist is missing: run ./scripts/build-web first');
  process.exit(1);
}
rmSync(join(here, 'page'), { recursive: true, force: true });
cpSync(dist, join(here, 'page'), { recursive: true });
execFileSync(process.execPath, [join(here, 'esbuild.mjs')], { cwd: here, stdio: 'inherit' });
const out = join(repo, 'target/artifacts/vscode');
mkdirSync(out, { recursive: true });
const vsix = join(out, 'orbit-code.vsix');
execFileSync(
  process.execPath,
  [join(here, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', vsix],
  { cwd: here, stdio: 'inherit' },
);
console.log(vsix);
