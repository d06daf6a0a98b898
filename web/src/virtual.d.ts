/** The protocol schema's definitions, without prose and rewritten by `fastSchema` at build time (`vite.config.ts`). */
declare module 'virtual:orbit-fast-schema' {
  const defs: Record<string, unknown>;
  export default defs;
}
