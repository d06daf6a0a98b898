/** Messages of every kind, typed against the generated types (so a schema change breaks them at compile time too). */
import type { HostBody, HostFrame, MdNode, PageFrame, PendingCard, SessionState, TranscriptEntry, WorkspaceState } from '../src/protocol/types';

export const workspace: WorkspaceState = {
  id: '0123456789abcdef',
  name: 'demo',
  root: '/tmp/demo',
  trusted: true,
  agent: { available: true, version: '2.1.267', path: '/usr/bin/claude', message: null },
  graph: { files: 2, hash: 'abc' },
};

export const permission: PendingCard = {
  kind: 'permission',
  requestId: 'r1',
  tool: 'Edit',
  toolUseId: 't1',
  title: 'Edit src/a.rs',
  file: 'src/a.rs',
  input: { file_path: '/tmp/demo/src/a.rs', old_string: 'a\nb\nc', new_string: 'a\nB\nc' },
  always: 'Allow all edits in this session',
  reason: null,
  blockedPath: null,
  subagent: null,
};

export const questions: PendingCard = {
  kind: 'questions',
  requestId: 'r2',
  toolUseId: 't2',
  subagent: null,
  questions: [
    { question: 'Which colour?', header: 'Colour', multiSelect: false, options: [{ label: 'Blue', description: '' }, { label: 'Red', description: '' }] },
    { question: 'Which platforms?', header: 'Platforms', multiSelect: true, options: [{ label: 'Linux', description: '' }, { label: 'macOS', description: '' }] },
  ],
};

export function session(key: string, over: Partial<SessionState> = {}): SessionState {
  return {
    key,
    phase: 'idle',
    label: null,
    file: null,
    pending: [],
    turns: 0,
    turnCostUsd: null,
    totalCostUsd: 0,
    model: null,
    permissionMode: null,
    sessionId: null,
    lastOutcome: null,
    error: null,
    subagents: 0,
    ...over,
  };
}

export const allNodes: MdNode[] = [
  { t: 'heading', level: 1, children: [{ t: 'text', text: 'Title' }] },
  { t: 'paragraph', children: [
    { t: 'text', text: 'a' }, { t: 'code', text: 'b' }, { t: 'softBreak' }, { t: 'hardBreak' },
    { t: 'emphasis', children: [{ t: 'text', text: 'e' }] }, { t: 'strong', children: [{ t: 'text', text: 's' }] },
    { t: 'strike', children: [{ t: 'text', text: 'x' }] },
    { t: 'link', href: 'https://example.com', external: true, file: null, children: [{ t: 'text', text: 'web' }] },
  ] },
  { t: 'quote', children: [{ t: 'paragraph', children: [{ t: 'text', text: 'q' }] }] },
  { t: 'codeBlock', lang: 'rust', text: 'fn main() {}' },
  { t: 'list', start: null, children: [{ t: 'item', checked: null, children: [{ t: 'text', text: 'i' }] }] },
  { t: 'list', start: 3, children: [{ t: 'item', checked: true, children: [{ t: 'text', text: 'j' }] }] },
  { t: 'rule' },
  { t: 'table', rows: [[[{ t: 'text', text: 'h' }]], [[{ t: 'text', text: 'c' }]]] },
];

export function entry(seq: number, body: TranscriptEntry['body'], turn = 1, subagent: string | null = null): TranscriptEntry {
  return { seq, turn, subagent, body };
}

export const entries: TranscriptEntry[] = [
  entry(1, { kind: 'prompt', text: 'hi', skills: [], files: [] }),
  entry(2, { kind: 'reply', messageId: 'm1', nodes: allNodes }),
  entry(3, { kind: 'tool', toolUseId: 't', tool: 'Read', detail: 'src/a.rs', file: 'src/a.rs' }),
  entry(4, { kind: 'mcp', toolUseId: 'u', server: 'github', tool: 'search' }),
  entry(5, { kind: 'notice', level: 'warning', text: 'Bash failed', toolUseId: null }),
  entry(6, { kind: 'denied', toolUseId: 'v', tool: 'Bash', message: 'no' }),
  entry(7, { kind: 'stopped' }),
  entry(8, { kind: 'failed', error: 'boom' }),
  entry(9, { kind: 'turnEnd', outcome: 'completed', durationMs: 1200, costUsd: 0.01 }),
];

/** One body of every kind the host sends. */
export const bodies: HostBody[] = [
  { type: 'hello', protocol: 1, instanceId: 'i1', workspaceId: workspace.id, head: 0, resumed: false },
  { type: 'workspace', ...workspace },
  { type: 'snapshotEnd' },
  { type: 'ack', id: 'a1', ok: false, code: 'not_pending', message: 'gone' },
  { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: true }] },
  { type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', pending: [permission, questions] }) },
  { type: 'transcript', key: 'c1', subagents: false, reset: true, entries },
  { type: 'activity', key: 'c1', tick: 3, graphHash: 'abc', records: [{ kind: 'mcp', file: null, mcp: { server: 's', tool: 't', direction: 'out' }, subagent: null }] },
  { type: 'subagent', key: 'c1', id: 't9', event: 'started', agentType: 'general-purpose', description: 'look', status: null, output: null },
  { type: 'keypad', key: 'c1', title: 'hi', activity: 'thinking', toolLabel: null, toolKind: null, message: { id: 'x', text: 'y' }, statusDetail: null, subagentCount: 0, model: null },
  { type: 'refused', request: 'prompt', code: 'busy', message: 'busy' },
];

export const frames: HostFrame[] = bodies.map((body, i) => ({ seq: i === 0 ? null : i, body }));

export const pageFrames: PageFrame[] = [
  { type: 'resume', instanceId: null, lastSeq: null },
  { type: 'resume', instanceId: 'i1', lastSeq: 12 },
  { type: 'trust', id: 'x' },
  { type: 'action', id: 'a', request: { type: 'prompt', key: null, text: 'hi', skills: [], files: [] } },
  { type: 'action', id: 'b', request: { type: 'answerPermission', key: 'c1', requestId: 'r1', choice: 'deny', message: 'no' } },
  { type: 'action', id: 'c', request: { type: 'answerQuestions', key: 'c1', requestId: 'r2', answers: [{ options: ['Blue'], text: null }, { options: [], text: 'mine' }] } },
  { type: 'action', id: 'd', request: { type: 'skipQuestions', key: 'c1', requestId: 'r2' } },
  { type: 'action', id: 'e', request: { type: 'stop', key: 'c1' } },
  { type: 'action', id: 'f', request: { type: 'stopAll' } },
  { type: 'action', id: 'g', request: { type: 'newConversation' } },
];
