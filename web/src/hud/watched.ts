/**
 * Watched sessions: Claude Code sessions started in a terminal, followed
 * through Orbit's hooks and listed beside Orbit's own conversations with
 * keys `w1`, `w2`, ... They are read-only on the page: the host refuses a
 * prompt, an answer or a stop sent to one (`read_only`), so the drawer
 * disables those and says why.
 */

/** Whether `key` is a watched session's (`w` and digits). */
export function isWatchedKey(key: string | null | undefined): boolean {
  return typeof key === 'string' && /^w\d+$/.test(key);
}

/** What the drawer says while a watched session is shown. */
export const READ_ONLY_HINT = 'Read-only: this Claude Code session runs in a terminal. Orbit only watches it; answer it there.';

/** A conversation's name before it has a title. */
export function untitledName(key: string): string {
  return isWatchedKey(key) ? `Terminal session ${key.slice(1)}` : `Conversation ${key.replace(/^c/, '')}`;
}
