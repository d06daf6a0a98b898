/**
 * The webview's HTML: the page's own build (`web/dist`, copied into the
 * extension as `page/` when it is packaged), its script and style loaded
 * through `asWebviewUri`, under a nonce Content-Security-Policy from
 * `default-src 'none'`. The webview opens no socket (`connect-src 'none'`).
 */
import { randomBytes } from 'node:crypto';

export function nonce(): string {
  return randomBytes(18).toString('base64url');
}

/** The Content-Security-Policy of the webview. */
export function contentSecurityPolicy(cspSource: string, scriptNonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${scriptNonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Rebuilds the page's `index.html` for the webview: the `/assets/...`
 * script and stylesheets become webview addresses (`asset` maps a path
 * under the page's folder to one), the script gets the nonce, and the CSP
 * comes first. Throws when the build has no module script.
 */
export function pageHtml(index: string, asset: (path: string) => string, cspSource: string, scriptNonce: string): string {
  const scripts = [...index.matchAll(/<script[^>]*\bsrc="\/?(assets\/[^"]+\.js)"[^>]*><\/script>/g)].map((m) => m[1] ?? '');
  const styles = [...index.matchAll(/<link[^>]*\bhref="\/?(assets\/[^"]+\.css)"[^>]*>/g)].map((m) => m[1] ?? '');
  if (scripts.length === 0) throw new Error("the page's build has no script (was web/dist copied into the extension?)");
  const attr = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(cspSource, scriptNonce))}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="dark light">',
    '<title>Orbit</title>',
    ...styles.map((s) => `<link rel="stylesheet" href="${attr(asset(s))}">`),
    ...scripts.map((s) => `<script type="module" nonce="${scriptNonce}" src="${attr(asset(s))}"></script>`),
    '</head>',
    '<body>',
    '<div id="app"></div>',
    '</body>',
    '</html>',
  ].join('\n');
}
