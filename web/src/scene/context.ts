/**
 * The map's WebGL2 context attributes, in a module of their own so that the
 * page's entry can ask for the context early (`hud/deferred.ts`) without
 * the map's code: creating a context is a synchronous round trip to the GPU
 * process, which, on a software renderer, waits behind the raster of
 * whatever the page has painted by then (100 ms and more for the HUD's
 * first frame on SwiftShader). Asked for before the first paint, it costs
 * the context's creation only.
 */
export const GL_ATTRIBUTES: WebGLContextAttributes = {
  antialias: false,
  alpha: false,
  depth: false,
  stencil: false,
  preserveDrawingBuffer: false,
  powerPreference: 'high-performance',
};
