import { describe, expect, it } from 'vitest';
import type { HostBody, HostFrame } from '../src/protocol/types';
import { FILES_CHANGED_INBOX_LIMIT, MAP_INBOX_LIMIT, SUBAGENT_LIMIT, Store, applyFrame, initialState, inspect, mergeEntries, queueAction, queueTrust, resumeFrame, type PageState } from '../src/state/store';
import { entry, permission, questions, session, workspace } from './fixtures';

const f = (seq: number | null, body: HostBody): HostFrame => ({ seq, body });
const hello = (resumed: boolean, head = 0, instanceId = 'i1'): HostFrame =>
  f(null, { type: 'hello', protocol: 1, instanceId, workspaceId: workspace.id, head, resumed });
const prompt = (seq: number, text = 'p') => entry(seq, { kind: 'prompt', text, skills: [], files: [] });

function snapshot(state: PageState, head = 10): void {
  applyFrame(state, hello(false, head));
  applyFrame(state, f(null, { type: 'workspace', ...workspace }));
  applyFrame(state, f(null, { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: 't', sessionId: null, warm: true }] }));
  applyFrame(state, f(null, { type: 'session', ...session('c1') }));
  applyFrame(state, f(null, { type: 'transcript', key: 'c1', subagents: false, reset: true, entries: [prompt(1), prompt(2)] }));
  applyFrame(state, f(null, { type: 'snapshotEnd' }));
}

describe('resume', () => {
  it('opens with a resume naming nothing, then the instance and last seq it holds', () => {
    const state = initialState();
    expect(resumeFrame(state)).toEqual({ type: 'resume', instanceId: null, lastSeq: null });
    snapshot(state, 10);
    applyFrame(state, f(11, { type: 'refused', request: 'prompt', code: 'busy', message: 'b' }));
    expect(resumeFrame(state)).toEqual({ type: 'resume', instanceId: 'i1', lastSeq: 11 });
  });

  it('a snapshot replaces what the page held, and takes the head as its last seq', () => {
    const state = initialState();
    snapshot(state, 10);
    applyFrame(state, f(11, { type: 'sessions', current: 'c2', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: false }, { key: 'c2', phase: 'idle', title: null, sessionId: null, warm: true }] }));
    applyFrame(state, f(12, { type: 'session', ...session('c2') }));
    expect(state.ready).toBe(true);
    // A restarted Orbit: a new instance, a snapshot with only c1.
    applyFrame(state, hello(false, 3, 'i2'));
    expect(state.inSnapshot).toBe(true);
    expect(state.ready).toBe(false);
    expect(state.sessions).toEqual({});
    applyFrame(state, f(null, { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: true }] }));
    applyFrame(state, f(null, { type: 'snapshotEnd' }));
    expect(state.instanceId).toBe('i2');
    expect(state.lastSeq).toBe(3);
    expect(state.inSnapshot).toBe(false);
    expect(state.current).toBe('c1');
    // The next live frame (seq 4) is applied, though it is below the old instance's 12.
    expect(applyFrame(state, f(4, { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking' }) }))).toBe(true);
    expect(state.sessions.c1?.phase).toBe('thinking');
  });

  it('a resumed hello keeps the state and the missed frames follow', () => {
    const state = initialState();
    snapshot(state, 10);
    applyFrame(state, hello(true, 12));
    expect(state.transcripts.c1).toHaveLength(2);
    applyFrame(state, f(11, { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [prompt(3)] }));
    expect(state.transcripts.c1?.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(state.lastSeq).toBe(11);
  });

  it('says so when Orbit speaks another channel protocol', () => {
    const state = initialState();
    applyFrame(state, f(null, { type: 'hello', protocol: 2, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false }));
    expect(state.errors[0]).toContain('channel protocol 2');
    const ok = initialState();
    applyFrame(ok, hello(false));
    expect(ok.errors).toEqual([]);
  });

  it('a frame whose seq the page holds is ignored', () => {
    const state = initialState();
    snapshot(state, 10);
    const frame = f(11, { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [prompt(3)] });
    expect(applyFrame(state, frame)).toBe(true);
    expect(applyFrame(state, frame)).toBe(false);
    expect(applyFrame(state, f(5, { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [prompt(9)] }))).toBe(false);
    expect(state.transcripts.c1?.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(state.duplicates).toBe(2);
  });
});

describe('the map inbox', () => {
  it('a fresh snapshot tells the map (its deltas may be missing); a resume does not', () => {
    const store = new Store();
    store.update((state) => applyFrame(state, hello(false, 3)));
    expect(store.takeMapMessages()).toEqual([{ type: 'snapshot' }]);
    expect(store.takeMapMessages()).toEqual([]);
    store.update((state) => applyFrame(state, hello(true, 3)));
    expect(store.takeMapMessages()).toEqual([]);
  });

  it('keeps mapDelta and mapReset, in order, for the scene; they count as log frames', () => {
    const store = new Store();
    const d = { type: 'mapDelta' as const, previousHash: 'a', hash: 'b', added: [], removed: [], folders: [], foldersRemoved: [], edgesAdded: [], edgesRemoved: [] };
    store.update((state) => applyFrame(state, f(5, d)));
    store.update((state) => applyFrame(state, f(6, { type: 'mapReset', hash: 'c', reason: 'rearranged' })));
    store.update((state) => applyFrame(state, f(6, { type: 'mapReset', hash: 'c', reason: 'rearranged' })));
    expect(store.takeMapMessages().map((m) => m.type)).toEqual(['mapDelta', 'mapReset']);
    expect(store.state.lastSeq).toBe(6);
  });

  it('collapses into one snapshot when nobody takes the messages', () => {
    const state = initialState();
    for (let i = 0; i <= MAP_INBOX_LIMIT; i += 1) applyFrame(state, hello(false, i, `i${i}`));
    expect(state.mapInbox.length).toBeLessThanOrEqual(2);
    expect(state.mapInbox).toEqual(state.mapInbox.map(() => ({ type: 'snapshot' })));
  });
});

describe('the file panel\'s inbox', () => {
  it('keeps filesChanged for the file panel, in order; a fresh snapshot says more may have changed; a resume does not', () => {
    const store = new Store();
    store.update((state) => applyFrame(state, hello(false, 3)));
    expect(store.takeFilesChanged()).toEqual([{ paths: [], more: true }]);
    store.update((state) => applyFrame(state, f(4, { type: 'filesChanged', paths: ['src/a.ts'], more: false })));
    store.update((state) => applyFrame(state, f(4, { type: 'filesChanged', paths: ['src/a.ts'], more: false })));
    store.update((state) => applyFrame(state, f(5, { type: 'filesChanged', paths: ['b.md', 'c.md'], more: true })));
    expect(store.takeFilesChanged()).toEqual([{ paths: ['src/a.ts'], more: false }, { paths: ['b.md', 'c.md'], more: true }]);
    expect(store.takeFilesChanged()).toEqual([]);
    store.update((state) => applyFrame(state, hello(true, 5)));
    expect(store.takeFilesChanged()).toEqual([]);
    expect(store.state.lastSeq).toBe(5);
  });

  it('collapses into one "more" when nobody takes them', () => {
    const state = initialState();
    for (let i = 1; i <= FILES_CHANGED_INBOX_LIMIT + 5; i += 1) applyFrame(state, f(i, { type: 'filesChanged', paths: [`f${i}`], more: false }));
    expect(state.filesChangedInbox.length).toBeLessThanOrEqual(6);
    expect(state.filesChangedInbox[0]).toEqual({ paths: [], more: true });
  });
});

describe('transcripts', () => {
  it('reset drops what the page held', () => {
    const state = initialState();
    snapshot(state);
    applyFrame(state, f(null, { type: 'transcript', key: 'c1', subagents: false, reset: true, entries: [prompt(7)] }));
    expect(state.transcripts.c1?.map((e) => e.seq)).toEqual([7]);
  });

  it('an entry with a held seq replaces it (a written file, linked later); others go in seq order', () => {
    const unlinked = entry(2, { kind: 'tool', toolUseId: 't', tool: 'Write', detail: 'src/new.rs', file: null });
    const linked = entry(2, { kind: 'tool', toolUseId: 't', tool: 'Write', detail: 'src/new.rs', file: 'src/new.rs' });
    let ring = mergeEntries([], [prompt(1), unlinked, prompt(4)]);
    ring = mergeEntries(ring, [linked, prompt(3)]);
    expect(ring.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(ring[1]?.body).toEqual(linked.body);
  });

  it('keeps subagents\' entries apart', () => {
    const state = initialState();
    snapshot(state);
    applyFrame(state, f(11, { type: 'transcript', key: 'c1', subagents: true, reset: false, entries: [entry(3, { kind: 'stopped' }, 1, 'task1')] }));
    expect(state.transcripts.c1).toHaveLength(2);
    expect(state.subagentTranscripts.c1?.[0]?.subagent).toBe('task1');
  });

  it('keeps a conversation\'s subagents to the ring\'s size however many a long session starts, the running ones first', () => {
    const state = initialState();
    snapshot(state);
    const sub = (seq: number, id: string, event: 'started' | 'ended' | 'output'): HostFrame =>
      f(seq, { type: 'subagent', key: 'c1', id, event, agentType: 'Explore', description: id, status: event === 'ended' ? 'completed' : null, output: event === 'output' ? 'x'.repeat(1000) : null });
    let seq = 11;
    applyFrame(state, sub(seq++, 'long', 'started'));
    for (let i = 0; i < SUBAGENT_LIMIT + 100; i += 1) {
      applyFrame(state, sub(seq++, `t${i}`, 'started'));
      applyFrame(state, sub(seq++, `t${i}`, 'output'));
      applyFrame(state, sub(seq++, `t${i}`, 'ended'));
    }
    const held = state.subagents.c1 ?? {};
    expect(Object.keys(held)).toHaveLength(SUBAGENT_LIMIT);
    // The one still running stays; the newest are kept, the oldest went.
    expect(held.long?.running).toBe(true);
    expect(held[`t${SUBAGENT_LIMIT + 99}`]?.output).toHaveLength(1000);
    expect(held.t0).toBeUndefined();
  });

  it('drops the state of conversations that are let go', () => {
    const state = initialState();
    snapshot(state);
    applyFrame(state, f(11, { type: 'sessions', current: null, conversations: [] }));
    expect(state.transcripts.c1).toBeUndefined();
    expect(state.sessions.c1).toBeUndefined();
  });
});

describe('pending cards', () => {
  it('follow the session: shown while pending, gone once answered', () => {
    const state = initialState();
    snapshot(state);
    applyFrame(state, f(11, { type: 'session', ...session('c1', { phase: 'waiting', label: 'Waiting for you', pending: [permission, questions] }) }));
    expect(state.conversations[0]?.phase).toBe('waiting');
    const seen = inspect(state, 'c1') as { pending: Record<string, { requestId: string; title: string | null }[]> };
    expect(seen.pending.c1).toEqual([
      { kind: 'permission', requestId: 'r1', title: 'Edit src/a.rs' },
      { kind: 'questions', requestId: 'r2', title: null },
    ]);
    applyFrame(state, f(12, { type: 'session', ...session('c1', { phase: 'writing', label: 'Writing a reply' }) }));
    expect(state.sessions.c1?.pending).toEqual([]);
  });

  it('come back with a snapshot after a reload', () => {
    const state = initialState();
    applyFrame(state, hello(false, 4));
    applyFrame(state, f(null, { type: 'session', ...session('c1', { phase: 'waiting', pending: [permission] }) }));
    applyFrame(state, f(null, { type: 'snapshotEnd' }));
    expect(state.sessions.c1?.pending[0]?.requestId).toBe('r1');
  });
});

describe('acks and the outbox', () => {
  it('an action stays in the outbox until its ack, and a refusal is shown', () => {
    const state = initialState();
    snapshot(state);
    const a = queueAction(state, { type: 'stopAll' });
    const b = queueTrust(state);
    expect(a.id).not.toEqual(b.id);
    expect(state.outbox.map((o) => o.id)).toEqual([a.id, b.id]);
    applyFrame(state, f(null, { type: 'ack', id: a.id, ok: true, code: null, message: null }));
    expect(state.outbox.map((o) => o.id)).toEqual([b.id]);
    applyFrame(state, f(null, { type: 'ack', id: b.id, ok: false, code: 'untrusted', message: 'Not trusted.' }));
    expect(state.outbox).toEqual([]);
    expect(state.acks[b.id]?.ok).toBe(false);
    expect(state.notices.at(-1)?.text).toContain('Not trusted. (untrusted)');
  });

  it('a refused message is shown', () => {
    const state = initialState();
    applyFrame(state, f(3, { type: 'refused', request: 'frame', code: 'rate_limited', message: 'Too many actions.' }));
    expect(state.notices.at(-1)?.text).toContain('rate_limited');
  });
});
