#!/usr/bin/env node
// The claude CLI's own CPU per turn, as Orbit runs it (issue 15; bench/page/README.md,
// "bench/page/cli-profile.mjs"). No Orbit, no browser: the pinned CLI (scripts/setup-claude)
// started with Orbit's arguments (crates/orbit-agent/src/cli.rs BASE_ARGS, read from there) and
// the environment the latency bench gives it (crates/orbit/tests/it/open_support.rs `command`,
// plus Orbit's own ORBIT_OWN_CLAUDE), in a fresh workspace and HOME, against a fake Messages API
// of this script's own that answers each turn as the latency bench's does: a text `mk<i>a` with
// a `Read` of `mk<i>t.md`, then a closing text `mk<i>b` (the SSE shapes of
// crates/orbit-agent/tests/it/fake_api.rs).
//
//   node bench/page/cli-profile.mjs [--turns 20] [--warmup 1] [--pause 700] [--file-kb 0]
//        [--git] [--cpu-prof DIR] [--variant NAME[:K=V,K=V,--flag,--flag=v,!--flag]]...
//
// Each variant is one CLI process (the default: one, `orbit`, Orbit's invocation as it is);
// `K=V` sets a variable on top of Orbit's environment (`K=` removes it), `--flag` adds an
// argument, `!--flag` removes one of Orbit's (with its value). With several variants, turn i
// runs in every variant in turn (the order rotating), so that they share the machine's load: the
// A/B of one run. Per turn and variant it reads each of the CLI's threads' CPU time
// (/proc/<pid>/task/<tid>/schedstat: ns, not /proc's 10 ms ticks) before the prompt, at each
// stdout line (the turn cut at its own lines), at the CLI's `result` line and after `--pause` ms
// (what the CLI does after the result would land in the next prompt's window otherwise), and the
// turn's wall time (prompt written -> `result` read). The first `--warmup` turns of each process
// (its start-up: settings, plugins, the first request's system prompt; the JIT's warm-up) are
// left out of the figures (the first is reported apart). `--file-kb N`: each turn's file N KiB;
// `--git`: each workspace a git repository. `ORBIT_CLI_PROFILE_CLAUDE` names another CLI.
//
// `--cpu-prof DIR`: every CLI gets BUN_OPTIONS="--cpu-prof --cpu-prof-dir=DIR/<variant>" (the
// pinned CLI is a Bun executable, not Node; Bun writes the profile when the process exits, which
// it does when its stdin ends), and the script prints the profile's samples in the measured
// turns' windows by what they were doing (CATEGORIES), by source file, by the first frames of the
// stack and by function, then writes `DIR/<variant>/summary.json`.
//
// A table goes to stderr, one JSON line to stdout.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLAUDE = process.env.ORBIT_CLI_PROFILE_CLAUDE ?? join(REPO, 'tests/node/claude-cli/node_modules/.bin/claude');
// Orbit's fixed arguments, read from crates/orbit-agent/src/cli.rs `BASE_ARGS` (so that the bench
// runs what Orbit runs, whatever it becomes).
const BASE_ARGS = (() => {
  const rs = readFileSync(join(REPO, 'crates/orbit-agent/src/cli.rs'), 'utf8');
  const found = /pub const BASE_ARGS: \[&str; \d+\] = \[([^\]]*)\];/.exec(rs);
  if (!found) throw new Error('cli-profile: BASE_ARGS not found in crates/orbit-agent/src/cli.rs');
  return [...found[1].matchAll(/"([^"]*)"/g)].map((m) => m[1]);
})();

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const TURNS = Number(opt('--turns', '20'));
const PAUSE_MS = Number(opt('--pause', '700'));
const WARMUP = Math.max(1, Number(opt('--warmup', '1')));
// Each turn's file, in KiB (the latency bench's is one line): a bigger one makes every later
// request carry it, as a long session's context does.
const FILE_KB = Number(opt('--file-kb', '0'));
// `--git`: each workspace a git repository with its files committed (as a user's project is).
const GIT = argv.includes('--git');
const PROF_DIR = opt('--cpu-prof', null);
const variants = [];
for (let i = 0; i < argv.length; i += 1) {
  if (argv[i] !== '--variant') continue;
  const spec = argv[i + 1] ?? '';
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const env = {};
  const args = [];
  const drop = [];
  for (const part of colon < 0 ? [] : spec.slice(colon + 1).split(',').filter(Boolean)) {
    if (part.startsWith('--')) args.push(part);
    else if (part.startsWith('!--')) drop.push(part.slice(1));
    else {
      const eq = part.indexOf('=');
      env[part.slice(0, eq)] = part.slice(eq + 1);
    }
  }
  variants.push({ name, env, args, drop });
}
if (variants.length === 0) variants.push({ name: 'orbit', env: {}, args: [], drop: [] });
// A base argument removed (`!--flag`), with its value when it has one.
const baseArgs = (drop) => BASE_ARGS.filter((a, i) => !drop.includes(a) && !(i > 0 && drop.includes(BASE_ARGS[i - 1]) && !a.startsWith('--')));

// ---------------------------------------------------------------- the fake Messages API
const sse = (res, n, model, blocks) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_fake_${n}` });
  const send = (events) => res.write(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
  send([{ type: 'message_start', message: { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } }]);
  let stop = 'end_turn';
  blocks.forEach((b, index) => {
    if (b.text !== undefined) {
      send([{ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (let k = 0; k < b.text.length; k += 16) send([{ type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text.slice(k, k + 16) } }]);
    } else {
      stop = 'tool_use';
      send([{ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_fake_${n}_${index}`, name: b.tool, input: {} } }]);
      send([{ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }]);
    }
    send([{ type: 'content_block_stop', index }]);
  });
  send([{ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }, { type: 'message_stop' }]);
  res.end();
};
let requests = 0;
const api = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    requests += 1;
    let parsed = {};
    try { parsed = JSON.parse(body); } catch { /* answered as an auxiliary call */ }
    const model = parsed.model ?? 'claude-opus-5-5';
    if (!Array.isArray(parsed.tools) || parsed.tools.length === 0) return sse(res, requests, model, [{ text: 'Aux.' }]);
    const messages = parsed.messages ?? [];
    // The turn's marker and file are in its prompt: `cli-profile turn <i> file <path>`.
    let turn = null;
    for (let m = messages.length - 1; m >= 0 && !turn; m -= 1) {
      const found = /cli-profile turn (\d+) file (\S+?\.md)/.exec(JSON.stringify(messages[m].content));
      if (found) turn = { i: found[1], file: found[2] };
    }
    const last = JSON.stringify(messages.at(-1)?.content ?? '');
    if (!turn) return sse(res, requests, model, [{ text: '(no turn)' }]);
    if (last.includes('"tool_result"')) return sse(res, requests, model, [{ text: `mk${turn.i}b The file holds one line of notes.` }]);
    return sse(res, requests, model, [{ text: `mk${turn.i}a Looking at the file now.` }, { tool: 'Read', input: { file_path: turn.file } }]);
  });
});
await new Promise((ok) => api.listen(0, '127.0.0.1', ok));
const apiUrl = `http://127.0.0.1:${api.address().port}`;

// ---------------------------------------------------------------- CPU per thread
const threadCpu = (pid) => {
  const out = new Map();
  let tids = [];
  try { tids = readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(tid, { comm, ns });
    } catch { /* the thread ended */ }
  }
  return out;
};
// Thread names with their numbers folded (`Bun Pool 3` -> `Bun Pool *`).
const family = (comm) => comm.replace(/\d+$/, '*');
const diffByFamily = (a, b) => {
  const out = {};
  for (const [tid, { comm, ns }] of b) {
    const ms = (ns - (a.get(tid)?.ns ?? 0)) / 1e6;
    if (ms > 0) out[family(comm)] = (out[family(comm)] ?? 0) + ms;
  }
  return out;
};
const sum = (o) => Object.values(o).reduce((s, v) => s + v, 0);
const totalNs = (pid) => {
  let ns = 0;
  for (const { ns: n } of threadCpu(pid).values()) ns += n;
  return ns;
};
// A stdout line's kind: `assistant text`, `assistant tool_use`, `user tool_result`, `result`, ...
const lineKind = (msg) => {
  const blocks = Array.isArray(msg.message?.content) ? msg.message.content.map((b) => b.type) : [];
  return [msg.type, msg.subtype, ...new Set(blocks)].filter(Boolean).join(' ');
};

// ---------------------------------------------------------------- one CLI per variant
// A file of about `kb` KiB of numbered note lines, different for each turn.
const notes = (i, kb) => Array.from({ length: Math.ceil((kb * 1024) / 48) }, (_, n) => `Note ${i}.${n}: nothing much to see on this line.`.padEnd(47)).join('\n');
const root = mkdtempSync(join(tmpdir(), 'orbit-cli-profile-'));
const clis = variants.map((v) => {
  const dir = join(root, v.name.replace(/[^\w.-]/g, '_'));
  const home = join(dir, 'home');
  const ws = join(dir, 'ws');
  mkdirSync(home, { recursive: true });
  mkdirSync(ws, { recursive: true });
  for (let i = 0; i < TURNS + WARMUP; i += 1) writeFileSync(join(ws, `mk${i}t.md`), FILE_KB > 0 ? notes(i, FILE_KB) : 'Notes: nothing to see here.\n');
  if (GIT) {
    const git = (...a) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...a], { cwd: ws, stdio: 'ignore' });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'notes');
  }
  const env = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    ORBIT_OWN_CLAUDE: '1',
  };
  for (const k of ['ELECTRON_RUN_AS_NODE', 'ORBIT_LOG', 'XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS', 'BUN_OPTIONS']) delete env[k];
  if (PROF_DIR) {
    const pd = resolve(PROF_DIR, v.name);
    rmSync(pd, { recursive: true, force: true });
    mkdirSync(pd, { recursive: true });
    env.BUN_OPTIONS = `--cpu-prof --cpu-prof-dir=${pd}`;
  }
  for (const [k, val] of Object.entries(v.env)) {
    if (val === '') delete env[k];
    else env[k] = val;
  }
  const child = spawn(CLAUDE, [...baseArgs(v.drop), ...v.args], { cwd: ws, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const cli = { v, ws, child, pid: child.pid, waiters: [], held: '', stderr: '', turns: [], spawnedAt: performance.now(), firstLines: [] };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => { cli.stderr = (cli.stderr + c).slice(-4000); });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    cli.held += chunk;
    let nl;
    while ((nl = cli.held.indexOf('\n')) >= 0) {
      const line = cli.held.slice(0, nl);
      cli.held = cli.held.slice(nl + 1);
      let msg;
      try { msg = JSON.parse(line); } catch { continue; }
      // Each line's moment and the CLI's CPU then (all threads): the turn cut at its own lines.
      if (cli.lines) cli.lines.push({ t: performance.now(), kind: lineKind(msg), ns: totalNs(cli.pid) });
      if (msg.type === 'control_request' && msg.request?.subtype === 'can_use_tool') {
        child.stdin.write(`${JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: msg.request_id, response: { behavior: 'allow', updatedInput: msg.request.input } } })}\n`);
      }
      for (const w of cli.waiters.splice(0)) w(msg, performance.now());
    }
  });
  return cli;
});

const untilResult = (cli, timeoutMs = 60_000) => new Promise((ok, fail) => {
  const timer = setTimeout(() => fail(new Error(`${cli.v.name}: no result in ${timeoutMs} ms; stderr: ${cli.stderr}`)), timeoutMs);
  const wait = (msg, t) => {
    if (msg.type === 'result') {
      clearTimeout(timer);
      ok({ t, msg });
    } else cli.waiters.push(wait);
  };
  cli.waiters.push(wait);
});
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// Turns 0..WARMUP-1 are each process's first (its start-up, the JIT's warm-up); the next TURNS
// are the measured ones.
for (let i = 0; i < TURNS + WARMUP; i += 1) {
  for (let k = 0; k < clis.length; k += 1) {
    const cli = clis[(i + k) % clis.length];
    const file = join(cli.ws, `mk${i}t.md`);
    const before = threadCpu(cli.pid);
    cli.lines = [{ t: performance.now(), kind: 'prompt', ns: sum(Object.fromEntries([...before].map(([k, v]) => [k, v.ns]))) }];
    const t0 = performance.now();
    const wallStart = Date.now();
    const done = untilResult(cli);
    cli.child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: `Please read it (cli-profile turn ${i} file ${file}).` } })}\n`);
    const { t, msg } = await done;
    const atResult = threadCpu(cli.pid);
    await sleep(PAUSE_MS);
    const after = threadCpu(cli.pid);
    const lines = cli.lines;
    cli.lines = null;
    lines.push({ t: performance.now(), kind: `${PAUSE_MS} ms later`, ns: sum(Object.fromEntries([...after].map(([k, v]) => [k, v.ns]))) });
    // Segments between consecutive lines: `prev -> next`, CPU ms and wall ms.
    const segments = lines.slice(1).map((l, j) => ({ seg: `${lines[j].kind} -> ${l.kind}`, cpu: (l.ns - lines[j].ns) / 1e6, wall: l.t - lines[j].t }));
    const toResult = diffByFamily(before, atResult);
    const tail = diffByFamily(atResult, after);
    cli.turns.push({ i, segments, lines: lines.map((l) => ({ t: performance.timeOrigin + l.t, kind: l.kind })), wallStart, wallMs: t - t0, ok: msg.subtype === 'success' && !msg.is_error, toResult, tail, cpuToResult: sum(toResult), cpuTail: sum(tail) });
  }
}

// The CLIs end when their stdin does (Bun writes its CPU profile then).
await Promise.all(clis.map((cli) => new Promise((ok) => {
  cli.child.once('exit', ok);
  cli.child.stdin.end();
  setTimeout(() => { cli.child.kill('SIGTERM'); }, 15_000).unref();
})));
api.close();

// ---------------------------------------------------------------- the profile's split
// A Bun/JSC .cpuprofile (Chrome's format): nodes with callFrame, samples + timeDeltas (µs).
// Samples are kept only inside the measured turns' windows (prompt -> result + pause), placed on
// the wall clock by the profile's own startTime, which Bun takes from the wall clock in µs.
const area = (cf) => {
  const name = cf.functionName || '(anonymous)';
  if (name === '(garbage collector)' || name === '(program)' || name === '(idle)' || name === '(root)') return name;
  const url = cf.url || '';
  if (!url) return '(native)';
  if (/^(node:|bun:|internal:|builtin:)/.test(url) || url.includes('[native code]')) return url.split('/')[0];
  return url.replace(/^.*\//, '');
};
// What a sample was doing, by the nearest of these frames on its stack (from the leaf up): markers
// in the bundle of the pinned CLI (2.1.328; its minified names and places change with a version).
const CATEGORIES = [
  ['the tool\'s permission check (Read: the path\'s spellings, lstat/realpath, the rules)', /^checkPermissions chunk-k90mh50x\.js:3194:/],
  ['the transcript (the session\'s JSONL written)', /^(drainQueuesOnce|appendToFile|reAppendSessionMetadataAsync) |^appendEntry chunk-k90mh50x\.js:289:|^(bound )?appendFile /],
  ['stdout: the stream-json lines written', /^write chunk-eybxr1ax\.js:11:|^(bound )?writeFast /],
  ['stdin: the prompt\'s line read', /^read chunk-eybxr1ax\.js:7:/],
  ['per-turn attachments (CLAUDE.md and memory files, token usage, reminders)', /^(fjs|Oho|\(anonymous\)) chunk-k90mh50x\.js:(3401|3408):|^D\$n chunk-k90mh50x\.js:862:/],
  ['the tool call (input checks, hooks\' checks, Read run, its result)', /^(eui|PF) chunk-k90mh50x\.js:(3561|3556):|^gBs chunk-k90mh50x\.js:3195:/],
  ['the model request (its body built: messages, tools, system; the client; the SSE stream read into messages)', /^(fOs|\$ze|ev|kEs) chunk-k90mh50x\.js:(2734|2733|2736|2320):|^(makeRequest|d0|\(anonymous\)) chunk-7pyh6v91\.js:(48|63):|^(ae|\(anonymous\)) chunk-xmyp9x5e\.js:5:/],
  ['the agent loop (its turn state, stop hooks\' checks)', /^(_g|N2|hg|Sg|Om|Sd) chunk-y7kezv0z\.js:/],
  ['the stream-json session (the prompt taken in, system/init, the turn\'s bookkeeping)', /^(Ea|ce|Tr|Ps|pa) chunk-pcb1esyp\.js:|^(Dt|Yt|so) chunk-65atxfxc\.js:|^(tdt|ud|\(anonymous\)) chunk-ajyk0j78\.js:|^IFr chunk-jscgcg8m\.js:/],
  ['garbage collection (on the main thread)', /^\(garbage collector\) /],
  ['the runtime outside JS ((program))', /^\(program\) /],
  ['JSON.stringify, elsewhere', /^stringify :/],
];
const profileSummary = (dir, windows) => {
  let files = [];
  try { files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')); } catch { return null; }
  if (files.length === 0) return null;
  const prof = JSON.parse(readFileSync(join(dir, files[0]), 'utf8'));
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfBy = new Map();
  const byArea = new Map();
  const stackBy = new Map();
  const catBy = new Map();
  const frameKey = (cf) => `${cf.functionName || '(anonymous)'} ${(cf.url || '').replace(/^.*\//, '')}:${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
  let t = prof.startTime;
  let inTurns = 0;
  let total = 0;
  const w0 = windows.map(([a, b]) => [a * 1000, b * 1000]);
  // JSC samples the main thread only while it runs JS (an idle event loop gives one sample whose
  // delta is the whole wait), so each sample counts as one: the split is by sample count, scaled
  // by the caller to the main thread's CPU measured from schedstat.
  for (let s = 0; s < prof.samples.length; s += 1) {
    t += prof.timeDeltas[s] ?? 0;
    const dt = 1;
    total += dt;
    if (!w0.some(([a, b]) => t >= a && t <= b)) continue;
    inTurns += dt;
    const node = nodes.get(prof.samples[s]);
    if (!node) continue;
    const cf = node.callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${area(cf)}:${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
    selfBy.set(key, (selfBy.get(key) ?? 0) + dt);
    byArea.set(area(cf), (byArea.get(area(cf)) ?? 0) + dt);
    // The first named frames from the root: what the sample was doing, coarsely.
    const chain = [];
    for (let id = node.id; id !== undefined; id = parent.get(id)) chain.push({ name: nodes.get(id).callFrame.functionName || '(anon)', key: frameKey(nodes.get(id).callFrame) });
    let cat = 'other';
    for (const f of chain) {
      const hit = CATEGORIES.slice(0, -1).find(([, re]) => re.test(f.key));
      if (hit) { cat = hit[0]; break; }
    }
    // JSON.stringify counts as itself only where no frame above says what it serves.
    if (cat === 'other' && CATEGORIES.at(-1)[1].test(chain[0].key)) cat = CATEGORIES.at(-1)[0];
    catBy.set(cat, (catBy.get(cat) ?? 0) + dt);
    const top = chain.map((f) => f.name).reverse().filter((f) => f !== '(root)' && f !== '(anon)').slice(0, 4).join(' > ');
    stackBy.set(top, (stackBy.get(top) ?? 0) + dt);
  }
  const sorted = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, Math.round(v * 10) / 10]);
  return { file: join(dir, files[0]), startTime: prof.startTime, endTime: prof.endTime, samples: total, inTurns, self: sorted(selfBy, 60), areas: sorted(byArea, 30), stacks: sorted(stackBy, 40), categories: sorted(catBy, 20) };
};

// ---------------------------------------------------------------- report
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))] : NaN;
};
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const out = [];
const result = { turns: TURNS, warmup: WARMUP, pauseMs: PAUSE_MS, variants: {} };
out.push(`claude CLI CPU per turn (${TURNS} turns after the first ${WARMUP}; ms; schedstat)`);
out.push(`${'variant'.padEnd(24)} ${'cpu->result p50'.padStart(16)} ${'mean'.padStart(7)} ${'p90'.padStart(7)} ${'after p50'.padStart(10)} ${'mean'.padStart(7)} ${'turn wall p50'.padStart(14)} ${'p90'.padStart(7)} ${'first turn cpu'.padStart(15)} ${'ok'.padStart(4)}`);
for (const cli of clis) {
  const measured = cli.turns.filter((t) => t.i >= WARMUP);
  const first = cli.turns.find((t) => t.i === 0);
  const c = measured.map((t) => t.cpuToResult);
  const a = measured.map((t) => t.cpuTail);
  const w = measured.map((t) => t.wallMs);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const threads = {};
  for (const t of measured) for (const [k, v] of Object.entries(t.toResult)) threads[k] = (threads[k] ?? 0) + v / measured.length;
  const tailThreads = {};
  for (const t of measured) for (const [k, v] of Object.entries(t.tail)) tailThreads[k] = (tailThreads[k] ?? 0) + v / measured.length;
  const r = {
    env: cli.v.env,
    cpuToResult: { p50: q(c, 0.5), mean: mean(c), p90: q(c, 0.9) },
    cpuAfterResult: { p50: q(a, 0.5), mean: mean(a) },
    wallMs: { p50: q(w, 0.5), mean: mean(w), p90: q(w, 0.9) },
    firstTurn: { cpu: first.cpuToResult + first.cpuTail, wallMs: first.wallMs },
    args: [...baseArgs(cli.v.drop), ...cli.v.args],
    threadsToResult: Object.fromEntries(Object.entries(threads).sort((x, y) => y[1] - x[1])),
    threadsAfterResult: Object.fromEntries(Object.entries(tailThreads).sort((x, y) => y[1] - x[1])),
    okTurns: measured.filter((t) => t.ok).length,
    // The turn cut at its stdout lines: mean CPU and wall ms per segment (in the order first seen).
    segments: (() => {
      const m = new Map();
      for (const t of measured) for (const g of t.segments) {
        const e = m.get(g.seg) ?? { n: 0, cpu: 0, wall: 0 };
        e.n += 1; e.cpu += g.cpu; e.wall += g.wall;
        m.set(g.seg, e);
      }
      return [...m].map(([seg, e]) => ({ seg, n: e.n, cpuMean: e.cpu / measured.length, wallMean: e.wall / e.n }));
    })(),
    perTurn: cli.turns.map((t) => ({ i: t.i, jit: Math.round(((t.toResult.JITWorker ?? 0) + (t.tail.JITWorker ?? 0)) * 10) / 10, cpu: Math.round(t.cpuToResult * 10) / 10, after: Math.round(t.cpuTail * 10) / 10, wall: Math.round(t.wallMs * 10) / 10 })),
  };
  if (PROF_DIR) {
    const windows = measured.map((t) => [t.wallStart, t.wallStart + t.wallMs + PAUSE_MS]);
    r.profile = profileSummary(resolve(PROF_DIR, cli.v.name), windows);
    if (r.profile) {
      r.profile.windows = windows;
      r.profile.lines = measured.map((t) => t.lines);
    }
    if (r.profile) writeFileSync(resolve(PROF_DIR, cli.v.name, 'summary.json'), `${JSON.stringify(r, null, 1)}\n`);
  }
  result.variants[cli.v.name] = r;
  out.push(`${cli.v.name.padEnd(24)} ${f1(r.cpuToResult.p50).padStart(16)} ${f1(r.cpuToResult.mean).padStart(7)} ${f1(r.cpuToResult.p90).padStart(7)} ${f1(r.cpuAfterResult.p50).padStart(10)} ${f1(r.cpuAfterResult.mean).padStart(7)} ${f1(r.wallMs.p50).padStart(14)} ${f1(r.wallMs.p90).padStart(7)} ${f1(r.firstTurn.cpu).padStart(15)} ${String(r.okTurns).padStart(4)}`);
}
for (const [name, r] of Object.entries(result.variants)) {
  out.push(`\n${name}: threads, mean ms per turn (prompt -> result | after the result)`);
  for (const [k, v] of Object.entries(r.threadsToResult)) out.push(`  ${k.padEnd(28)} ${f1(v).padStart(7)} | ${f1(r.threadsAfterResult[k] ?? 0).padStart(6)}`);
  out.push(`${name}: the turn cut at the CLI's stdout lines (CPU ms per turn, all threads | wall ms; n)`);
  for (const g of r.segments) out.push(`  ${g.seg.padEnd(64)} ${f1(g.cpuMean).padStart(6)} | ${f1(g.wallMean).padStart(6)}  ${g.n}`);
  if (r.profile) {
    // A sample's share of the turns' samples, as ms of the main thread's CPU per turn.
    const mainMs = (r.threadsToResult.claude ?? 0) + (r.threadsAfterResult.claude ?? 0);
    const n = r.profile.inTurns / mainMs;
    out.push(`  profile: ${r.profile.inTurns} samples in the turns' windows (${r.profile.samples} in all); shown as ms of the main thread's ${f1(mainMs)} ms per turn`);
    out.push('  by what it was doing (ms per turn):');
    for (const [k, v] of r.profile.categories) out.push(`    ${f1(v / n).padStart(7)}  ${k}`);
    out.push('  by area (ms per turn):');
    for (const [k, v] of r.profile.areas.slice(0, 12)) out.push(`    ${f1(v / n).padStart(7)}  ${k}`);
    out.push('  by the first frames of the stack (ms per turn):');
    for (const [k, v] of r.profile.stacks.slice(0, 25)) out.push(`    ${f1(v / n).padStart(7)}  ${k}`);
    out.push('  self, by function (ms per turn):');
    for (const [k, v] of r.profile.self.slice(0, 30)) out.push(`    ${f1(v / n).padStart(7)}  ${k}`);
  }
}
process.stderr.write(`${out.join('\n')}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
rmSync(root, { recursive: true, force: true });
