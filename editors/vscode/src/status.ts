/**
 * What the extension itself follows of the page's frames: the current
 * conversation's phase and the cards waiting (the status bar item), and the
 * cards that newly arrived (a notification while the page is out of sight).
 */

export interface Card {
  key: string;
  kind: 'permission' | 'questions';
  requestId: string;
  title: string;
}

interface Frame {
  seq?: number | null;
  body?: Record<string, unknown>;
}

const PHASE_LABEL: Record<string, string> = {
  idle: 'Idle',
  thinking: 'Thinking',
  writing: 'Writing',
  reading: 'Reading',
  editing: 'Editing',
  asking: 'Asking',
  tool: 'Using a tool',
  waiting: 'Waiting for you',
  compacting: 'Compacting',
  stopping: 'Stopping',
  failed: 'Failed',
};

export class StatusModel {
  current: string | null = null;
  readonly phases = new Map<string, string>();
  readonly pending = new Map<string, Card[]>();
  trusted = false;
  agentAvailable = false;
  agentMessage: string | null = null;
  instanceId: string | null = null;
  lastSeq: number | null = null;
  private readonly seen = new Set<string>();

  /** Folds frames in; answers the cards not seen before. */
  apply(frames: readonly unknown[]): Card[] {
    const arrived: Card[] = [];
    for (const raw of frames) {
      const frame = raw as Frame;
      if (typeof frame.seq === 'number') this.lastSeq = Math.max(this.lastSeq ?? 0, frame.seq);
      const body = frame.body;
      if (!body) continue;
      switch (body.type) {
        case 'hello':
          if (body.instanceId !== this.instanceId) this.lastSeq = null;
          this.instanceId = typeof body.instanceId === 'string' ? body.instanceId : null;
          if (body.resumed !== true) {
            this.phases.clear();
            this.pending.clear();
          }
          break;
        case 'workspace': {
          this.trusted = body.trusted === true;
          const agent = body.agent as { available?: unknown; message?: unknown } | undefined;
          this.agentAvailable = agent?.available === true;
          this.agentMessage = typeof agent?.message === 'string' ? agent.message : null;
          break;
        }
        case 'sessions': {
          this.current = typeof body.current === 'string' ? body.current : null;
          const keys = new Set<string>();
          for (const c of (body.conversations as { key: string; phase: string }[] | undefined) ?? []) {
            keys.add(c.key);
            this.phases.set(c.key, c.phase);
          }
          for (const key of [...this.phases.keys()]) {
            if (!keys.has(key)) {
              this.phases.delete(key);
              this.pending.delete(key);
            }
          }
          break;
        }
        case 'session': {
          const key = String(body.key);
          this.phases.set(key, String(body.phase));
          const cards = ((body.pending as Record<string, unknown>[] | undefined) ?? []).map(
            (p): Card => ({
              key,
              kind: p.kind === 'questions' ? 'questions' : 'permission',
              requestId: String(p.requestId),
              title: cardTitle(p),
            }),
          );
          this.pending.set(key, cards);
          for (const card of cards) {
            const id = `${key}/${card.requestId}`;
            if (!this.seen.has(id)) {
              this.seen.add(id);
              arrived.push(card);
            }
          }
          break;
        }
        default:
          break;
      }
    }
    return arrived;
  }

  waiting(): number {
    let n = 0;
    for (const cards of this.pending.values()) n += cards.length;
    return n;
  }

  /** The status bar item's text and tooltip. */
  text(): { text: string; tooltip: string } {
    const phase = this.current ? (this.phases.get(this.current) ?? 'idle') : 'idle';
    const waiting = this.waiting();
    const label = PHASE_LABEL[phase] ?? phase;
    const cards = waiting > 0 ? ` · ${waiting} waiting` : '';
    let tooltip = 'Orbit Code: open the page';
    if (!this.trusted) tooltip = 'Orbit Code: sessions need a trusted folder (open the page)';
    else if (!this.agentAvailable && this.agentMessage) tooltip = `Orbit Code: ${this.agentMessage}`;
    return { text: `$(circle-large-outline) Claude: ${label}${cards}`, tooltip };
  }
}

function cardTitle(card: Record<string, unknown>): string {
  if (card.kind === 'questions') {
    const questions = (card.questions as { question?: unknown }[] | undefined) ?? [];
    const first = questions[0]?.question;
    return typeof first === 'string' ? first : 'Claude has a question';
  }
  return typeof card.title === 'string' ? card.title : `Claude asks to use ${String(card.tool)}`;
}
