// node --test bench/scene/test/: the GPU main thread's time by kind (path.mjs --gpu).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gpuBreakdown, gpuTaskKind } from '../gpu.mjs';

const GPU = { pid: 7, tid: 7 };
const slice = (name, ts, dur, who = GPU) => ({ ph: 'X', name, ts, dur, ...who });

test('each top-level task counts once, by what ran inside it, clipped to the window', () => {
  const events = [
    // A swap that began before navigation start: only its part in the window counts.
    slice('ThreadControllerImpl::RunTask', -5000, 10000),
    slice('SkiaOutputSurfaceImplOnGpu::SwapBuffers', -5000, 9000),
    slice('ThreadControllerImpl::RunTask', 6000, 3000),
    slice('WebGL', 6100, 2800),
    slice('CommandBuffer::Flush', 6100, 2800),
    slice('ThreadControllerImpl::RunTask', 10000, 1000),
    slice('GpuChannel::CreateCommandBuffer', 10000, 900),
    slice('ThreadControllerImpl::RunTask', 12000, 500),
    slice('RendererRasterWorker', 12000, 400),
    slice('ThreadControllerImpl::RunTask', 13000, 200),
    // Past the mark: not counted.
    slice('ThreadControllerImpl::RunTask', 30000, 5000),
    slice('SkiaOutputSurfaceImplOnGpu::SwapBuffers', 30000, 5000),
    // Another thread's slices are not the GPU main thread's.
    slice('SkiaOutputSurfaceImplOnGpu::SwapBuffers', 1000, 5000, { pid: 7, tid: 8 }),
    slice('SingleThreadProxy::DoComposite', 2000, 300, { pid: 1, tid: 1 }),
    slice('ProxyImpl::ScheduledActionDraw', 4000, 300, { pid: 2, tid: 3 }),
    slice('SingleThreadProxy::DoComposite', 40000, 300, { pid: 1, tid: 1 }),
  ];
  const g = gpuBreakdown(events, '7:7', 0, 20000);
  assert.equal(g.windowMs, 20);
  const kinds = Object.fromEntries(g.kinds.map(([k, v]) => [k, v]));
  assert.deepEqual(kinds['frames (SwapBuffers)'], { ms: 5, tasks: 1 });
  assert.deepEqual(kinds['WebGL command buffers'], { ms: 3, tasks: 1 });
  assert.deepEqual(kinds['command buffers made or destroyed'], { ms: 1, tasks: 1 });
  assert.deepEqual(kinds.raster, { ms: 0.5, tasks: 1 });
  assert.deepEqual(kinds.other, { ms: 0.2, tasks: 1 });
  assert.ok(Math.abs(g.busy - 9.7) < 1e-9, `busy ${g.busy}`);
  assert.equal(g.kinds[0][0], 'frames (SwapBuffers)', 'the largest first');
  assert.deepEqual(g.composites, { browser: 1, renderer: 1 });
});

test('a swap in a task wins over the WebGL work beside it', () => {
  assert.equal(gpuTaskKind(new Set(['WebGL', 'SkiaOutputSurfaceImplOnGpu::SwapBuffers'])), 'frames (SwapBuffers)');
  assert.equal(gpuTaskKind(new Set(['ThreadControllerImpl::RunTask'])), 'other');
});
