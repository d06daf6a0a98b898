// @vitest-environment node
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderBlockingEntry } from '../vite.config';

const root = join(import.meta.dirname, '..');

/** The plugin's HTML transform. */
function transform(html: string): string {
  const hook = renderBlockingEntry().transformIndexHtml;
  if (!hook || typeof hook === 'function' || !('handler' in hook)) throw new Error('the plugin has no ordered HTML transform');
  const handler = hook.handler as unknown as (html: string) => string;
  return handler(html);
}

describe('the entry script', () => {
  it('is render-blocking: no frame of the page is shown before the entry has run', () => {
    expect(transform('<head><script type="module" crossorigin src="/assets/index-abc.js"></script></head>'))
      .toBe('<head><script type="module" crossorigin blocking="render" src="/assets/index-abc.js"></script></head>');
  });

  it('a build whose entry tag it cannot find fails, rather than losing the attribute', () => {
    expect(() => transform('<head><script src="/assets/index-abc.js"></script></head>')).toThrow(/entry/);
  });

  it('the built page carries it (when built)', () => {
    const built = join(root, 'dist', 'index.html');
    if (!existsSync(built)) return;
    const tags = readFileSync(built, 'utf8').match(/<script\b[^>]*>/g) ?? [];
    expect(tags).toHaveLength(1);
    expect(tags[0]).toMatch(/\bblocking="render"/);
  });
});
