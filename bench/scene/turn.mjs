// Issue 17's benchmark phase: a scripted turn animating Claude on the map
// (reads with comets, edits with neighbours and blast rings, thinking
// flashes, an MCP call out and back, a subagent with its own reads) for
// `seconds`, fed to the page's effects through `orbitInspect.sceneFeed`
// exactly as the channel's `activity` and `subagent` messages reach them
// (same hash rule, same effects). The bench's Orbit has no `claude`, and
// what is measured is the page: Chromium's CPU and the effects' frames.
//
// Measured: the draw time of each effects frame (p50/p95), their rate, and
// the CPU of every Chromium process while it animates; the caller measures
// the same map idle in the same run.
import { startCpu } from './cpu.mjs';

const percentile = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** The scripted turn, run in the page: returns how many messages it fed. */
function scriptInPage({ seconds, seed }) {
  const inspect = window.orbitInspect;
  const scene = inspect.scene();
  const hash = scene.graphHash;
  const paths = Object.keys(inspect.scene.positions());
  if (!hash || paths.length === 0) throw new Error('no map to animate');
  let state = seed;
  const pick = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return paths[state % paths.length];
  };
  const key = 'bench';
  const turn = [{ key, inTurn: true }];
  let tick = 0;
  const batch = (records) => ({ type: 'activity', key, tick: (tick += 1), graphHash: hash, records });
  const record = (kind, file, subagent = null, mcp = null) => ({ kind, file, mcp, subagent });
  // One cycle of 4 s, repeated: thinking, reads, edits, an MCP call, a subagent.
  const cycle = [
    [0, () => [batch([record('thinking', null)])]],
    [300, () => [batch([record('read', pick())])]],
    [800, () => [batch([record('read', pick())])]],
    [1200, () => [{ type: 'subagent', key, id: 'toolu_bench', event: 'started', agentType: 'general-purpose', description: 'Look around' }]],
    [1400, () => [batch([record('edit', pick())])]],
    [1700, () => [batch([record('read', pick(), 'toolu_bench')])]],
    [2000, () => [batch([record('mcp', null, null, { server: 'docs', tool: 'search', direction: 'out' })])]],
    [2300, () => [batch([record('read', pick(), 'toolu_bench')])]],
    [2500, () => [batch([record('mcp', null, null, { server: 'docs', tool: 'search', direction: 'back' })])]],
    [2700, () => [batch([record('thinking', null)])]],
    [3000, () => [batch([record('edit', pick())])]],
    [3300, () => [{ type: 'subagent', key, id: 'toolu_bench', event: 'ended', status: 'completed' }]],
    [3600, () => [batch([record('read', pick())])]],
  ];
  return new Promise((resolve) => {
    let fed = 0;
    const start = performance.now();
    inspect.sceneFeed(turn, []);
    inspect.sceneEffectFrames();
    let cycleStart = start;
    let next = 0;
    const step = () => {
      const now = performance.now();
      if (now - start >= seconds * 1000) {
        inspect.sceneFeed([{ key, inTurn: false }], []);
        resolve(fed);
        return;
      }
      while (next < cycle.length && now - cycleStart >= cycle[next][0]) {
        const messages = cycle[next][1]();
        fed += messages.length;
        inspect.sceneFeed(turn, messages);
        next += 1;
      }
      if (next >= cycle.length && now - cycleStart >= 4000) {
        cycleStart = now;
        next = 0;
      }
      setTimeout(step, 20);
    };
    step();
  });
}

/**
 * The turn phase: `seconds` of a scripted turn on the map as it is now
 * (the overview), with the effects' frame times and Chromium's CPU.
 */
export async function turnPhase(page, browserPid, { seconds, seed = 17 }) {
  const cpu = startCpu(browserPid);
  const fed = await page.evaluate(scriptInPage, { seconds, seed });
  const usage = cpu.stop();
  const { draws, scene } = await page.evaluate(() => ({ draws: window.orbitInspect.sceneEffectFrames(), scene: window.orbitInspect.scene() }));
  // The loop sleeps again about a second after the turn.
  const t0 = Date.now();
  let asleepAfterMs = null;
  while (Date.now() - t0 < 5000) {
    const loop = await page.evaluate(() => window.orbitInspect.scene().loop);
    if (loop === 'asleep') {
      asleepAfterMs = Date.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    seconds,
    fed,
    frames: draws.length,
    fps: draws.length / seconds,
    drawP50Ms: percentile(draws, 50),
    drawP95Ms: percentile(draws, 95),
    drawMaxMs: draws.length ? Math.max(...draws) : null,
    lines: scene.lod?.lines ?? null,
    asleepAfterMs,
    ...usage,
  };
}
