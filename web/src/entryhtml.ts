/** Build time only (`vite.config.ts`): not part of the page. */
/**
 * `html` with its first module script (the page's entry) marked
 * `blocking="render"`: the browser presents no frame of the page before the
 * entry has run. Without it a frame of the empty page (its background) was
 * presented between the HTML's parse and the entry, before the map's first
 * frame (bench/README.md, branch `ff4`: 171.7 vs 213.6 ms at 1k). Vite drops
 * the attribute from `index.html`, so it is put back in the built page.
 */
export function entryBlocksRendering(html: string): string {
  return html.replace(/<script type="module"(?=[^>]*\ssrc=)(?![^>]*\sblocking=)/, '<script type="module" blocking="render"');
}
