import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HostBody, TranscriptEntry } from '../src/protocol/types';
import { BUBBLE_LINGER_MS, Bubbles, FLY_STEP_MS, FLY_STEPS } from '../src/hud/bubbles';
import { SOFTWARE_OWN_FRAME_MS } from '../src/hud/ridealong';
import { SUBAGENT_SLICE, TranscriptView, subagentHistoryView } from '../src/hud/conversation';
import { applyFrame, initialState, type PageState } from '../src/state/store';
import { entry, session, workspace } from './fixtures';

function ready(): PageState {
  const state = initialState();
  const apply = (body: HostBody, seq: number | null = null) => applyFrame(state, { seq, body });
  apply({ type: 'hello', protocol: 1, instanceId: 'i', workspaceId: workspace.id, head: 0, resumed: false });
  apply({ type: 'workspace', ...workspace });
  apply({ type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: true }] });
  apply({ type: 'session', ...session('c1') });
  apply({ type: 'snapshotEnd' });
  return state;
}

const ctx = { openFile: vi.fn(), subagentHistory: vi.fn((): HTMLElement | null => null) };

afterEach(() => {
  vi.useRealTimers();
});

describe('bubbles', () => {
  it('a prompt flies into a bubble with the phase label, which says how it went and leaves', () => {
    vi.useFakeTimers();
    const state = ready();
    const bubbles = new Bubbles(vi.fn());
    let seq = 0;
    const apply = (body: HostBody) => applyFrame(state, { seq: ++seq, body });
    apply({ type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(1, { kind: 'prompt', text: 'Fix the bug', skills: [], files: [] })] });
    apply({ type: 'session', ...session('c1', { phase: 'reading', label: 'Reading src/a.rs', turns: 1 }) });
    bubbles.render(state);
    const bubble = bubbles.el.querySelector('.bubble');
    expect(bubble?.textContent).toBe('Fix the bugReading src/a.rs');
    expect(bubble?.classList.contains('fly-in')).toBe(true);
    apply({ type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(2, { kind: 'turnEnd', outcome: 'completed', durationMs: 2500, costUsd: 0.25 })] });
    apply({ type: 'session', ...session('c1', { phase: 'idle', turns: 1, lastOutcome: 'completed' }) });
    bubbles.render(state);
    expect(bubbles.el.querySelector('.bubble-label')?.textContent).toBe('Done · 2.5 s · $0.25');
    vi.advanceTimersByTime(BUBBLE_LINGER_MS + 1);
    expect(bubbles.el.querySelector('.bubble')).toBeNull();
  });

  it('a failed bubble stays until opened', () => {
    vi.useFakeTimers();
    const state = ready();
    const open = vi.fn();
    const bubbles = new Bubbles(open);
    applyFrame(state, { seq: 1, body: { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1 }) } });
    bubbles.render(state);
    applyFrame(state, { seq: 2, body: { type: 'session', ...session('c1', { phase: 'failed', label: 'Failed', turns: 1, lastOutcome: 'failed', error: 'process died' }) } });
    bubbles.render(state);
    vi.advanceTimersByTime(BUBBLE_LINGER_MS * 10);
    const bubble = bubbles.el.querySelector<HTMLButtonElement>('.bubble');
    expect(bubble?.dataset.phase).toBe('failed');
    expect(bubble?.textContent).toContain('process died');
    bubble?.click();
    expect(open).toHaveBeenCalledWith('c1');
    expect(bubbles.el.querySelector('.bubble')).toBeNull();
    bubbles.render(state);
    expect(bubbles.el.querySelector('.bubble')).toBeNull();
  });
});

describe('the bubble\'s fly-in on a software GPU', () => {
  it('goes in steps, a frame each, on the timers it is given; on a hardware GPU it is the CSS animation', () => {
    const state = ready();
    const timers: { fn: () => void; ms: number }[] = [];
    let software = true;
    const bubbles = new Bubbles(vi.fn(), {
      software: () => software,
      // The frame budget off (`?frames=all`): each step's own frame after FLY_STEP_MS.
      budget: () => false,
      setTimeout: (fn, ms) => { timers.push({ fn, ms }); return timers.length as unknown as ReturnType<typeof setTimeout>; },
      clearTimeout: () => {},
    });
    applyFrame(state, { seq: 1, body: { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1 }) } });
    bubbles.render(state);
    const bubble = (): Element | null => bubbles.el.querySelector('.bubble');
    const classes = (): string[] => FLY_STEPS.filter((c) => bubble()?.classList.contains(c));
    expect(bubble()?.classList.contains('fly-in')).toBe(false);
    expect(classes()).toEqual([FLY_STEPS[0]]);
    // Each step after FLY_STEP_MS, one timer at a time; then the bubble is in place.
    for (const next of [[FLY_STEPS[1]], []]) {
      const timer = timers.shift();
      expect(timer?.ms).toBe(FLY_STEP_MS);
      timer?.fn();
      expect(classes()).toEqual(next);
    }
    expect(timers).toHaveLength(0);
    // The next turn on a hardware GPU: the CSS animation, no timers.
    software = false;
    applyFrame(state, { seq: 2, body: { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 2 }) } });
    bubbles.render(state);
    expect(bubble()?.classList.contains('fly-in')).toBe(true);
    expect(classes()).toEqual([]);
    expect(timers).toHaveLength(0);
  });
});

describe('the stepped fly-in rides along with the page\'s own frames', () => {
  it('takes its next step at a change of the page in the second half of the step, and drops the step\'s timer', () => {
    const state = ready();
    const timers = new Map<number, { fn: () => void; ms: number }>();
    const rides: { afterMs: number; go: () => void; cancelled: boolean }[] = [];
    const bubbles = new Bubbles(vi.fn(), {
      software: () => true,
      budget: () => false,
      setTimeout: (fn, ms) => { timers.set(timers.size + 1, { fn, ms }); return timers.size as unknown as ReturnType<typeof setTimeout>; },
      clearTimeout: (handle) => { timers.delete(handle as unknown as number); },
      ride: (afterMs, go) => {
        const ride = { afterMs, go, cancelled: false };
        rides.push(ride);
        return () => { ride.cancelled = true; };
      },
    });
    applyFrame(state, { seq: 1, body: { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1 }) } });
    bubbles.render(state);
    const classes = (): string[] => FLY_STEPS.filter((c) => bubbles.el.querySelector('.bubble')?.classList.contains(c));
    expect(rides.map((r) => r.afterMs)).toEqual([FLY_STEP_MS / 2]);
    // The page presents a frame of its own: the step goes with it; its timer is dropped.
    rides[0]?.go();
    expect(classes()).toEqual([FLY_STEPS[1]]);
    expect([...timers.values()].map((t) => t.ms)).toEqual([FLY_STEP_MS]);
    // No change of the page comes: the timer takes the last step, and its ride is cancelled.
    [...timers.values()][0]?.fn();
    expect(classes()).toEqual([]);
    expect(rides).toHaveLength(2);
    expect(rides[1]?.cancelled).toBe(true);
  });

  it('with the frame budget, a step has a frame of its own only after SOFTWARE_OWN_FRAME_MS; it still rides along from half a step', () => {
    const state = ready();
    const timers = new Map<number, { fn: () => void; ms: number }>();
    const rides: { afterMs: number; go: () => void }[] = [];
    const bubbles = new Bubbles(vi.fn(), {
      software: () => true,
      budget: () => true,
      setTimeout: (fn, ms) => { timers.set(timers.size + 1, { fn, ms }); return timers.size as unknown as ReturnType<typeof setTimeout>; },
      clearTimeout: (handle) => { timers.delete(handle as unknown as number); },
      ride: (afterMs, go) => { rides.push({ afterMs, go }); return () => {}; },
    });
    applyFrame(state, { seq: 1, body: { type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1 }) } });
    bubbles.render(state);
    const classes = (): string[] => FLY_STEPS.filter((c) => bubbles.el.querySelector('.bubble')?.classList.contains(c));
    expect(classes()).toEqual([FLY_STEPS[0]]);
    expect(SOFTWARE_OWN_FRAME_MS).toBeGreaterThan(FLY_STEP_MS);
    expect([...timers.values()].map((t) => t.ms)).toEqual([SOFTWARE_OWN_FRAME_MS]);
    expect(rides.map((r) => r.afterMs)).toEqual([FLY_STEP_MS / 2]);
    // Both steps go with the page's own frames, or in the end on their timers: the bubble lands all the same.
    rides[0]?.go();
    expect(classes()).toEqual([FLY_STEPS[1]]);
    [...timers.values()][0]?.fn();
    expect(classes()).toEqual([]);
  });
});

describe('the conversation view', () => {
  it('is a log; an entry sent again with its seq replaces its node', () => {
    const state = ready();
    const view = new TranscriptView(ctx);
    const apply = (entries: TranscriptEntry[], seq: number) => applyFrame(state, { seq, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries } });
    apply([entry(1, { kind: 'prompt', text: 'go', skills: [], files: [] }), entry(2, { kind: 'tool', toolUseId: 't', tool: 'Write', detail: 'src/new.rs', file: null })], 1);
    view.render(state, 'c1');
    expect(view.el.getAttribute('role')).toBe('log');
    expect(view.el.querySelector('[data-seq="2"] a')).toBeNull();
    apply([entry(2, { kind: 'tool', toolUseId: 't', tool: 'Write', detail: 'src/new.rs', file: 'src/new.rs' })], 2);
    view.render(state, 'c1');
    expect(view.el.querySelectorAll('[data-seq]')).toHaveLength(2);
    view.el.querySelector<HTMLAnchorElement>('[data-seq="2"] a')?.click();
    expect(ctx.openFile).toHaveBeenCalledWith('src/new.rs', null);
    // The turn line says how many files the turn changed.
    apply([entry(3, { kind: 'tool', toolUseId: 'u', tool: 'Edit', detail: 'README.md', file: 'README.md' }), entry(4, { kind: 'turnEnd', outcome: 'completed', durationMs: 1500, costUsd: 0.01 })], 3);
    view.render(state, 'c1');
    expect(view.el.querySelector('[data-seq="4"]')?.textContent).toBe('Done · 2 files changed · 1.5 s · $0.01');
    // A reply's shallowest heading is the page's h3, whatever its level (a reply of \`##\` headings skipped h3).
    apply([entry(5, { kind: 'reply', messageId: 'm5', nodes: [
      { t: 'heading', level: 2, children: [{ t: 'text', text: 'Plan' }] },
      { t: 'heading', level: 3, children: [{ t: 'text', text: 'Step' }] },
    ] })], 5);
    view.render(state, 'c1');
    expect(Array.from(view.el.querySelectorAll('[data-seq="5"] h3, [data-seq="5"] h4')).map((e) => `${e.tagName} ${e.textContent}`)).toEqual(['H3 Plan', 'H4 Step']);
    // A linked file is named by its workspace path, not the absolute one Claude gave.
    apply([entry(6, { kind: 'tool', toolUseId: 'v', tool: 'Read', detail: '/home/me/project/src/deep/a.rs', file: 'src/deep/a.rs' })], 6);
    view.render(state, 'c1');
    const link = view.el.querySelector<HTMLAnchorElement>('[data-seq="6"] a');
    expect(link?.textContent).toBe('src/deep/a.rs');
    expect(link?.title).toBe('/home/me/project/src/deep/a.rs');
  });

  it('observes only the entries it shows: those of a conversation it leaves are let go', () => {
    const observed = new Set<Element>();
    vi.stubGlobal('ResizeObserver', class {
      observe(el: Element): void { observed.add(el); }
      unobserve(el: Element): void { observed.delete(el); }
      disconnect(): void { observed.clear(); }
    });
    try {
      const state = ready();
      applyFrame(state, { seq: 1, body: { type: 'sessions', current: 'c1', conversations: [{ key: 'c1', phase: 'idle', title: null, sessionId: null, warm: true }, { key: 'c2', phase: 'idle', title: null, sessionId: null, warm: true }] } });
      for (const key of ['c1', 'c2']) {
        const entries = Array.from({ length: 5 }, (_, i) => entry(i + 1, { kind: 'prompt', text: `${key} ${i}`, skills: [], files: [] }));
        applyFrame(state, { seq: null, body: { type: 'transcript', key, subagents: false, reset: true, entries } });
      }
      const view = new TranscriptView(ctx);
      // A long session's tab switches: what is observed is the log and the entries shown, no more.
      for (let i = 0; i < 20; i += 1) view.render(state, i % 2 === 0 ? 'c1' : 'c2');
      const shown = Array.from(view.el.querySelectorAll('[data-seq]'));
      expect(shown).toHaveLength(5);
      expect(observed.size).toBe(shown.length + 1);
      expect(shown.every((el) => observed.has(el))).toBe(true);
      expect(observed.has(view.el)).toBe(true);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('its first window with entries lays the page out once, with the entries in it: the viewport bounds the window until then', () => {
    const state = ready();
    applyFrame(state, { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: true, entries: Array.from({ length: 400 }, (_, i) => entry(i + 1, { kind: 'prompt', text: `p${i + 1}`, skills: [], files: [] })) } });
    const view = new TranscriptView(ctx);
    document.body.append(view.el);
    // What the log's own box says, and how many entries it held when it was asked (a layout read).
    const reads: number[] = [];
    Object.defineProperty(view.el, 'clientHeight', { configurable: true, get: () => { reads.push(view.el.querySelectorAll('[data-seq]').length); return 500; } });
    try {
      view.render(state, 'c1');
      // Never asked before the entries were in it; the window is the bottom's, sized by the viewport.
      expect(reads.every((held) => held > 0)).toBe(true);
      const shown = Array.from(view.el.querySelectorAll<HTMLElement>('[data-seq]')).map((e) => Number(e.dataset.seq));
      expect(shown.at(-1)).toBe(400);
      expect(shown.length).toBeLessThan(60);
      expect(shown.length).toBeGreaterThanOrEqual(Math.ceil((window.innerHeight + 800) / 56) - 1);
      // Once laid out, the log's own height decides the window.
      const next = applyFrame(state, { seq: 2, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(401, { kind: 'prompt', text: 'p401', skills: [], files: [] })] } });
      expect(next).toBe(true);
      reads.length = 0;
      view.render(state, 'c1');
      expect(reads.length).toBeGreaterThan(0);
    } finally {
      view.el.remove();
    }
  });

  it('a frame that changes nothing it shows costs it no rebuild and no layout; one that does is shown at once', () => {
    const state = ready();
    const view = new TranscriptView(ctx);
    const layout = vi.spyOn(TranscriptView.prototype as unknown as { layout(): void }, 'layout');
    try {
      let seq = 0;
      const apply = (body: HostBody) => applyFrame(state, { seq: ++seq, body });
      view.render(state, 'c1');
      expect(view.el.querySelector('.empty')).not.toBeNull();
      apply({ type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(1, { kind: 'prompt', text: 'go', skills: [], files: [] })] });
      view.render(state, 'c1');
      const calls = layout.mock.calls.length;
      const prompt = view.el.querySelector('[data-seq="1"]');
      expect(prompt?.textContent).toBe('go');
      // A phase, a keypad frame, activity: the transcript's ring is the same array.
      apply({ type: 'session', ...session('c1', { phase: 'thinking', label: 'Thinking', turns: 1 }) });
      apply({ type: 'keypad', key: 'c1', title: 'hi', activity: 'thinking', toolLabel: null, toolKind: null, message: null, statusDetail: null, subagentCount: 0, model: null });
      view.render(state, 'c1');
      view.render(state, 'c1');
      expect(layout.mock.calls.length).toBe(calls);
      expect(view.el.querySelector('[data-seq="1"]')).toBe(prompt);
      // The next entry is in the DOM when its frame's render returns (no frame waited for).
      apply({ type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(2, { kind: 'tool', toolUseId: 'r', tool: 'Read', detail: 'mk1t.md', file: null })] });
      view.render(state, 'c1');
      expect(layout.mock.calls.length).toBe(calls + 1);
      expect(view.el.querySelector('[data-seq="2"]')?.textContent).toContain('mk1t.md');
      // A subagent's entry for the shown conversation renders (its open history follows it).
      apply({ type: 'transcript', key: 'c1', subagents: true, reset: false, entries: [entry(3, { kind: 'stopped' }, 1, 'task1')] });
      view.render(state, 'c1');
      expect(layout.mock.calls.length).toBe(calls + 2);
      // Another conversation shown: rendered, and empty.
      view.render(state, 'c2');
      expect(layout.mock.calls.length).toBe(calls + 3);
      expect(view.el.querySelector('[data-seq]')).toBeNull();
    } finally {
      layout.mockRestore();
    }
  });

  it('shows MCP entries, notices, denied tools and turn lines', () => {
    const state = ready();
    applyFrame(state, { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [
      entry(1, { kind: 'mcp', toolUseId: 'm', server: 'github', tool: 'search_issues' }),
      entry(2, { kind: 'notice', level: 'error', text: "Claude's process ended (code 1): boom", toolUseId: null }),
      entry(3, { kind: 'denied', toolUseId: 'd', tool: 'Bash', message: 'The user said no.' }),
      entry(4, { kind: 'turnEnd', outcome: 'interrupted', durationMs: 61000, costUsd: 0.005 }),
    ] } });
    const view = new TranscriptView(ctx);
    view.render(state, 'c1');
    const text = (seq: number) => view.el.querySelector(`[data-seq="${seq}"]`)?.textContent;
    expect(text(1)).toBe('MCP github · search_issues');
    expect(text(2)).toBe("Error Claude's process ended (code 1): boom");
    expect(text(3)).toBe('Denied Bash The user said no.');
    expect(text(4)).toBe('Turn ended · 1 min 1 s · $0.0050');
  });

  it("shows a subagent's work as its Task call, its history on demand", () => {
    const state = ready();
    applyFrame(state, { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(1, { kind: 'tool', toolUseId: 'task1', tool: 'Task', detail: 'Explore the code', file: null })] } });
    applyFrame(state, { seq: 2, body: { type: 'transcript', key: 'c1', subagents: true, reset: false, entries: [entry(2, { kind: 'tool', toolUseId: 'r', tool: 'Read', detail: 'src/b.rs', file: null }, 1, 'task1')] } });
    const history = document.createElement('div');
    history.textContent = 'the history';
    const subagentHistory = vi.fn(() => history);
    const view = new TranscriptView({ openFile: vi.fn(), subagentHistory });
    view.render(state, 'c1');
    expect(view.el.querySelectorAll('[data-seq]')).toHaveLength(1);
    expect(view.el.textContent).not.toContain('src/b.rs');
    const toggle = view.el.querySelector<HTMLButtonElement>('button[aria-expanded]');
    toggle?.click();
    expect(subagentHistory).toHaveBeenCalledWith('task1');
    expect(view.el.textContent).toContain('the history');
    expect(toggle?.getAttribute('aria-expanded')).toBe('true');
    // New entries of the open history show.
    subagentHistory.mockClear();
    applyFrame(state, { seq: 3, body: { type: 'transcript', key: 'c1', subagents: true, reset: false, entries: [entry(3, { kind: 'stopped' }, 1, 'task1')] } });
    view.render(state, 'c1');
    expect(subagentHistory).toHaveBeenCalledWith('task1');
    subagentHistory.mockClear();
    view.render(state, 'c1');
    expect(subagentHistory).not.toHaveBeenCalled();
  });
  it("opens a subagent's 400 entries a slice per task, and follows an open one entry by entry", () => {
    vi.useFakeTimers();
    try {
      const state = ready();
      const sub = (seq: number, text: string) => entry(seq, { kind: 'tool', toolUseId: `g${seq}`, tool: 'Grep', detail: text, file: null }, 1, 'task1');
      applyFrame(state, { seq: 1, body: { type: 'transcript', key: 'c1', subagents: false, reset: false, entries: [entry(1, { kind: 'tool', toolUseId: 'task1', tool: 'Task', detail: 'Explore the code', file: null })] } });
      applyFrame(state, { seq: 2, body: { type: 'subagent', key: 'c1', id: 'task1', event: 'started', agentType: 'Explore', description: 'look around', status: null, output: null } });
      applyFrame(state, { seq: 3, body: { type: 'transcript', key: 'c1', subagents: true, reset: false, entries: Array.from({ length: 400 }, (_, i) => sub(100 + i, `found ${100 + i}`)) } });
      const base = { openFile: vi.fn() };
      const view = new TranscriptView({ ...base, subagentHistory: (id) => subagentHistoryView(state, 'c1', id, base) });
      document.body.replaceChildren(view.el);
      view.render(state, 'c1');
      view.el.querySelector<HTMLButtonElement>('button[aria-expanded]')?.click();
      const region = () => view.el.querySelector('[role="region"][aria-label="The subagent\'s work"]');
      const rows = () => Array.from(region()?.querySelectorAll('[data-seq]') ?? []);
      // The first slice at once; the rest in tasks of their own, in order.
      expect(rows()).toHaveLength(SUBAGENT_SLICE);
      expect(region()?.textContent).toContain('Explore · look around · running');
      vi.runAllTimers();
      expect(rows().map((r) => Number(r.getAttribute('data-seq')))).toEqual(Array.from({ length: 400 }, (_, i) => 100 + i));
      // Two more arrive (the ring drops the two oldest) and one is sent again changed: only those are built.
      const before = new Map(rows().map((r) => [r.getAttribute('data-seq'), r]));
      applyFrame(state, { seq: 4, body: { type: 'transcript', key: 'c1', subagents: true, reset: false, entries: [sub(500, 'found 500'), sub(501, 'found 501'), sub(300, 'changed 300')] } });
      applyFrame(state, { seq: 5, body: { type: 'subagent', key: 'c1', id: 'task1', event: 'ended', agentType: 'Explore', description: 'look around', status: 'completed', output: null } });
      applyFrame(state, { seq: 6, body: { type: 'subagent', key: 'c1', id: 'task1', event: 'output', agentType: null, description: null, status: null, output: 'All done.' } });
      view.render(state, 'c1');
      vi.runAllTimers();
      const after = rows();
      const seqs = after.map((r) => Number(r.getAttribute('data-seq')));
      expect(seqs).toEqual(state.subagentTranscripts.c1?.map((e) => e.seq));
      expect(seqs.slice(-2)).toEqual([500, 501]);
      expect(after.find((r) => r.getAttribute('data-seq') === '300')?.textContent).toContain('changed 300');
      const rebuilt = after.filter((r) => before.get(r.getAttribute('data-seq')) !== r).map((r) => Number(r.getAttribute('data-seq')));
      expect(rebuilt).toEqual([300, 500, 501]);
      expect(region()?.textContent).toContain('Explore · look around · completed');
      expect(region()?.textContent).toContain('All done.');
      // Closed while its slices were still coming: nothing more is built.
      const toggle = view.el.querySelector<HTMLButtonElement>('button[aria-expanded]');
      toggle?.click();
      toggle?.click();
      expect(rows()).toHaveLength(SUBAGENT_SLICE);
      const opened = region();
      toggle?.click();
      vi.runAllTimers();
      expect(opened?.querySelectorAll('[data-seq]')).toHaveLength(SUBAGENT_SLICE);
    } finally {
      vi.useRealTimers();
    }
  });
});
