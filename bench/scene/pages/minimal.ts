// The floor of drawing here: one WebGL2 canvas, the map's points as
// `gl.POINTS` (a round shader) and every edge as `gl.LINES`, all drawn on
// every frame that needs one (first frame, a drag's frames, sceneRedraw).
// No level of detail, no labels, no loop when nothing moves.
import { boot, colourOf, fitScale, viewSize, waitGpu, type BenchGraph, type Inspect } from './common';

const POINT_VS = `#version 300 es
in vec2 a_pos;
in float a_lang;
uniform vec2 u_scale;
uniform vec2 u_offset;
uniform float u_size;
uniform vec3 u_palette[17];
out vec3 v_colour;
void main() {
  vec2 p = a_pos * u_scale + u_offset;
  gl_Position = vec4(p.x, -p.y, 0.0, 1.0);
  gl_PointSize = u_size;
  v_colour = u_palette[int(min(a_lang, 16.0))];
}`;
const POINT_FS = `#version 300 es
precision mediump float;
in vec3 v_colour;
out vec4 colour;
void main() {
  vec2 d = gl_PointCoord - 0.5;
  if (dot(d, d) > 0.25) discard;
  colour = vec4(v_colour, 1.0);
}`;
const LINE_VS = `#version 300 es
in vec2 a_pos;
uniform vec2 u_scale;
uniform vec2 u_offset;
void main() {
  vec2 p = a_pos * u_scale + u_offset;
  gl_Position = vec4(p.x, -p.y, 0.0, 1.0);
}`;
const LINE_FS = `#version 300 es
precision mediump float;
out vec4 colour;
void main() { colour = vec4(0.55, 0.6, 0.7, 0.35); }`;

function program(gl: WebGL2RenderingContext, vs: string, fs: string): WebGLProgram {
  const compile = (type: number, source: string): WebGLShader => {
    const shader = gl.createShader(type);
    if (!shader) throw new Error('createShader failed');
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(shader) ?? ''}`);
    return shader;
  };
  const p = gl.createProgram();
  gl.attachShader(p, compile(gl.VERTEX_SHADER, vs));
  gl.attachShader(p, compile(gl.FRAGMENT_SHADER, fs));
  gl.bindAttribLocation(p, 0, 'a_pos');
  gl.bindAttribLocation(p, 1, 'a_lang');
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`link: ${gl.getProgramInfoLog(p) ?? ''}`);
  return p;
}

function start(graph: BenchGraph): Inspect {
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'Minimal map');
  document.body.append(canvas);
  const dpr = Math.min(window.devicePixelRatio || 1, 2);
  const { width: cssW, height: cssH } = viewSize();
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  const gl = canvas.getContext('webgl2', { antialias: false, alpha: false, preserveDrawingBuffer: false });
  if (!gl) throw new Error('no WebGL2');

  const points = program(gl, POINT_VS, POINT_FS);
  const lines = program(gl, LINE_VS, LINE_FS);
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  const pos = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, pos);
  gl.bufferData(gl.ARRAY_BUFFER, graph.positions, gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
  const lang = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, lang);
  gl.bufferData(gl.ARRAY_BUFFER, graph.language, gl.STATIC_DRAW);
  gl.enableVertexAttribArray(1);
  gl.vertexAttribPointer(1, 1, gl.UNSIGNED_BYTE, false, 0, 0);
  const idx = gl.createBuffer();
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, idx);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, graph.edgePairs, gl.STATIC_DRAW);
  const palette = new Float32Array(17 * 3);
  for (let i = 0; i < 17; i += 1) palette.set(colourOf(i), i * 3);

  // Camera: world centre under the canvas centre, pixels per world unit.
  const camera = {
    x: graph.root.x + graph.root.w / 2,
    y: graph.root.y + graph.root.h / 2,
    zoom: fitScale(graph, cssW, cssH),
  };
  let frames = 0;

  const draw = (): void => {
    frames += 1;
    const sx = (2 * camera.zoom) / cssW;
    const sy = (2 * camera.zoom) / cssH;
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(0.06, 0.07, 0.09, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(lines);
    gl.uniform2f(gl.getUniformLocation(lines, 'u_scale'), sx, sy);
    gl.uniform2f(gl.getUniformLocation(lines, 'u_offset'), -camera.x * sx, -camera.y * sy);
    gl.drawElements(gl.LINES, graph.edges * 2, gl.UNSIGNED_INT, 0);
    gl.useProgram(points);
    gl.uniform2f(gl.getUniformLocation(points, 'u_scale'), sx, sy);
    gl.uniform2f(gl.getUniformLocation(points, 'u_offset'), -camera.x * sx, -camera.y * sy);
    gl.uniform1f(gl.getUniformLocation(points, 'u_size'), Math.min(16, Math.max(2, 0.7 * camera.zoom * dpr)));
    gl.uniform3fv(gl.getUniformLocation(points, 'u_palette'), palette);
    gl.drawArrays(gl.POINTS, 0, graph.nodes);
  };

  // Drag to pan: one redraw per animation frame while the pointer moves.
  let drag: { x: number; y: number } | null = null;
  let scheduled = 0;
  canvas.addEventListener('pointerdown', (event) => {
    drag = { x: event.clientX, y: event.clientY };
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!drag) return;
    camera.x -= (event.clientX - drag.x) / camera.zoom;
    camera.y -= (event.clientY - drag.y) / camera.zoom;
    drag = { x: event.clientX, y: event.clientY };
    if (!scheduled) {
      scheduled = requestAnimationFrame(() => {
        scheduled = 0;
        draw();
      });
    }
  });
  const end = (): void => {
    drag = null;
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);

  draw();
  waitGpu(gl);
  return {
    sceneRedraw: () => {
      const t0 = performance.now();
      draw();
      waitGpu(gl);
      return performance.now() - t0;
    },
    scene: () => ({ nodes: graph.nodes, edges: graph.edges, frames, camera: { ...camera }, loop: scheduled ? 'awake' : 'asleep' }),
  };
}

void boot(start);
