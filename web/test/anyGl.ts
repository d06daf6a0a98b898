/** A WebGL2 stand-in that answers everything: constants are their names, objects are made, every call is recorded. */
export function anyGl(): { gl: WebGL2RenderingContext; calls: [string, unknown[]][] } {
  const calls: [string, unknown[]][] = [];
  const gl = new Proxy({}, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined;
      if (/^[A-Z0-9_]+$/.test(name)) return name;
      if (name === 'drawingBufferWidth' || name === 'drawingBufferHeight') return 100;
      return (...args: unknown[]) => {
        calls.push([name, args]);
        if (name === 'getProgramParameter') return true;
        if (name === 'isContextLost') return false;
        if (name === 'getUniformLocation') return { uniform: args[1] };
        if (name.startsWith('create')) return { made: name, n: calls.length };
        return null;
      };
    },
  });
  return { gl: gl as unknown as WebGL2RenderingContext, calls };
}
