/**
 * The hash rule (docs/page-protocol.md, "Claude on the map"): activity
 * carries the hash of the graph its paths were resolved against. A record
 * naming a file is drawn when that hash is the map's current one or one the
 * map has passed through (and the file is on the map now); while the hash
 * is one the map has not reached yet, it is held until the delta arrives;
 * it is never drawn on another file. Records naming no file (an MCP call,
 * a thinking block) do not depend on the graph and pass at once. Pure: no
 * DOM, the clock is the caller's.
 */
import type { ActivityBatch, ActivityRecord } from '../protocol/types';

/** A held batch whose hash the map has not reached after this long is dropped (the map was fetched past it). */
export const HOLD_MS = 15000;
/** At most this many batches are held (the oldest go first). */
export const MAX_HELD = 500;
/** How many hashes the gate remembers the map passing through. */
export const PASSED_HASHES = 256;

/** What the map tells the gate: its hash and whether a file is on it now. */
export interface GateMap {
  hash: string;
  has(path: string): boolean;
}

/** A record the effects may draw now, with its batch's conversation. */
export interface Released {
  key: string;
  record: ActivityRecord;
}

export type Verdict = 'now' | 'hold';

export class ActivityGate {
  private readonly passed: string[] = [];
  private readonly passedSet = new Set<string>();
  private held: { batch: ActivityBatch; at: number }[] = [];
  /** Records dropped: their file was not on the map at their hash (or the hold ran out). */
  dropped = 0;

  /** The map is now at `hash` (call on every change: a delta, a fetched snapshot). */
  observe(hash: string): void {
    if (this.passedSet.has(hash)) return;
    this.passed.push(hash);
    this.passedSet.add(hash);
    if (this.passed.length > PASSED_HASHES) {
      const old = this.passed.shift();
      if (old !== undefined) this.passedSet.delete(old);
    }
  }

  /** Whether the map is at, or has passed through, `hash`. */
  reached(hash: string): boolean {
    return this.passedSet.has(hash);
  }

  verdict(hash: string): Verdict {
    return this.reached(hash) ? 'now' : 'hold';
  }

  /** How many batches wait for their hash. */
  heldCount(): number {
    return this.held.length;
  }

  /**
   * Takes one batch: returns the records to draw now (file-less ones always;
   * file ones when the hash is reached and the file is on the map), and
   * holds the file records of a batch whose hash is not reached yet.
   */
  offer(batch: ActivityBatch, map: GateMap | null, now: number): Released[] {
    const out: Released[] = [];
    const files: ActivityRecord[] = [];
    for (const record of batch.records) {
      if (record.file === null || record.file === undefined) out.push({ key: batch.key, record });
      else files.push(record);
    }
    if (files.length === 0) return out;
    if (map !== null && this.reached(batch.graphHash)) {
      out.push(...this.onMap(batch.key, files, map));
      return out;
    }
    this.held.push({ batch: { ...batch, records: files }, at: now });
    if (this.held.length > MAX_HELD) {
      this.held.shift();
      this.dropped += 1;
    }
    return out;
  }

  /** The held records whose hash the map has now reached, in arrival order; those held too long are dropped. */
  release(map: GateMap | null, now: number): Released[] {
    if (this.held.length === 0) return [];
    const out: Released[] = [];
    const still: { batch: ActivityBatch; at: number }[] = [];
    for (const item of this.held) {
      if (map !== null && this.reached(item.batch.graphHash)) {
        out.push(...this.onMap(item.batch.key, item.batch.records, map));
      } else if (now - item.at >= HOLD_MS) {
        this.dropped += item.batch.records.length;
      } else {
        still.push(item);
      }
    }
    this.held = still;
    return out;
  }

  /** Forgets what is held (the conversations were reset). */
  clear(): void {
    this.held = [];
  }

  private onMap(key: string, records: ActivityRecord[], map: GateMap): Released[] {
    const out: Released[] = [];
    for (const record of records) {
      if (record.file !== null && record.file !== undefined && map.has(record.file)) out.push({ key, record });
      else this.dropped += 1;
    }
    return out;
  }
}
