#!/usr/bin/env node
// Runs every scenario of run.mjs (or those named) against a fresh mock
// server each: the page's own end-to-end check without the Rust server.
//   npm run build && node e2e/mock-all.mjs [scenario ...]
// Ends with "N passed, N failed" and exits non-zero when one failed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ALL = ['prompt', 'allow', 'always', 'deny', 'questions-answer', 'questions-skip', 'stop', 'reload-pending', 'drop', 'trust', 'security', 'long-session', 'layout'];
const scenarios = process.argv.length > 2 ? process.argv.slice(2) : ALL;
const artifacts = process.env.ORBIT_ARTIFACTS ?? join(here, 'artifacts');

let passed = 0;
let failed = 0;
for (const scenario of scenarios) {
  const mock = spawn(process.execPath, [join(here, 'mock-server.mjs'), ...(scenario === 'trust' ? ['--untrusted'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: mock.stdout }), 'line');
  const login = new URL(line);
  const env = {
    ...process.env,
    ORBIT_LOGIN_URL: line,
    ORBIT_ARTIFACTS: artifacts,
    ...(scenario === 'drop' ? { ORBIT_DROP_URL: `${login.origin}/mock/drop` } : {}),
    ORBIT_FLOOD_URL: `${login.origin}/mock/flood`,
    ...(scenario === 'always' ? { ORBIT_SECOND_PROMPT: 'Once more (permission)' } : {}),
    ...(scenario === 'security' ? { ORBIT_SECURITY_PROMPT: 'Show me some html (xss)' } : {}),
  };
  const run = spawn(process.execPath, [join(here, 'run.mjs'), scenario], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const [code] = await once(run, 'exit');
  mock.kill('SIGTERM');
  await once(mock, 'exit');
  if (code === 0) passed += 1;
  else failed += 1;
}
console.log(`e2e (mock): ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
