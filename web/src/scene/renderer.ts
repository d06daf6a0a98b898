/**
 * The map's WebGL2 renderer: folder outlines and imports as lines (bundled
 * imports as quads, their width and alpha by count), files as `gl.POINTS`
 * with a round shader, coloured by language. No instanced drawing (on
 * SwiftShader an instance costs about 15 µs against 0.9 µs a point). It
 * draws when asked and never on its own; the scene decides when.
 */
import type { Camera } from './camera';
import { FADE_MS, type MapModel, type Rect } from './model';
import { LANGUAGE_COLOURS } from './languages';
import { bundleDepth, bundleEdges, depthOf, fileEdgesInView, fileLevel, type Bundle } from './lod';
import { viewRect } from './camera';

const POINT_VS = `#version 300 es
precision highp float;
layout(location = 0) in vec2 a_pos;
layout(location = 1) in float a_lang;
layout(location = 2) in float a_fade;
uniform vec4 u_view;      // camera x, y; scale x, y (clip units per world unit)
uniform float u_size;     // point diameter, device px
uniform float u_time;     // ms since the renderer's epoch
uniform vec3 u_palette[17];
out vec4 v_colour;
void main() {
  vec2 p = (a_pos - u_view.xy) * u_view.zw;
  gl_Position = vec4(p.x, -p.y, 0.0, 1.0);
  float alpha = 1.0;
  if (a_fade > 0.0) alpha = clamp((u_time - a_fade) / ${FADE_MS.toFixed(1)}, 0.0, 1.0);
  else if (a_fade < 0.0) alpha = 1.0 - clamp((u_time + a_fade) / ${FADE_MS.toFixed(1)}, 0.0, 1.0);
  gl_PointSize = u_size * (0.6 + 0.4 * alpha);
  v_colour = vec4(u_palette[int(a_lang)], alpha);
}`;

const POINT_FS = `#version 300 es
precision mediump float;
in vec4 v_colour;
out vec4 outColour;
void main() {
  vec2 d = gl_PointCoord - vec2(0.5);
  float r = length(d) * 2.0;
  float edge = 1.0 - smoothstep(0.8, 1.0, r);
  if (edge <= 0.0) discard;
  outColour = vec4(v_colour.rgb, v_colour.a * edge);
}`;

const LINE_VS = `#version 300 es
precision highp float;
layout(location = 0) in vec2 a_pos;
layout(location = 1) in float a_alpha;
layout(location = 2) in vec2 a_offset; // CSS px across the line (a wide bundle's quad); 0 otherwise
uniform vec4 u_view;
uniform vec2 u_px;        // clip units per CSS px
out float v_alpha;
void main() {
  vec2 p = (a_pos - u_view.xy) * u_view.zw + a_offset * u_px;
  gl_Position = vec4(p.x, -p.y, 0.0, 1.0);
  v_alpha = a_alpha;
}`;

const LINE_FS = `#version 300 es
precision mediump float;
in float v_alpha;
uniform vec3 u_colour;
out vec4 outColour;
void main() { outColour = vec4(u_colour, v_alpha); }`;

/** A folder outline whose larger side is under this many CSS px on screen is not drawn (it would be a dot). */
export const MIN_OUTLINE_PX = 3;

/** How many of `sizes` (descending) are at least `min`. */
export function visibleOutlines(sizes: Float32Array, min: number): number {
  let lo = 0;
  let hi = sizes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sizes[mid] ?? 0) >= min) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The strongest bundles drawn as quads (width by count); the others are 1-px lines (a wide quad across the view costs fill on SwiftShader). */
export const WIDE_BUNDLES = 60;

export class WebGLUnavailable extends Error {}

interface Layer {
  vao: WebGLVertexArrayObject;
  buffers: WebGLBuffer[];
  count: number;
}

export interface Theme {
  background: [number, number, number];
  edge: [number, number, number];
  outline: [number, number, number];
}

export interface DrawStats {
  points: number;
  lines: number;
  bundled: boolean;
  depth: number;
}

/**
 * Compiles and links programs, all of them before any status is asked: a
 * status query is a round trip to the GPU process (busy drawing the page's
 * frames while it starts), so the shaders' statuses are read only when a
 * link failed, for its message, and each program's link status once, after
 * every program has been handed over (a driver with
 * `KHR_parallel_shader_compile` compiles them meanwhile).
 */
export function compilePrograms(gl: WebGL2RenderingContext, sources: readonly (readonly [string, string])[]): WebGLProgram[] {
  const built = sources.map(([vs, fs]) => {
    const program = gl.createProgram();
    const shaders = ([[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]] as const).map(([type, source]) => {
      const shader = gl.createShader(type);
      if (!shader) throw new WebGLUnavailable('cannot create a shader');
      gl.shaderSource(shader, source);
      gl.compileShader(shader);
      gl.attachShader(program, shader);
      return shader;
    });
    gl.linkProgram(program);
    return { program, shaders };
  });
  for (const { program, shaders } of built) {
    if (gl.getProgramParameter(program, gl.LINK_STATUS) || gl.isContextLost()) continue;
    for (const shader of shaders) {
      if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) {
        throw new WebGLUnavailable(`a shader did not compile: ${gl.getShaderInfoLog(shader) ?? ''}`);
      }
    }
    throw new WebGLUnavailable(`a shader did not link: ${gl.getProgramInfoLog(program) ?? ''}`);
  }
  return built.map(({ program }) => program);
}

// An image over the whole map (its labels, drawn by a 2D canvas off the page): one triangle that
// covers the view, its texture premultiplied.
const IMAGE_VS = `#version 300 es
out vec2 v_uv;
void main() {
  vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
  v_uv = vec2((p.x + 1.0) * 0.5, (1.0 - p.y) * 0.5);
  gl_Position = vec4(p, 0.0, 1.0);
}`;

const IMAGE_FS = `#version 300 es
precision mediump float;
in vec2 v_uv;
uniform sampler2D u_image;
out vec4 outColour;
void main() { outColour = texture(u_image, v_uv); }`;

export class Renderer {
  /** The image program and texture (made at the first {@link Renderer.drawImage}, not while the map starts). */
  private image: { program: WebGLProgram; texture: WebGLTexture; sampler: WebGLUniformLocation | null } | null = null;
  private points!: WebGLProgram;
  private lines!: WebGLProgram;
  private pointLayer: Layer | null = null;
  private outlineLayer: Layer | null = null;
  private edgeLayer: Layer | null = null;
  private bundleLayer: Layer | null = null;
  private bundleQuadVertices = 0;
  private bundleCount = 0;
  private builtVersion = -1;
  private edgeKey = '';
  private bundleCache: { version: number; depth: number; bundles: Bundle[] } | null = null;
  private depthCache: { version: number; depth: number } | null = null;
  /** Each outline's larger side (world units), in the outline layer's order (descending). */
  private outlineSizes = new Float32Array(0);
  private readonly epoch: number;
  private uniforms = new Map<string, WebGLUniformLocation | null>();

  constructor(
    readonly gl: WebGL2RenderingContext,
    private theme: Theme,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.epoch = now();
    this.init();
  }

  /** The colours of the next frames (the page's colour scheme changed). */
  setTheme(theme: Theme): void {
    this.theme = theme;
  }

  /** (Re)creates programs; after a lost context is restored, every buffer is built again. */
  init(): void {
    const gl = this.gl;
    // Asked for first: where the driver has it, the two programs compile side by side.
    gl.getExtension('KHR_parallel_shader_compile');
    const [points, lines] = compilePrograms(gl, [[POINT_VS, POINT_FS], [LINE_VS, LINE_FS]]);
    if (!points || !lines) throw new WebGLUnavailable('the map’s programs were not made');
    this.points = points;
    this.lines = lines;
    this.uniforms.clear();
    this.image = null;
    this.pointLayer = null;
    this.outlineLayer = null;
    this.edgeLayer = null;
    this.bundleLayer = null;
    this.builtVersion = -1;
    this.edgeKey = '';
    // Every uniform's location now: a program's first lookup is a round trip to the GPU process,
    // which is freer while the map is on its way than when the first frame is drawn.
    for (const name of ['u_view', 'u_size', 'u_time', 'u_palette']) this.uniform(points, name);
    for (const name of ['u_view', 'u_px', 'u_colour']) this.uniform(lines, name);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    // Nothing is drawn into the canvas before the map's first frame: a canvas drawn into is a frame
    // for the browser to present, and on a software GPU the first frame's commands wait behind it.
    this.warmUp();
  }

  /**
   * One tiny draw of each kind the map makes (points, lines, quads; the
   * same attribute formats and blending), cleared at once: a software GPU
   * compiles a shader for the state it is first drawn with, and this way
   * it does so while the map is still on its way, not in the first frame.
   */
  private warmUp(): void {
    const gl = this.gl;
    // Into a 1x1 target of its own (the canvas stays untouched until the first frame).
    const target = gl.createFramebuffer();
    const pixel = gl.createRenderbuffer();
    gl.bindRenderbuffer(gl.RENDERBUFFER, pixel);
    gl.renderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, 1, 1);
    gl.bindFramebuffer(gl.FRAMEBUFFER, target);
    gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, pixel);
    gl.viewport(0, 0, 1, 1);
    const far = new Float32Array([-1e6, -1e6, -1e6, -1e6, -1e6, -1e6]);
    const points = this.layer(null, [{ data: far.subarray(0, 2), size: 2 }, { data: new Uint8Array(4), size: 1 }, { data: new Float32Array(1), size: 1 }], 1);
    const lines = this.layer(null, [{ data: far, size: 2 }, { data: new Float32Array(3), size: 1 }, { data: new Float32Array(6), size: 2 }], 3);
    gl.useProgram(this.lines);
    gl.bindVertexArray(lines.vao);
    gl.drawArrays(gl.LINES, 0, 2);
    gl.drawArrays(gl.TRIANGLES, 0, 3);
    gl.useProgram(this.points);
    gl.uniform3fv(this.uniform(this.points, 'u_palette'), PALETTE);
    gl.bindVertexArray(points.vao);
    gl.drawArrays(gl.POINTS, 0, 1);
    gl.bindVertexArray(null);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteFramebuffer(target);
    gl.deleteRenderbuffer(pixel);
    for (const layer of [points, lines]) {
      for (const b of layer.buffers) gl.deleteBuffer(b);
      gl.deleteVertexArray(layer.vao);
    }
  }

  private uniform(program: WebGLProgram, name: string): WebGLUniformLocation | null {
    const key = `${program === this.points ? 'p' : 'l'}:${name}`;
    if (!this.uniforms.has(key)) this.uniforms.set(key, this.gl.getUniformLocation(program, name));
    return this.uniforms.get(key) ?? null;
  }

  private layer(old: Layer | null, arrays: { data: Float32Array | Uint8Array; size: number }[], count: number): Layer {
    const gl = this.gl;
    if (old) {
      for (const b of old.buffers) gl.deleteBuffer(b);
      gl.deleteVertexArray(old.vao);
    }
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const buffers = arrays.map(({ data, size }, location) => {
      const buffer = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(location);
      // Bytes (a snapshot's languages, as they came) are read as whole numbers.
      gl.vertexAttribPointer(location, size, data instanceof Uint8Array ? gl.UNSIGNED_BYTE : gl.FLOAT, false, 0, 0);
      return buffer;
    });
    gl.bindVertexArray(null);
    return { vao, buffers, count };
  }

  /** The time the fade attributes are relative to. */
  private time(at: number): number {
    return Math.max(1, at - this.epoch);
  }

  private buildModel(model: MapModel): void {
    const snapshot = model.snapshot();
    if (snapshot) {
      // A fetched map, as it came: its arrays go to the GPU as they are.
      const n = snapshot.paths.length;
      this.pointLayer = this.layer(this.pointLayer, [{ data: snapshot.positions, size: 2 }, { data: snapshot.language, size: 1 }, { data: new Float32Array(n), size: 1 }], n);
    } else {
      this.buildPoints(model);
    }
    this.buildOutlines(model);
    this.builtVersion = model.version;
    this.edgeKey = '';
  }

  private buildPoints(model: MapModel): void {
    const nodes = model.list();
    const total = nodes.length + model.fading.length;
    const pos = new Float32Array(2 * total);
    const lang = new Uint8Array(total);
    const fade = new Float32Array(total);
    let i = 0;
    for (const node of nodes) {
      pos[2 * i] = node.x;
      pos[2 * i + 1] = node.y;
      lang[i] = node.lang;
      fade[i] = Number.isFinite(node.bornAt) ? this.time(node.bornAt) : 0;
      i += 1;
    }
    for (const { node, diedAt } of model.fading) {
      pos[2 * i] = node.x;
      pos[2 * i + 1] = node.y;
      lang[i] = node.lang;
      fade[i] = -this.time(diedAt);
      i += 1;
    }
    this.pointLayer = this.layer(this.pointLayer, [{ data: pos, size: 2 }, { data: lang, size: 1 }, { data: fade, size: 1 }], total);
  }

  private buildOutlines(model: MapModel): void {
    // Folder outlines: four segments per rectangle, fainter the deeper;
    // largest first, so that a draw can leave out those too small to see.
    const all: { r: Rect; alpha: number }[] = [];
    for (const f of model.folders.values()) {
      if (f.path === '') continue;
      const alpha = Math.max(0.12, 0.45 - 0.08 * depthOf(f.path));
      for (const r of f.rects) all.push({ r, alpha });
    }
    all.sort((a, b) => Math.max(b.r.w, b.r.h) - Math.max(a.r.w, a.r.h));
    const rects = all.length;
    const opos = new Float32Array(rects * 16);
    const oalpha = new Float32Array(rects * 8);
    this.outlineSizes = new Float32Array(rects);
    all.forEach(({ r, alpha }, k) => {
      const c = [r.x, r.y, r.x + r.w, r.y, r.x + r.w, r.y, r.x + r.w, r.y + r.h, r.x + r.w, r.y + r.h, r.x, r.y + r.h, r.x, r.y + r.h, r.x, r.y];
      opos.set(c, k * 16);
      oalpha.fill(alpha, k * 8, k * 8 + 8);
      this.outlineSizes[k] = Math.max(r.w, r.h);
    });
    this.outlineLayer = this.layer(this.outlineLayer, [{ data: opos, size: 2 }, { data: oalpha, size: 1 }], rects * 8);
  }

  private buildEdges(model: MapModel, cam: Camera, width: number, height: number, fitZoom: number): DrawStats {
    if (fileLevel(cam.zoom, fitZoom, model.edgeCount)) {
      const view = viewRect(cam, width, height);
      const key = `f:${model.version}:${view.x}:${view.y}:${view.w}:${view.h}`;
      if (key !== this.edgeKey || !this.edgeLayer) {
        const lines = fileEdgesInView(model, view);
        const n = lines.length / 4;
        const alpha = new Float32Array(2 * n).fill(n > 5000 ? 0.18 : 0.35);
        this.edgeLayer = this.layer(this.edgeLayer, [{ data: lines, size: 2 }, { data: alpha, size: 1 }], 2 * n);
        this.edgeKey = key;
      }
      return { points: 0, lines: this.edgeLayer.count / 2, bundled: false, depth: 0 };
    }
    if (this.depthCache?.version !== model.version) {
      let deepest = 1;
      for (const f of model.folders.keys()) deepest = Math.max(deepest, depthOf(f));
      this.depthCache = { version: model.version, depth: deepest };
    }
    const depth = bundleDepth(cam.zoom, fitZoom, this.depthCache.depth);
    // Nothing here depends on the camera beyond the depth (a quad's width is in CSS px, applied by the shader).
    const key = `b:${model.version}:${depth}`;
    if (key !== this.edgeKey || !this.bundleLayer) {
      if (this.bundleCache?.version !== model.version || this.bundleCache.depth !== depth) {
        this.bundleCache = { version: model.version, depth, bundles: bundleEdges(model, depth) };
      }
      // The strongest first: they are quads (width by count), the rest 1-px lines (alpha by count).
      const bundles = this.bundleCache.bundles.slice().sort((a, b) => b.count - a.count);
      const most = bundles[0]?.count ?? 1;
      const quads = Math.min(bundles.length, WIDE_BUNDLES);
      const vertices = quads * 6 + (bundles.length - quads) * 2;
      const pos = new Float32Array(vertices * 2);
      const alpha = new Float32Array(vertices);
      const offset = new Float32Array(vertices * 2);
      let v = 0;
      bundles.forEach((b, i) => {
        const share = Math.log1p(b.count) / Math.log1p(most);
        const a = 0.05 + 0.35 * share;
        if (i >= quads) {
          pos.set([b.ax, b.ay, b.bx, b.by], v * 2);
          alpha.fill(a, v, v + 2);
          v += 2;
          return;
        }
        const half = 0.5 + 1.5 * share;
        const dx = b.bx - b.ax;
        const dy = b.by - b.ay;
        const len = Math.hypot(dx, dy) || 1;
        const nx = (-dy / len) * half;
        const ny = (dx / len) * half;
        pos.set([b.ax, b.ay, b.bx, b.by, b.bx, b.by, b.ax, b.ay, b.bx, b.by, b.ax, b.ay], v * 2);
        offset.set([nx, ny, nx, ny, -nx, -ny, nx, ny, -nx, -ny, -nx, -ny], v * 2);
        alpha.fill(a, v, v + 6);
        v += 6;
      });
      this.bundleLayer = this.layer(this.bundleLayer, [{ data: pos, size: 2 }, { data: alpha, size: 1 }, { data: offset, size: 2 }], vertices);
      this.bundleQuadVertices = quads * 6;
      this.bundleCount = bundles.length;
      this.edgeKey = key;
    }
    return { points: 0, lines: this.bundleCount, bundled: true, depth };
  }

  /**
   * Draws the whole map as `cam` shows it on a `width` x `height` (CSS px)
   * view with `dpr` device pixels per CSS pixel.
   */
  draw(model: MapModel, cam: Camera, width: number, height: number, dpr: number, fitZoom: number, at = this.now()): DrawStats {
    const gl = this.gl;
    if (model.version !== this.builtVersion || !this.pointLayer) this.buildModel(model);
    const stats = this.buildEdges(model, cam, width, height, fitZoom);
    gl.viewport(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight);
    const [r, g, b] = this.theme.background;
    gl.clearColor(r, g, b, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    const view: [number, number, number, number] = [cam.x, cam.y, (2 * cam.zoom) / width, (2 * cam.zoom) / height];

    gl.useProgram(this.lines);
    gl.uniform4f(this.uniform(this.lines, 'u_view'), ...view);
    gl.uniform2f(this.uniform(this.lines, 'u_px'), 2 / width, 2 / height);
    const outline = this.outlineLayer;
    // Outlines are stored largest folder first: those under MIN_OUTLINE_PX on screen are left out.
    const outlines = outline ? 8 * visibleOutlines(this.outlineSizes, MIN_OUTLINE_PX / cam.zoom) : 0;
    if (outline && outlines > 0) {
      gl.uniform3f(this.uniform(this.lines, 'u_colour'), ...this.theme.outline);
      gl.bindVertexArray(outline.vao);
      gl.drawArrays(gl.LINES, 0, outlines);
    }
    gl.uniform3f(this.uniform(this.lines, 'u_colour'), ...this.theme.edge);
    if (stats.bundled && this.bundleLayer && this.bundleLayer.count > 0) {
      gl.bindVertexArray(this.bundleLayer.vao);
      if (this.bundleQuadVertices > 0) gl.drawArrays(gl.TRIANGLES, 0, this.bundleQuadVertices);
      const lines = this.bundleLayer.count - this.bundleQuadVertices;
      if (lines > 0) gl.drawArrays(gl.LINES, this.bundleQuadVertices, lines);
    } else if (!stats.bundled && this.edgeLayer && this.edgeLayer.count > 0) {
      gl.bindVertexArray(this.edgeLayer.vao);
      gl.drawArrays(gl.LINES, 0, this.edgeLayer.count);
    }

    const points = this.pointLayer;
    if (points && points.count > 0) {
      gl.useProgram(this.points);
      gl.uniform4f(this.uniform(this.points, 'u_view'), ...view);
      const size = Math.min(28, Math.max(2, cam.zoom * 0.7)) * dpr;
      gl.uniform1f(this.uniform(this.points, 'u_size'), size);
      gl.uniform1f(this.uniform(this.points, 'u_time'), this.time(at));
      gl.uniform3fv(this.uniform(this.points, 'u_palette'), PALETTE);
      gl.bindVertexArray(points.vao);
      gl.drawArrays(gl.POINTS, 0, points.count);
    }
    gl.bindVertexArray(null);
    return { ...stats, points: points?.count ?? 0 };
  }

  /**
   * Draws `source` (as large as the drawing buffer, e.g. the map's labels
   * drawn by a 2D canvas that is not in the page) over what {@link draw}
   * drew just before, in the same task: the labels are then part of the
   * map's one canvas, and not a transparent layer of their own that the
   * compositor blends in every frame the page presents (~7 ms of the GPU
   * process's CPU a frame on a software GPU).
   */
  drawImage(source: TexImageSource): void {
    const gl = this.gl;
    if (!this.image) {
      const [program] = compilePrograms(gl, [[IMAGE_VS, IMAGE_FS]]);
      const texture = gl.createTexture();
      if (!program) return;
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      this.image = { program, texture, sampler: gl.getUniformLocation(program, 'u_image') };
    }
    gl.viewport(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight);
    gl.useProgram(this.image.program);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.image.texture);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, true);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, source);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
    gl.uniform1i(this.image.sampler, 0);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.bindVertexArray(null);
    gl.drawArrays(gl.TRIANGLES, 0, 3);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
  }

  /** Makes the next draw rebuild what depends on the camera (the imports drawn), as a camera change does. */
  invalidateView(): void {
    this.edgeKey = '';
  }

  /**
   * Waits for the GPU: a one-pixel read, which returns once every command
   * before it has run (one round trip; a `finish()` before it would be a
   * second).
   */
  finish(): void {
    const gl = this.gl;
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
  }
}

const PALETTE = new Float32Array(LANGUAGE_COLOURS.flatMap(([r, g, b]) => [r / 255, g / 255, b / 255]));
