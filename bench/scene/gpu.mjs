// Where the GPU process's main thread spent a traced reload (bench/scene/path.mjs --gpu): its
// top-level tasks between navigation start and the mark, each put in one kind by what ran inside
// it, and the compositors that asked for the frames it swapped. On SwiftShader this thread does
// every WebGL command, every raster and every presented frame, one task at a time: when it is
// busy for nearly all of a reload, the first frame waits for it, not for the page's own thread.

/** A top-level task's kind, from the names of the slices inside it. */
export function gpuTaskKind(names) {
  if (names.has('SkiaOutputSurfaceImplOnGpu::SwapBuffers')) return 'frames (SwapBuffers)';
  if (names.has('WebGL')) return 'WebGL command buffers';
  if ([...names].some((n) => /CreateCommandBuffer|DestroyCommandBuffer/.test(n))) return 'command buffers made or destroyed';
  if ([...names].some((n) => /Raster/.test(n))) return 'raster';
  return 'other';
}

/**
 * The GPU main thread's busy time by kind within [t0, t1] (trace µs), and the composites of the
 * browser (`SingleThreadProxy::DoComposite`) and of renderers (`ProxyImpl::ScheduledActionDraw`)
 * in that window, each a frame the display then draws and swaps.
 * `events`: the trace's events; `gpuMain`: `pid:tid` of `CrGpuMain`.
 */
export function gpuBreakdown(events, gpuMain, t0, t1) {
  const [pid, tid] = gpuMain.split(':').map(Number);
  const mine = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X').sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const kinds = new Map();
  let busy = 0;
  let i = 0;
  while (i < mine.length) {
    const task = mine[i];
    const end = task.ts + (task.dur ?? 0);
    const names = new Set([task.name]);
    let j = i + 1;
    while (j < mine.length && mine[j].ts < end) {
      names.add(mine[j].name);
      j += 1;
    }
    i = j;
    const from = Math.max(task.ts, t0);
    const to = Math.min(end, t1);
    if (to <= from) continue;
    const ms = (to - from) / 1000;
    const kind = gpuTaskKind(names);
    const held = kinds.get(kind) ?? { ms: 0, tasks: 0 };
    held.ms += ms;
    held.tasks += 1;
    kinds.set(kind, held);
    busy += ms;
  }
  const composites = { browser: 0, renderer: 0 };
  for (const e of events) {
    if (e.ph !== 'X' || e.ts < t0 || e.ts > t1) continue;
    if (e.name === 'SingleThreadProxy::DoComposite') composites.browser += 1;
    else if (e.name === 'ProxyImpl::ScheduledActionDraw') composites.renderer += 1;
  }
  return { busy, windowMs: (t1 - t0) / 1000, kinds: [...kinds].sort((a, b) => b[1].ms - a[1].ms), composites };
}
