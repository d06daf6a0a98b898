import { describe, expect, it, vi } from 'vitest';
import type { MdNode } from '../src/protocol/types';
import { lineOf, renderMarkdown } from '../src/hud/markdown';
import { allNodes } from './fixtures';

function render(nodes: MdNode[], openFile = vi.fn()): { root: HTMLElement; openFile: typeof openFile } {
  const root = document.createElement('div');
  root.appendChild(renderMarkdown(nodes, { openFile }));
  document.body.appendChild(root);
  return { root, openFile };
}

const para = (...children: MdNode[]): MdNode => ({ t: 'paragraph', children });

describe('renderMarkdown', () => {
  it('keeps HTML in a reply as text', () => {
    const html = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const { root } = render([para({ t: 'text', text: html }), { t: 'codeBlock', lang: null, text: html }, para({ t: 'code', text: html })]);
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('script')).toBeNull();
    expect(root.querySelector('p')?.textContent).toBe(html);
    expect(root.querySelector('pre code')?.textContent).toBe(html);
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });

  it('does not make a javascript: link clickable, even if marked external', () => {
    const { root } = render([
      para(
        { t: 'link', href: 'javascript:alert(1)', external: false, file: null, children: [{ t: 'text', text: 'one' }] },
        { t: 'link', href: 'javascript:alert(2)', external: true, file: null, children: [{ t: 'text', text: 'two' }] },
        { t: 'link', href: 'data:text/html,<b>x</b>', external: false, file: null, children: [{ t: 'text', text: 'three' }] },
      ),
    ]);
    expect(root.querySelectorAll('a')).toHaveLength(0);
    expect(root.textContent).toBe('onetwothree');
    expect(root.querySelector('[href^="javascript"]')).toBeNull();
  });

  it('opens external http, https and mailto links in a new tab without an opener', () => {
    const { root } = render([para({ t: 'link', href: 'https://example.com/a', external: true, file: null, children: [{ t: 'text', text: 'web' }] })]);
    const a = root.querySelector('a');
    expect(a?.getAttribute('href')).toBe('https://example.com/a');
    expect(a?.getAttribute('target')).toBe('_blank');
    expect(a?.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('a scheme-less file link opens the file panel at its line', () => {
    const { root, openFile } = render([para({ t: 'link', href: 'src/a.rs:12', external: false, file: 'src/a.rs', children: [{ t: 'text', text: 'a.rs' }] })]);
    const a = root.querySelector('a');
    expect(a).not.toBeNull();
    expect(a?.getAttribute('target')).toBeNull();
    a?.click();
    expect(openFile).toHaveBeenCalledWith('src/a.rs', 12);
  });

  it('an image arrives as a link and stays one', () => {
    const { root } = render([para({ t: 'link', href: 'https://example.com/cat.png', external: true, file: null, children: [{ t: 'text', text: 'a cat' }] })]);
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('a')?.textContent).toBe('a cat');
  });

  it('renders every node kind as its element', () => {
    const { root } = render(allNodes);
    for (const selector of ['h3', 'code', 'br', 'em', 'strong', 's', 'a', 'blockquote', 'pre', 'ul li', 'ol[start="3"] li input[type="checkbox"]', 'hr', 'table th', 'table td']) {
      expect(root.querySelector(selector), selector).not.toBeNull();
    }
  });
});

describe('lineOf', () => {
  it('reads :line, :line:col and #L line suffixes', () => {
    expect(lineOf('src/a.rs:12')).toBe(12);
    expect(lineOf('src/a.rs:12:4')).toBe(12);
    expect(lineOf('src/a.rs#L7')).toBe(7);
    expect(lineOf('src/a.rs')).toBeNull();
    expect(lineOf('src/a.rs:0')).toBeNull();
  });
});
