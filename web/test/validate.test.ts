import { describe, expect, it } from 'vitest';
import { validateHostFrame, validatePageFrame } from '../src/protocol/validate';
import { frames, pageFrames } from './fixtures';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('validateHostFrame', () => {
  it('accepts a frame of every message kind, as objects and as text', () => {
    for (const frame of frames) {
      expect(validateHostFrame(frame), JSON.stringify(frame.body)).toMatchObject({ ok: true });
      expect(validateHostFrame(JSON.stringify(frame))).toMatchObject({ ok: true });
    }
  });

  it('refuses text that is not JSON', () => {
    const result = validateHostFrame('{"seq":');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain('not JSON');
  });

  it('refuses a field of the wrong type', () => {
    const frame = clone(frames[5]) as unknown as { body: { turns: unknown } };
    frame.body.turns = 'three';
    const result = validateHostFrame(frame);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/"session" frame/);
  });

  it('refuses a missing required field', () => {
    const frame = clone(frames[6]) as unknown as { body: Record<string, unknown> };
    delete frame.body.entries;
    expect(validateHostFrame(frame).ok).toBe(false);
  });

  it('refuses an unknown message type and a negative seq', () => {
    expect(validateHostFrame({ seq: 1, body: { type: 'surprise' } }).ok).toBe(false);
    expect(validateHostFrame({ seq: -1, body: { type: 'snapshotEnd' } }).ok).toBe(false);
  });

  it('refuses a markdown node of an unknown kind (no HTML node can slip through)', () => {
    const frame = clone(frames[6]) as unknown as { body: { entries: { body: { nodes?: unknown[] } }[] } };
    const reply = frame.body.entries[1];
    if (!reply) throw new Error('fixture');
    reply.body.nodes = [{ t: 'html', text: '<script>alert(1)</script>' }];
    expect(validateHostFrame(frame).ok).toBe(false);
  });

  it('refuses a card with a wrong kind', () => {
    const frame = clone(frames[5]) as unknown as { body: { pending: { kind: string }[] } };
    const card = frame.body.pending[0];
    if (!card) throw new Error('fixture');
    card.kind = 'bribe';
    expect(validateHostFrame(frame).ok).toBe(false);
  });
});

describe('validatePageFrame', () => {
  it('accepts what the page sends', () => {
    for (const frame of pageFrames) expect(validatePageFrame(frame), JSON.stringify(frame)).toMatchObject({ ok: true });
  });

  it('refuses an extra field where the protocol forbids one', () => {
    expect(validatePageFrame({ type: 'resume', instanceId: null, lastSeq: null, extra: 1 }).ok).toBe(false);
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'stopAll', all: true } }).ok).toBe(false);
  });

  it('refuses a wrong choice, a missing key and a wrong type', () => {
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'answerPermission', key: 'c1', requestId: 'r', choice: 'yes' } }).ok).toBe(false);
    expect(validatePageFrame({ type: 'action', id: 'a', request: { type: 'stop' } }).ok).toBe(false);
    expect(validatePageFrame({ type: 'trust', id: 7 }).ok).toBe(false);
  });
});
