#!/usr/bin/env node
// A small stand-in for `orbit open`'s page server, for developing the page
// and the e2e scenarios without the Rust server. It speaks the channel of
// docs/page-protocol.md (hello, snapshot, seq, resume, acks) and plays a
// scripted Claude chosen by words in the prompt: "permission" asks to Edit
// a file, "question" asks questions, "slow" streams for a long time,
// anything else replies at once. Every frame it sends is validated against
// the schema. Not the real server: the lead's harness runs the real one.
//
//   node e2e/mock-server.mjs [--port N] [--untrusted] [--no-agent]
// prints `http://127.0.0.1:PORT/login?token=…` as its first line.
import { encodeMap, syntheticMap } from './map-encoder.mjs';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, normalize, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { Validator } from '@cfworker/json-schema';

const here = dirname(fileURLToPath(import.meta.url));
// MOCK_DIST: another build of the page (the page benchmark's `--before`).
const dist = process.env.MOCK_DIST || join(here, '..', 'dist');
const schema = JSON.parse(await readFile(join(here, '..', '..', 'docs', 'page-protocol.schema.json'), 'utf8'));
const hostFrameValidator = new Validator({ $defs: schema.$defs, $ref: '#/$defs/HostFrame' }, '2020-12', false);
const pageFrameValidator = new Validator({ $defs: schema.$defs, $ref: '#/$defs/PageFrame' }, '2020-12', false);

const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] ?? 0) || 0;
const WORKSPACE_ID = '0123456789abcdef';
const INSTANCE_ID = randomBytes(8).toString('hex');
let token = randomBytes(16).toString('hex');
const COOKIE = `orbit-${INSTANCE_ID}`;
const cookieValue = randomBytes(16).toString('hex');

const FILES = {
  'src/a.rs': Array.from({ length: 60 }, (_, i) => `// line ${i + 1} of src/a.rs`).join('\n'),
  'README.md': '# demo\n\nA demo workspace.\n',
};

const workspace = {
  id: WORKSPACE_ID,
  name: 'demo',
  root: '/tmp/demo',
  trusted: !args.includes('--untrusted'),
  agent: args.includes('--no-agent')
    ? { available: false, version: null, path: null, message: 'No `claude` found on PATH, ~/.local/bin, ~/.claude/local, /opt/homebrew/bin or /usr/local/bin. Install Claude Code (npm install -g @anthropic-ai/claude-code) or set claude.path.' }
    : { available: true, version: '2.1.267', path: '/usr/local/bin/claude', message: null },
  graph: { files: Object.keys(FILES).length, hash: 'deadbeef' },
};

// --- The log: every seq'd frame, bounded.
const LOG_LIMIT = 500;
let seq = 0;
const log = [];
const sockets = new Set();

const entryValidator = new Validator({ $defs: schema.$defs, $ref: '#/$defs/TranscriptEntry' }, '2020-12', false);
// Entries already checked (the log's frames and every snapshot repeat them):
// a snapshot checks its frame with the entries left out, and each entry once.
const checkedEntries = new WeakSet();

function check(frame) {
  const entries = frame.body.type === 'transcript' ? frame.body.entries : null;
  if (entries) {
    for (const entry of entries) {
      if (checkedEntries.has(entry)) continue;
      const result = entryValidator.validate(entry);
      if (!result.valid) {
        console.error('mock: invalid entry', JSON.stringify(entry), JSON.stringify(result.errors.slice(-3)));
        process.exit(2);
      }
      checkedEntries.add(entry);
    }
    frame = { ...frame, body: { ...frame.body, entries: [] } };
  }
  const result = hostFrameValidator.validate(frame);
  if (!result.valid) {
    console.error('mock: invalid frame', JSON.stringify(frame), JSON.stringify(result.errors.slice(-3)));
    process.exit(2);
  }
}

function broadcast(body) {
  seq += 1;
  const frame = { seq, body };
  check(frame);
  log.push(frame);
  if (log.length > LOG_LIMIT) log.shift();
  for (const ws of sockets) if (ws.ready) ws.send(JSON.stringify(frame));
}

function direct(ws, body) {
  const frame = { seq: null, body };
  check(frame);
  ws.send(JSON.stringify(frame));
}

// --- Conversations.
const conversations = new Map();
let current = null;
let counter = 0;
let entrySeq = 0;
let requestCounter = 0;
const acks = new Map();

function newConversation() {
  counter += 1;
  const key = `c${counter}`;
  const convo = {
    key,
    title: null,
    session: { key, phase: 'idle', label: null, file: null, pending: [], turns: 0, turnCostUsd: null, totalCostUsd: 0, model: 'claude-sonnet-4-5', permissionMode: 'default', sessionId: null, lastOutcome: null, error: null, subagents: 0 },
    transcript: [],
    timers: [],
    turnStarted: 0,
    onAnswer: null,
  };
  conversations.set(key, convo);
  current = key;
  sendSessions();
  sendSession(convo);
  return convo;
}

function sendSessions() {
  broadcast({
    type: 'sessions',
    current,
    conversations: [...conversations.values()].map((c) => ({ key: c.key, phase: c.session.phase, title: c.title, sessionId: c.session.sessionId, warm: true })),
  });
}

function sendSession(c) {
  broadcast({ type: 'session', ...c.session });
}

function addEntries(c, bodies) {
  const entries = bodies.map((body) => {
    entrySeq += 1;
    return { seq: entrySeq, turn: c.session.turns, subagent: null, body };
  });
  c.transcript.push(...entries);
  if (c.transcript.length > 400) c.transcript.splice(0, c.transcript.length - 400);
  broadcast({ type: 'transcript', key: c.key, subagents: false, reset: false, entries });
}

function setPhase(c, phase, label, extra = {}) {
  Object.assign(c.session, { phase, label }, extra);
  sendSession(c);
}

function later(c, ms, f) {
  c.timers.push(setTimeout(f, ms));
}

function clearTimers(c) {
  for (const t of c.timers) clearTimeout(t);
  c.timers = [];
}

function endTurn(c, outcome) {
  clearTimers(c);
  const cost = 0.0123;
  const bodies = [];
  if (outcome === 'interrupted') bodies.push({ kind: 'stopped' });
  bodies.push({ kind: 'turnEnd', outcome, durationMs: Date.now() - c.turnStarted, costUsd: cost });
  addEntries(c, bodies);
  c.session.pending = [];
  c.onAnswer = null;
  setPhase(c, 'idle', null, { lastOutcome: outcome, turnCostUsd: cost, totalCostUsd: c.session.totalCostUsd + cost });
  sendSessions();
}

function reply(text) {
  return { kind: 'reply', messageId: `msg_${randomBytes(4).toString('hex')}`, nodes: [{ t: 'paragraph', children: [{ t: 'text', text }] }] };
}

function startTurn(c, text) {
  c.session.turns += 1;
  c.turnStarted = Date.now();
  if (!c.title) c.title = text.slice(0, 120);
  c.session.lastOutcome = null;
  addEntries(c, [{ kind: 'prompt', text, skills: [], files: [] }]);
  setPhase(c, 'thinking', 'Thinking', { turnCostUsd: null });
  sendSessions();
  const lower = text.toLowerCase();
  if (lower.includes('permission') && c.allowEdits) {
    later(c, 200, () => {
      addEntries(c, [{ kind: 'tool', toolUseId: `toolu_auto${c.session.turns}`, tool: 'Edit', detail: 'src/a.rs', file: 'src/a.rs' }, reply('Edited again, without asking.')]);
      endTurn(c, 'completed');
    });
  } else if (lower.includes('permission')) {
    later(c, 300, () => {
      requestCounter += 1;
      const requestId = `req-${requestCounter}`;
      const toolUseId = `toolu_${requestCounter}`;
      c.session.pending = [{
        kind: 'permission', requestId, tool: 'Edit', toolUseId, title: 'Edit src/a.rs', file: 'src/a.rs',
        input: { file_path: '/tmp/demo/src/a.rs', old_string: '// line 3 of src/a.rs', new_string: '// line three of src/a.rs' },
        always: 'Allow all edits in this session', reason: null, blockedPath: null, subagent: null,
      }];
      setPhase(c, 'waiting', 'Waiting for you');
      sendSessions();
      c.onAnswer = (request) => {
        if (request.type !== 'answerPermission' || request.requestId !== requestId) return 'wrong_card';
        c.session.pending = [];
        if (request.choice === 'always') c.allowEdits = true;
        if (request.choice === 'deny') {
          addEntries(c, [{ kind: 'denied', toolUseId, tool: 'Edit', message: request.message ?? 'The user denied this.' }]);
        } else {
          addEntries(c, [{ kind: 'tool', toolUseId, tool: 'Edit', detail: 'src/a.rs', file: 'src/a.rs' }]);
        }
        setPhase(c, 'writing', 'Writing a reply');
        later(c, 200, () => {
          addEntries(c, [reply(request.choice === 'deny' ? 'Understood, I left the file alone.' : 'Edited [src/a.rs:3](src/a.rs:3).')]);
          endTurn(c, 'completed');
        });
        return null;
      };
    });
  } else if (lower.includes('question')) {
    later(c, 300, () => {
      requestCounter += 1;
      const requestId = `req-${requestCounter}`;
      c.session.pending = [{
        kind: 'questions', requestId, toolUseId: `toolu_${requestCounter}`, subagent: null,
        questions: [
          { question: 'Which colour should the button be?', header: 'Colour', multiSelect: false, options: [{ label: 'Blue', description: 'Calm' }, { label: 'Red', description: 'Loud' }] },
          { question: 'Which platforms?', header: 'Platforms', multiSelect: true, options: [{ label: 'Linux', description: '' }, { label: 'macOS', description: '' }] },
        ],
      }];
      setPhase(c, 'waiting', 'Waiting for you');
      sendSessions();
      c.onAnswer = (request) => {
        if (request.requestId !== requestId) return 'not_pending';
        c.session.pending = [];
        if (request.type === 'skipQuestions') {
          addEntries(c, [{ kind: 'denied', toolUseId: `toolu_${requestCounter}`, tool: 'AskUserQuestion', message: 'The user skipped the questions.' }]);
          addEntries(c, [reply('You skipped the questions.')]);
        } else if (request.type === 'answerQuestions') {
          const said = request.answers.map((a) => a.text ?? a.options.join(' and ')).join('; ');
          addEntries(c, [reply(`You answered: ${said}`)]);
        } else return 'wrong_card';
        endTurn(c, 'completed');
        return null;
      };
    });
  } else if (lower.includes('xss')) {
    later(c, 200, () => {
      addEntries(c, [reply('<img src=x onerror="window.__orbitXss=1"><script>window.__orbitXss=2</script>')]);
      endTurn(c, 'completed');
    });
  } else if (lower.includes('slow')) {
    setPhase(c, 'writing', 'Writing a reply');
    let n = 0;
    const tick = () => {
      n += 1;
      addEntries(c, [reply(`Part ${n} of a long reply.`)]);
      if (n < 80) later(c, 200, tick);
      else endTurn(c, 'completed');
    };
    later(c, 200, tick);
  } else {
    later(c, 200, () => setPhase(c, 'writing', 'Writing a reply'));
    later(c, 500, () => {
      addEntries(c, [
        { kind: 'tool', toolUseId: 'toolu_read', tool: 'Read', detail: 'src/a.rs', file: 'src/a.rs' },
        { kind: 'reply', messageId: 'msg_1', nodes: [
          { t: 'paragraph', children: [{ t: 'text', text: 'Hello from the mock. See ' }, { t: 'link', href: 'src/a.rs:12', file: 'src/a.rs', external: false, children: [{ t: 'code', text: 'src/a.rs:12' }] }, { t: 'text', text: '.' }] },
        ] },
      ]);
      endTurn(c, 'completed');
    });
  }
}

function apply(request) {
  const trusted = workspace.trusted;
  switch (request.type) {
    case 'prompt': {
      if (!trusted) return ['untrusted', 'This folder is not trusted.'];
      if (!request.text.trim()) return ['empty_prompt', 'The prompt is empty.'];
      let c;
      if (request.key) {
        c = conversations.get(request.key);
        if (!c) return ['unknown_conversation', 'No such conversation.'];
        if (c.session.phase !== 'idle' && c.session.phase !== 'failed') return ['busy', 'That conversation is busy.'];
      } else {
        const cur = current ? conversations.get(current) : null;
        c = cur && (cur.session.phase === 'idle' || cur.session.phase === 'failed') ? cur : newConversation();
      }
      current = c.key;
      startTurn(c, request.text);
      return null;
    }
    case 'answerPermission':
    case 'answerQuestions':
    case 'skipQuestions': {
      const c = conversations.get(request.key);
      if (!c?.onAnswer) return ['not_pending', 'That card is no longer waiting.'];
      const code = c.onAnswer(request);
      return code ? [code, 'That answer does not fit the card.'] : null;
    }
    case 'stop': {
      const c = conversations.get(request.key);
      if (!c) return ['unknown_conversation', 'No such conversation.'];
      if (c.session.phase === 'idle') return null;
      clearTimers(c);
      setPhase(c, 'stopping', 'Stopping');
      later(c, 300, () => endTurn(c, 'interrupted'));
      return null;
    }
    case 'stopAll':
      for (const c of conversations.values()) if (c.session.phase !== 'idle') apply({ type: 'stop', key: c.key });
      return null;
    case 'newConversation':
      newConversation();
      return null;
    default:
      return ['unsupported', `The mock does not do ${request.type}.`];
  }
}

/** What a fresh connection gets: hello, the state, snapshotEnd (also put in the page's HTML). */
function snapshotBodies() {
  const bodies = [
    { type: 'hello', protocol: 1, instanceId: INSTANCE_ID, workspaceId: WORKSPACE_ID, head: seq, resumed: false },
    { type: 'workspace', ...workspace },
    { type: 'sessions', current, conversations: [...conversations.values()].map((c) => ({ key: c.key, phase: c.session.phase, title: c.title, sessionId: null, warm: true })) },
  ];
  for (const c of conversations.values()) {
    bodies.push({ type: 'session', ...c.session });
    bodies.push({ type: 'transcript', key: c.key, subagents: false, reset: true, entries: c.transcript });
    bodies.push({ type: 'transcript', key: c.key, subagents: true, reset: true, entries: [] });
  }
  bodies.push({ type: 'snapshotEnd' });
  return bodies;
}

/** The page with the snapshot in a JSON data block, as Orbit serves it (`<` escaped: the block cannot end early). */
async function pageHtml() {
  const html = await readFile(join(dist, 'index.html'), 'utf8');
  if (process.env.MOCK_NO_PRELOAD) return html;
  const frames = snapshotBodies().map((body) => {
    const frame = { seq: null, body };
    check(frame);
    return frame;
  });
  const block = `<script type="application/json" id="orbit-snapshot">${JSON.stringify(frames).replaceAll('<', '\\u003c')}</script>`;
  // A small map's bytes too, in base64 before the snapshot, as Orbit puts them (at most MAP_IN_PAGE_MAX_BYTES).
  const map = Buffer.from(mockMapBody());
  const mapBlock = process.env.MOCK_NO_MAP_BLOCK || map.length > MAP_IN_PAGE_MAX_BYTES ? '' : `<script type="application/octet-stream" id="orbit-map">${map.toString('base64')}</script>`;
  return html.replace('</body>', `${mapBlock}${block}</body>`);
}

function handleFrame(ws, frame) {
  const checked = pageFrameValidator.validate(frame);
  if (!checked.valid) {
    direct(ws, { type: 'refused', request: 'frame', code: 'bad_frame', message: 'That frame is not in the protocol.' });
    return;
  }
  if (frame.type === 'resume') {
    const resumable = frame.instanceId === INSTANCE_ID && frame.lastSeq !== null && (log.length === 0 ? frame.lastSeq === seq : frame.lastSeq >= log[0].seq - 1);
    if (resumable) {
      direct(ws, { type: 'hello', protocol: 1, instanceId: INSTANCE_ID, workspaceId: WORKSPACE_ID, head: seq, resumed: true });
      for (const f of log) if (f.seq > frame.lastSeq) ws.send(JSON.stringify(f));
    } else {
      for (const body of snapshotBodies()) direct(ws, body);
    }
    ws.ready = true;
    return;
  }
  if (frame.type === 'search') {
    answerSearch(ws, frame);
    return;
  }
  const id = frame.id;
  if (acks.has(id)) {
    direct(ws, acks.get(id));
    return;
  }
  let ack;
  if (frame.type === 'trust') {
    workspace.trusted = true;
    broadcast({ type: 'workspace', ...workspace });
    ack = { type: 'ack', id, ok: true, code: null, message: null };
  } else {
    const refusal = apply(frame.request);
    ack = refusal
      ? { type: 'ack', id, ok: false, code: refusal[0], message: refusal[1] }
      : { type: 'ack', id, ok: true, code: null, message: null };
  }
  acks.set(id, ack);
  direct(ws, ack);
}

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.svg': 'image/svg+xml' };
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function hasCookie(req) {
  return (req.headers.cookie ?? '').split(/;\s*/).includes(`${COOKIE}=${cookieValue}`);
}

let listening = 0;
const hostOk = (req) => [`127.0.0.1:${listening}`, `localhost:${listening}`].includes(req.headers.host ?? '');

// The map: MOCK_MAP_FILES made-up files (default 60). In the page's HTML when it is at most this
// long (orbit-server's MAP_IN_PAGE_MAX_BYTES; MOCK_NO_MAP_BLOCK=1: never, the page fetches it).
const MAP_IN_PAGE_MAX_BYTES = 256 * 1024;
let mockMapCache = null;
function mockMap() {
  mockMapCache ??= syntheticMap(Number(process.env.MOCK_MAP_FILES ?? 60));
  return mockMapCache;
}
function mockMapBody() {
  return encodeMap(mockMap());
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  // Cross-origin isolated, as Orbit serves it (the search worker's hand-over needs it).
  const headers = {
    'Content-Security-Policy': CSP, 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin',
  };
  if (!hostOk(req)) {
    res.writeHead(421, headers).end('Wrong Host.');
    return;
  }
  if (url.pathname === '/login') {
    if (url.searchParams.get('token') !== token) {
      res.writeHead(403, headers).end('This login address was already used.');
      return;
    }
    token = randomBytes(16).toString('hex');
    res.writeHead(303, { ...headers, 'Set-Cookie': `${COOKIE}=${cookieValue}; HttpOnly; SameSite=Strict; Path=/`, Location: `/w/${WORKSPACE_ID}/` }).end();
    return;
  }
  if (url.pathname === '/mock/flood') {
    // A long session at once: `n` entries into the current conversation (in
    // frames of 50), then, with `bytes`, one reply of that many bytes.
    const c = (current && conversations.get(current)) || newConversation();
    const n = Number(url.searchParams.get('n') ?? 0);
    const bytes = Number(url.searchParams.get('bytes') ?? 0);
    const word = url.searchParams.get('word') ?? '';
    for (let done = 0; done < n; done += 50) {
      const bodies = [];
      for (let i = done; i < Math.min(n, done + 50); i += 1) {
        const text = `Entry ${entrySeq + bodies.length + 1}: ${'a long line of conversation text, '.repeat(6)}${i === n - 300 && word ? ` ${word}` : ''}`;
        bodies.push(i % 3 === 0
          ? { kind: 'prompt', text, skills: [], files: [] }
          : i % 3 === 1
            ? { kind: 'reply', messageId: `m${entrySeq + bodies.length}`, nodes: [{ t: 'paragraph', children: [{ t: 'text', text }] }] }
            : { kind: 'tool', toolUseId: `t${entrySeq + bodies.length}`, tool: 'Bash', detail: text.slice(0, 80), file: null });
      }
      addEntries(c, bodies);
    }
    // With `subagent`, a Task call whose subagent then sends that many entries (its own history);
    // with `task` too, more entries of that Task's subagent.
    const subagent = Number(url.searchParams.get('subagent') ?? 0);
    if (subagent > 0) {
      let task = url.searchParams.get('task');
      if (!task) {
        task = `task${entrySeq + 1}`;
        addEntries(c, [{ kind: 'tool', toolUseId: task, tool: 'Task', detail: 'Explore the code', file: null }]);
      }
      for (let done = 0; done < subagent; done += 50) {
        const entries = [];
        for (let i = done; i < Math.min(subagent, done + 50); i += 1) {
          entrySeq += 1;
          const text = `Subagent entry ${entrySeq}: ${'what the subagent found in the code, '.repeat(6)}`;
          const body = i % 2 === 0
            ? { kind: 'reply', messageId: `s${entrySeq}`, nodes: [{ t: 'paragraph', children: [{ t: 'text', text }] }] }
            : { kind: 'tool', toolUseId: `st${entrySeq}`, tool: 'Grep', detail: text.slice(0, 80), file: null };
          entries.push({ seq: entrySeq, turn: c.session.turns, subagent: task, body });
        }
        broadcast({ type: 'transcript', key: c.key, subagents: true, reset: false, entries });
      }
    }
    if (bytes > 0) {
      const paragraph = 'Streaming reply text that goes on and on. '.repeat(24);
      const count = Math.max(1, Math.round(bytes / paragraph.length));
      const nodes = Array.from({ length: count }, () => ({ t: 'paragraph', children: [{ t: 'text', text: paragraph }] }));
      addEntries(c, [{ kind: 'reply', messageId: `big${entrySeq}`, nodes }]);
    }
    res.writeHead(200, headers).end(String(entrySeq));
    return;
  }
  if (url.pathname === '/mock/drop') {
    for (const ws of sockets) ws.terminate();
    res.writeHead(200, headers).end('dropped');
    return;
  }
  if (!hasCookie(req)) {
    res.writeHead(401, headers).end('Open the login address Orbit printed.');
    return;
  }
  if (url.pathname === `/w/${WORKSPACE_ID}/file`) {
    const text = FILES[url.searchParams.get('path') ?? ''];
    if (text === undefined) {
      res.writeHead(404, headers).end('Not a graph file.');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Security-Policy': 'sandbox' }).end(text);
    return;
  }
  if (url.pathname === `/w/${WORKSPACE_ID}/map`) {
    res.writeHead(200, { ...headers, 'Content-Type': 'application/octet-stream', 'Cache-Control': 'no-store' }).end(Buffer.from(mockMapBody()));
    return;
  }
  if (url.pathname === `/w/${WORKSPACE_ID}/search`) {
    const q = url.searchParams.get('q') ?? '';
    const limit = Math.min(200, Number(url.searchParams.get('limit') ?? 20) || 20);
    const matches = mockSearch(q, limit);
    res.writeHead(200, { ...headers, 'Content-Type': 'application/json' }).end(JSON.stringify({ hash: mockMap().hash, matches }));
    return;
  }
  if (url.pathname === `/w/${WORKSPACE_ID}/` || url.pathname === `/w/${WORKSPACE_ID}`) {
    res.writeHead(200, { ...headers, 'Content-Type': TYPES['.html'], 'Cache-Control': 'no-store' }).end(await pageHtml());
    return;
  }
  let file;
  if (url.pathname.startsWith('/assets/')) file = join(dist, normalize(url.pathname).replace(/^(\.\.[/\\])+/, ''));
  if (!file || !file.startsWith(dist) || !existsSync(file)) {
    res.writeHead(404, headers).end('Not found');
    return;
  }
  // As Orbit serves them: hashed names, cached for good (MOCK_ASSET_NO_STORE=1: fetched every time).
  const cache = process.env.MOCK_ASSET_NO_STORE ? 'no-store' : 'public, max-age=31536000, immutable';
  res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': cache }).end(await readFile(file));
});

/** A plain subsequence match (the real server uses nucleo). */
function mockSearch(query, limit) {
  const q = query.toLowerCase();
  const matches = [];
  for (const node of mockMap().nodes) {
    if (!q || matches.length >= limit) break;
    const indices = [];
    let at = 0;
    for (const [i, ch] of Array.from(node.path.toLowerCase()).entries()) {
      if (at < q.length && ch === q[at]) {
        indices.push(i);
        at += 1;
      }
    }
    if (at === q.length) matches.push({ path: node.path, score: 100 - node.path.length, indices });
  }
  return matches;
}

/** A `search` frame's `searchAnswer` (on the page's socket or the search-only one). */
function answerSearch(ws, frame) {
  direct(ws, { type: 'searchAnswer', id: frame.id, hash: mockMap().hash, matches: mockSearch(frame.q, frame.limit), error: null });
}

/** The search-only socket (`/w/<id>/search` upgraded): `search` frames only. */
function searchSocket(ws) {
  ws.on('message', (data) => {
    let frame = null;
    try {
      frame = JSON.parse(String(data));
    } catch { /* refused below */ }
    if (frame?.type !== 'search' || !pageFrameValidator.validate(frame).valid) {
      direct(ws, { type: 'refused', request: 'frame', code: 'bad_frame', message: 'this socket carries only `search` frames' });
      return;
    }
    answerSearch(ws, frame);
  });
}

const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
server.on('upgrade', (req, socket, head) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const origin = req.headers.origin;
  const host = req.headers.host;
  const searchOnly = url.pathname === `/w/${WORKSPACE_ID}/search`;
  if (!hostOk(req) || !(searchOnly || (url.pathname === '/ws' && url.searchParams.get('w') === WORKSPACE_ID)) || !hasCookie(req) || origin !== `http://${host}`) {
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    return;
  }
  if (searchOnly) {
    wss.handleUpgrade(req, socket, head, searchSocket);
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', (data) => {
      let frame;
      try {
        frame = JSON.parse(String(data));
      } catch {
        direct(ws, { type: 'refused', request: 'frame', code: 'bad_frame', message: 'That frame is not JSON.' });
        return;
      }
      handleFrame(ws, frame);
    });
  });
});

server.listen(port, '127.0.0.1', () => {
  const { port: actual } = server.address();
  listening = actual;
  console.log(`http://127.0.0.1:${actual}/login?token=${token}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
