// node --test bench/scene/test/: the CPU sampler sums a process tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { processType, startCpu, treeTicks } from '../cpu.mjs';

const busy = (ms) => spawn(process.execPath, ['-e', `const t = Date.now(); while (Date.now() - t < ${ms});`]);
const exited = (child) => new Promise((r) => child.once('exit', r));

test('a busy child counts in its parent tree', async () => {
  const cpu = startCpu(process.pid);
  const child = busy(600);
  assert.ok(treeTicks(process.pid).has(child.pid), 'the child is in the tree');
  await exited(child);
  const out = cpu.stop();
  // 0.6 s of a busy loop (less whatever the machine took from it), plus start-up.
  assert.ok(out.cpuSeconds >= 0.2, `cpuSeconds ${out.cpuSeconds}`);
  assert.ok(out.percent > 10, `percent ${out.percent}`);
});

test('a sleeping tree is idle', async () => {
  const cpu = startCpu(process.pid, { everyMs: 100 });
  await new Promise((r) => setTimeout(r, 500));
  const out = cpu.stop();
  assert.ok(out.percent < 20, `percent ${out.percent}`);
});

test('another tree is not counted', async () => {
  const other = busy(400);
  const cpu = startCpu(other.pid);
  const mine = startCpu(process.pid);
  await exited(other);
  assert.ok(cpu.stop().cpuSeconds >= 0.1);
  // This process only waited; its other child is not there any more.
  assert.ok(!treeTicks(process.pid).has(other.pid));
  assert.ok(mine.stop().processes >= 1);
});

test("a process's kind comes from its --type= (Chromium's), `browser` without one, `gone` once ended", async () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)', '--', '--type=gpu-process']);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(processType(child.pid), 'gpu-process');
  assert.equal(processType(process.pid), 'browser');
  child.kill();
  await exited(child);
  assert.equal(processType(child.pid), 'gone');
});

test('the CPU is split by process kind and the kinds sum to the whole', async () => {
  const cpu = startCpu(process.pid);
  await exited(busy(300));
  const out = cpu.stop();
  const sum = Object.values(out.byType).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - out.percent) < 1e-6, `${sum} vs ${out.percent}`);
});
