// A page of a running Orbit with another build of the page (a `web/dist`): the browser answers the
// page's HTML and its assets from the directory, the HTML's snapshot block (docs/page-protocol.md)
// kept as Orbit wrote it. Shared by bench/page/frame-cost.mjs (ORBIT_FRAME_COST_DIST) and
// bench/page/latency.mjs (ORBIT_LATENCY_DIST), so that a change to the page alone is measured
// without a release build of Orbit. Chromium then needs `--disable-features=LocalNetworkAccessChecks`
// (a page the browser answers is not from a local address for it, and its socket to 127.0.0.1 is
// blocked otherwise; nothing of the rendering changes with it): {@link DIST_ARGS}.
import { existsSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';

export const DIST_ARGS = ['--disable-features=LocalNetworkAccessChecks'];

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.json': 'application/json' };

/** Serves the page's build from `dist` to the Playwright page `p` (its HTML from Orbit, its asset tags the directory's). */
export async function serveBuild(p, dist) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const tags = html.match(/<(script type="module"|link rel="(stylesheet|modulepreload)")[^>]*>(<\/script>)?/g) ?? [];
  await p.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.startsWith('/assets/')) {
      const file = join(dist, normalize(url.pathname));
      if (file.startsWith(dist) && existsSync(file)) {
        return route.fulfill({ status: 200, headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }, body: readFileSync(file) });
      }
      return route.continue();
    }
    // The page's HTML (not the login's redirect, followed by the browser itself).
    if (route.request().resourceType() !== 'document' || !url.pathname.startsWith('/w/')) return route.continue();
    const response = await route.fetch();
    const body = await response.text();
    const own = body.replace(/<(script type="module"|link rel="(stylesheet|modulepreload)")[^>]*>(<\/script>)?\s*/g, '');
    const headers = { ...response.headers() };
    delete headers['content-length'];
    return route.fulfill({ status: response.status(), headers, body: own.replace('</head>', `${tags.join('\n')}\n</head>`) });
  });
}
