import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryBlocksRendering } from '../src/entryhtml';

const root = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('what the strict CSP needs', () => {
  it('index.html has no inline script or style', () => {
    const html = readFileSync(join(root, 'index.html'), 'utf8');
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/\bsrc=/);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('the page code builds no HTML and sets no style attribute, eval or Function', () => {
    for (const file of sources(join(root, 'src'))) {
      if (file.endsWith('types.ts')) continue;
      // Comments may name what the code must not do.
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['"]style['"]|DOMParser|createContextualFragment/);
    }
  });
});

describe('the built page', () => {
  it('its entry blocks rendering until it has run (no frame of the empty page before the map\'s)', () => {
    const built = '<head><script type="module" crossorigin src="/assets/index-x.js"></script><link rel="stylesheet" href="/assets/s.css"></head>';
    expect(entryBlocksRendering(built)).toBe('<head><script type="module" blocking="render" crossorigin src="/assets/index-x.js"></script><link rel="stylesheet" href="/assets/s.css"></head>');
    expect(entryBlocksRendering(entryBlocksRendering(built))).toBe(entryBlocksRendering(built));
  });
});
