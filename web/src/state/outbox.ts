/**
 * The outbox that survives a reload: the actions the page sent but has not
 * seen acknowledged, kept in the tab's `sessionStorage` (per tab, kept
 * across reloads, gone with the tab), each stamped with the boot id of the
 * Orbit it was meant for (the `hello`'s `instanceId`) and the time it was
 * made. After a reload they are sent again with their ids (the host applies
 * an id once); an entry meant for another boot of Orbit (it restarted and
 * remembers no ids), or older than {@link OUTBOX_MAX_AGE_MS}, is dropped and
 * the page says which.
 */
import type { PageRequest } from '../protocol/types';
import type { OutboxItem } from './store';

/** An action not acknowledged within this long is dropped (and said). */
export const OUTBOX_MAX_AGE_MS = 60000;

/** Where the outbox is kept between loads (injectable for tests). */
export interface OutboxStorage {
  load(): OutboxItem[];
  save(items: readonly OutboxItem[]): void;
}

function isItem(value: unknown): value is OutboxItem {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  const frame = v.frame as Record<string, unknown> | null | undefined;
  return (
    typeof v.id === 'string' &&
    typeof v.at === 'number' &&
    (v.instanceId === null || typeof v.instanceId === 'string') &&
    frame !== null &&
    typeof frame === 'object' &&
    (frame.type === 'action' || frame.type === 'trust') &&
    frame.id === v.id
  );
}

/** Parses a stored outbox; anything malformed is left out (every frame is validated again before it is sent). */
export function parseOutbox(text: string | null): OutboxItem[] {
  if (!text) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  return Array.isArray(value) ? value.filter(isItem) : [];
}

/** The tab's `sessionStorage`, one key per workspace. */
export function sessionOutboxStorage(workspaceId: string): OutboxStorage {
  const key = `orbit-outbox:${workspaceId}`;
  return {
    load: () => {
      try {
        return parseOutbox(window.sessionStorage.getItem(key));
      } catch {
        return [];
      }
    },
    save: (items) => {
      try {
        if (items.length === 0) window.sessionStorage.removeItem(key);
        else window.sessionStorage.setItem(key, JSON.stringify(items));
      } catch {
        // Storage full or refused: the outbox still lives for this load.
      }
    },
  };
}

/** An outbox kept in memory (tests, and where storage is refused). */
export function memoryOutboxStorage(initial: OutboxItem[] = []): OutboxStorage & { items: OutboxItem[] } {
  const store = {
    items: initial.slice(),
    load: () => store.items.slice(),
    save: (items: readonly OutboxItem[]) => {
      store.items = items.slice();
    },
  };
  return store;
}

/** How the page names an action when it says it was dropped. */
export function describeAction(item: OutboxItem): string {
  if (item.frame.type === 'trust') return 'trusting this folder';
  const request: PageRequest = item.frame.request;
  switch (request.type) {
    case 'prompt': {
      const text = request.text.trim();
      return `the prompt “${text.length > 40 ? `${text.slice(0, 40)}…` : text}”`;
    }
    case 'answerPermission':
      return `your answer (${request.choice}) to a permission card`;
    case 'answerQuestions':
      return 'your answers to a question card';
    case 'skipQuestions':
      return 'skipping a question card';
    case 'stop':
      return 'Stop';
    case 'stopAll':
      return 'Stop all';
    case 'newConversation':
      return 'New conversation';
    case 'setPermissionMode':
      return `the permission mode ${request.mode}`;
    case 'setModel':
      return 'the model change';
    case 'setEffort':
      return 'the effort change';
    case 'continue':
      return 'continuing a past conversation';
    case 'mcpAction':
      return `${request.action} of ${request.server}`;
    case 'rearrange':
      return 'Re-arrange';
    case 'resetSettings':
      return 'resetting the settings to their defaults';
    case 'history':
      return 'refreshing History';
    case 'mcpReload':
      return 'Reload of the MCP servers';
  }
}

/** Which entries to send again and which to drop, when a `hello` from `instanceId` arrives at `now`. */
export function sortOutbox(
  items: readonly OutboxItem[],
  instanceId: string,
  now: number,
): { keep: OutboxItem[]; restarted: OutboxItem[]; expired: OutboxItem[] } {
  const keep: OutboxItem[] = [];
  const restarted: OutboxItem[] = [];
  const expired: OutboxItem[] = [];
  for (const item of items) {
    if (item.instanceId !== null && item.instanceId !== instanceId) restarted.push(item);
    else if (now - item.at > OUTBOX_MAX_AGE_MS) expired.push(item);
    else keep.push({ ...item, instanceId });
  }
  return { keep, restarted, expired };
}

/** The notice for dropped entries. */
export function droppedNotice(items: readonly OutboxItem[], why: 'restarted' | 'expired'): string {
  const what = items.map(describeAction).join('; ');
  return why === 'restarted'
    ? `Not sent, because Orbit restarted since: ${what}. Do it again if it still matters.`
    : `Not sent, because Orbit did not confirm it within a minute: ${what}. Do it again if it still matters.`;
}
