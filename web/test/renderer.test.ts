import { describe, expect, it } from 'vitest';
import { MIN_OUTLINE_PX, Renderer, WebGLUnavailable, compilePrograms, visibleOutlines, type Theme } from '../src/scene/renderer';
import { depthOf } from '../src/scene/lod';
import { anyGl } from './anyGl';

describe('visibleOutlines', () => {
  it('counts the outlines (largest first) at least the given size', () => {
    const sizes = new Float32Array([40, 20, 20, 10, 5, 5, 1]);
    expect(visibleOutlines(sizes, 0)).toBe(7);
    expect(visibleOutlines(sizes, 1)).toBe(7);
    expect(visibleOutlines(sizes, 5)).toBe(6);
    expect(visibleOutlines(sizes, 6)).toBe(4);
    expect(visibleOutlines(sizes, 20)).toBe(3);
    expect(visibleOutlines(sizes, 41)).toBe(0);
    expect(visibleOutlines(new Float32Array(0), 3)).toBe(0);
  });

  it('agrees with a scan on every threshold', () => {
    const sizes = Float32Array.from({ length: 200 }, (_, i) => Math.floor((200 - i) / 3));
    for (let min = 0; min <= 70; min += 0.5) {
      expect(visibleOutlines(sizes, min)).toBe(sizes.filter((s) => s >= min).length);
    }
  });

  it('leaves out a folder under MIN_OUTLINE_PX on screen at the zoom', () => {
    // A 10-cell folder is 2.5 px at zoom 0.25 (left out) and 5 px at 0.5 (drawn).
    const sizes = new Float32Array([100, 10]);
    expect(visibleOutlines(sizes, MIN_OUTLINE_PX / 0.25)).toBe(1);
    expect(visibleOutlines(sizes, MIN_OUTLINE_PX / 0.5)).toBe(2);
  });
});

describe('depthOf', () => {
  it('counts the root as 0 and one per path segment', () => {
    expect(depthOf('')).toBe(0);
    expect(depthOf('src')).toBe(1);
    expect(depthOf('src/a')).toBe(2);
    expect(depthOf('a/b/c/d')).toBe(4);
  });
});

/** A WebGL2 stand-in that records its calls: `bad` shader sources fail to compile, and their programs to link. */
function recordingGl(bad: string[] = []): { gl: WebGL2RenderingContext; calls: string[] } {
  const calls: string[] = [];
  const sources = new Map<object, string>();
  const attached = new Map<object, object[]>();
  const gl = {
    VERTEX_SHADER: 1,
    FRAGMENT_SHADER: 2,
    COMPILE_STATUS: 3,
    LINK_STATUS: 4,
    createProgram: () => { const p = {}; attached.set(p, []); return p; },
    createShader: () => ({}),
    shaderSource: (shader: object, source: string) => { sources.set(shader, source); },
    compileShader: () => { calls.push('compile'); },
    attachShader: (program: object, shader: object) => { attached.get(program)?.push(shader); },
    linkProgram: () => { calls.push('link'); },
    getShaderParameter: (shader: object) => { calls.push('shader status'); return !bad.includes(sources.get(shader) ?? ''); },
    getProgramParameter: (program: object) => {
      calls.push('program status');
      return !(attached.get(program) ?? []).some((s) => bad.includes(sources.get(s) ?? ''));
    },
    getShaderInfoLog: (shader: object) => `cannot compile ${sources.get(shader) ?? ''}`,
    getProgramInfoLog: () => 'cannot link',
    isContextLost: () => false,
  };
  return { gl: gl as unknown as WebGL2RenderingContext, calls };
}

describe('compilePrograms', () => {
  it('hands every program over before asking for any status, then asks each link status once', () => {
    const { gl, calls } = recordingGl();
    const programs = compilePrograms(gl, [['vs1', 'fs1'], ['vs2', 'fs2']]);
    expect(programs).toHaveLength(2);
    // Each status is a round trip to the GPU process: the shaders' are not asked when the links hold.
    expect(calls).toEqual(['compile', 'compile', 'link', 'compile', 'compile', 'link', 'program status', 'program status']);
  });

  it('says which shader did not compile when a link fails', () => {
    const { gl, calls } = recordingGl(['fs2']);
    expect(() => compilePrograms(gl, [['vs1', 'fs1'], ['vs2', 'fs2']])).toThrow(WebGLUnavailable);
    expect(() => compilePrograms(gl, [['vs1', 'fs1'], ['vs2', 'fs2']])).toThrow('a shader did not compile: cannot compile fs2');
    expect(calls.filter((c) => c === 'shader status').length).toBeGreaterThan(0);
  });
});

describe('the renderer at start', () => {
  const theme: Theme = { background: [0, 0, 0], edge: [1, 1, 1], outline: [1, 1, 1] };

  it('draws nothing into the canvas before the first frame (its warm-up goes to a target of its own), and clears nothing', () => {
    const { gl, calls } = anyGl();
    new Renderer(gl, theme);
    const names = calls.map(([name]) => name);
    expect(names).not.toContain('clear');
    const draws = names.flatMap((name, i) => (name.startsWith('draw') ? [i] : []));
    expect(draws.length).toBeGreaterThan(0);
    const bound = names.flatMap((name, i) => (name === 'bindFramebuffer' ? [i] : []));
    expect(bound).toHaveLength(2);
    const [into, back] = bound;
    expect(calls[into ?? -1]?.[1][1]).not.toBeNull();
    expect(calls[back ?? -1]?.[1][1]).toBeNull();
    for (const at of draws) {
      expect(at).toBeGreaterThan(into ?? Infinity);
      expect(at).toBeLessThan(back ?? -Infinity);
    }
  });

  it('looks up every uniform its shaders declare at start (a program\'s first lookup is a round trip to the GPU process)', () => {
    const { gl, calls } = anyGl();
    new Renderer(gl, theme);
    const declared = new Set(calls
      .filter(([name]) => name === 'shaderSource')
      .flatMap(([, args]) => [...String(args[1]).matchAll(/uniform\s+\w+\s+(\w+)/g)].map((m) => m[1])));
    const looked = new Set(calls.filter(([name]) => name === 'getUniformLocation').map(([, args]) => args[1]));
    expect(declared.size).toBeGreaterThan(3);
    expect([...declared].filter((u) => !looked.has(u))).toEqual([]);
  });
});
