/**
 * The prompt's attachments: the `Skills` picker (the catalog's skills, up
 * to eight, shown as chips; the first goes as the leading slash command,
 * the rest are named) and file chips (up to twenty graph files: the `Add
 * file` combobox completes paths with the server's fuzzy matcher, through
 * the search worker, the channel or `/w/<id>/search`: `workerSearch.ts`; a file dropped or pasted onto the prompt box is added
 * when it names a graph file, anything else goes to the controller, which
 * drops it with its notice). They reach the prompt as `skills` and `files`,
 * and Claude gets them as `/skill` and `@path` mentions.
 */
import { ChannelDropped } from '../../protocol/channel';
import type { SearchMatch } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, h, marked, uniqueId } from '../dom';
import { keyed } from './frame';

/** A prompt's skills at most (the controller drops the rest). */
export const MAX_SKILLS = 8;
/** A prompt's files at most (the controller drops the rest). */
export const MAX_FILES = 20;
/** Completions shown. */
const COMPLETIONS = 8;

export type SearchFn = (query: string, limit: number) => Promise<SearchMatch[]>;

/** The server's matcher (`GET /w/<id>/search`). */
export function serverSearch(workspaceId: string, fetchFn: typeof fetch = fetch): SearchFn {
  return async (query, limit) => {
    const response = await fetchFn(
      `/w/${encodeURIComponent(workspaceId)}/search?q=${encodeURIComponent(query)}&limit=${limit}`,
      { credentials: 'same-origin' },
    );
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`.trim());
    const body = (await response.json()) as { matches?: SearchMatch[] };
    return body.matches ?? [];
  };
}

/** The channel's `search` (`Channel.search`): `null` when it cannot carry one now. */
export type ChannelSearch = (query: string, limit: number) => Promise<SearchMatch[]> | null;

/** How long a search over the channel may take before `/search` is asked instead. */
const CHANNEL_SEARCH_TIMEOUT_MS = 5000;

/**
 * The matcher over the page's open channel (a `search` frame and its
 * `searchAnswer`: no new HTTP request per keystroke), else `fallback`
 * (`/search`): when the channel is not connected, drops before the answer,
 * or has not answered within five seconds.
 */
export function channelFirst(channel: ChannelSearch, fallback: SearchFn): SearchFn {
  return async (query, limit) => {
    const asked = channel(query, limit);
    if (asked === null) return fallback(query, limit);
    // An answer (or a drop) after the five seconds is nobody's.
    asked.catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => { timer = setTimeout(() => { resolve(null); }, CHANNEL_SEARCH_TIMEOUT_MS); });
    try {
      const answer = await Promise.race([asked, late]);
      return answer ?? await fallback(query, limit);
    } catch (error) {
      if (error instanceof ChannelDropped) return await fallback(query, limit);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The graph path a dropped file's name (or a dropped path) most likely is, from the matcher's answers. */
export function pickDropped(name: string, matches: readonly SearchMatch[]): string | null {
  const wanted = name.replace(/\\/g, '/').replace(/^\.\//, '');
  const exact = matches.find((m) => m.path === wanted || wanted.endsWith(`/${m.path}`));
  if (exact) return exact.path;
  const base = wanted.split('/').pop() ?? wanted;
  const same = matches.filter((m) => (m.path.split('/').pop() ?? m.path) === base);
  return same.length === 1 && same[0] ? same[0].path : null;
}

/** Sets an attribute only when it differs (an equal write still invalidates style). */
function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export class Composer {
  readonly el: HTMLElement;
  readonly skillsButton: HTMLButtonElement;
  private readonly skillsPopup: HTMLElement;
  private readonly chips: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly listbox: HTMLElement;
  private readonly status: HTMLElement;
  private skills: string[] = [];
  private files: string[] = [];
  private matches: SearchMatch[] = [];
  private active = -1;
  /**
   * The listbox's rows, made once and updated in place (each with the key
   * of what it shows: its path and marked characters); the first
   * `matches.length` are in the list, the others detached.
   */
  private readonly rows: { li: HTMLLIElement; label: HTMLSpanElement; key: string; selected: boolean }[] = [];
  private request = 0;
  /** A completion request is out. */
  private asking = false;
  private last: PageState | null = null;

  /** `warm`: starts what the completion will ask through (the search worker), on the input's first focus. */
  constructor(private readonly search: SearchFn, warm: () => void = () => undefined) {
    const listId = uniqueId('file-completions');
    const popupId = uniqueId('skills');
    this.skillsPopup = h('div', { class: 'skills-popup', id: popupId, role: 'group', 'aria-label': 'Skills to use', hidden: true });
    this.skillsButton = h('button', {
      type: 'button',
      'aria-expanded': 'false',
      'aria-controls': popupId,
      onclick: () => { this.toggleSkills(); },
    }, 'Skills');
    this.listbox = h('ul', { class: 'completions', id: listId, role: 'listbox', 'aria-label': 'Files', hidden: true });
    for (let i = 0; i < COMPLETIONS; i += 1) {
      const label = h('span', null);
      const li = h('li', {
        id: `${listId}-${i}`,
        role: 'option',
        'aria-selected': 'false',
        onmousedown: (event: Event) => {
          event.preventDefault();
          this.pick(i);
        },
      }, label);
      this.rows.push({ li, label, key: '', selected: false });
    }
    this.input = h('input', {
      type: 'text',
      class: 'add-file',
      role: 'combobox',
      'aria-label': 'Add file',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': listId,
      placeholder: 'Add file…',
      autocomplete: 'off',
      onfocus: warm,
      oninput: () => { void this.complete(); },
      onkeydown: (event: Event) => { this.keys(event as KeyboardEvent); },
    });
    this.chips = h('ul', { class: 'chips', 'aria-label': 'Attached' });
    this.status = h('p', { class: 'composer-status muted', role: 'status' });
    this.el = h('div', { class: 'composer' },
      h('div', { class: 'drawer-row' }, this.skillsButton, h('div', { class: 'add-file-box' }, this.input, this.listbox)),
      this.skillsPopup,
      this.chips,
      this.status);
  }

  /** What the next prompt carries. */
  attachments(): { skills: string[]; files: string[] } {
    return { skills: this.skills.slice(), files: this.files.slice() };
  }

  /** After a prompt went: the chips are spent. */
  clearAttachments(): void {
    this.skills = [];
    this.files = [];
    this.status.textContent = '';
    this.renderChips();
    if (this.last) this.renderSkills(this.last);
  }

  /** Adds a graph file (at most twenty). */
  addFile(path: string): boolean {
    if (this.files.includes(path)) return false;
    if (this.files.length >= MAX_FILES) {
      this.status.textContent = `At most ${MAX_FILES} files go with a prompt.`;
      return false;
    }
    this.files.push(path);
    this.renderChips();
    return true;
  }

  /** Adds a skill (at most eight). */
  addSkill(name: string): boolean {
    if (this.skills.includes(name) || this.skills.length >= MAX_SKILLS) return false;
    this.skills.push(name);
    this.renderChips();
    if (this.last) this.renderSkills(this.last);
    return true;
  }

  /** Drop and paste of files onto `target` (the prompt box's area). */
  bindDrop(target: HTMLElement): void {
    target.addEventListener('dragover', (event) => {
      if (event.dataTransfer && Array.from(event.dataTransfer.types).some((t) => t === 'Files' || t === 'text/plain' || t === 'text/uri-list')) {
        event.preventDefault();
      }
    });
    target.addEventListener('drop', (event) => {
      const data = event.dataTransfer;
      if (!data) return;
      const names = this.droppedNames(data);
      if (names.length === 0) return;
      event.preventDefault();
      void this.addDropped(names);
    });
    target.addEventListener('paste', (event) => {
      const data = event.clipboardData;
      if (!data || data.files.length === 0) return;
      event.preventDefault();
      void this.addDropped(Array.from(data.files, (f) => f.name));
    });
  }

  private droppedNames(data: DataTransfer): string[] {
    if (data.files.length > 0) return Array.from(data.files, (f) => f.name);
    const uris = data.getData('text/uri-list');
    if (uris) {
      return uris.split(/\r?\n/).filter((u) => u !== '' && !u.startsWith('#')).map((u) => {
        try {
          return decodeURIComponent(new URL(u).pathname);
        } catch {
          return u;
        }
      });
    }
    const text = data.getData('text/plain').trim();
    return text !== '' && !text.includes('\n') ? [text] : [];
  }

  /** Resolves dropped names against the graph; a name that is none goes as it is, for the controller to drop with its notice. */
  async addDropped(names: readonly string[]): Promise<void> {
    for (const name of names) {
      let path: string | null;
      try {
        path = pickDropped(name, await this.search(name.split('/').pop() ?? name, 50));
      } catch {
        path = null;
      }
      this.addFile(path ?? name);
    }
  }

  render(state: PageState): void {
    this.last = state;
    this.skillsButton.disabled = (state.catalog?.skills.length ?? 0) === 0;
    this.skillsButton.title = this.skillsButton.disabled ? 'No skills: Claude Code lists none on disk for this folder' : '';
    this.renderSkills(state);
  }

  private toggleSkills(): void {
    const open = this.skillsPopup.hidden;
    this.skillsPopup.hidden = !open;
    this.skillsButton.setAttribute('aria-expanded', String(open));
    if (open) this.skillsPopup.querySelector<HTMLInputElement>('input')?.focus();
  }

  private renderSkills(state: PageState): void {
    const skills = state.catalog?.skills ?? [];
    if (!keyed(this.skillsPopup, JSON.stringify([skills, this.skills]))) return;
    clear(this.skillsPopup);
    const full = this.skills.length >= MAX_SKILLS;
    for (const skill of skills) {
      const checked = this.skills.includes(skill.name);
      const box = h('input', {
        type: 'checkbox',
        checked,
        disabled: full && !checked,
        onchange: () => {
          if (box.checked) this.addSkill(skill.name);
          else this.removeSkill(skill.name);
        },
      });
      this.skillsPopup.appendChild(
        h('label', { class: 'skill-option', title: skill.description ?? '' }, box, ` ${skill.name}`,
          skill.description ? h('span', { class: 'muted' }, ` — ${skill.description}`) : null),
      );
    }
    if (full) this.skillsPopup.appendChild(h('p', { class: 'muted' }, `At most ${MAX_SKILLS} skills go with a prompt.`));
  }

  private removeSkill(name: string): void {
    this.skills = this.skills.filter((s) => s !== name);
    this.renderChips();
    if (this.last) this.renderSkills(this.last);
  }

  private renderChips(): void {
    clear(this.chips);
    this.skills.forEach((name, i) => {
      this.chips.appendChild(h('li', { class: 'chip chip-skill' },
        h('span', null, i === 0 ? `/${name}` : name),
        h('button', { type: 'button', class: 'link-button', 'aria-label': `Remove skill ${name}`, onclick: () => { this.removeSkill(name); } }, '×')));
    });
    for (const path of this.files) {
      this.chips.appendChild(h('li', { class: 'chip chip-file' },
        h('span', null, `@${path}`),
        h('button', { type: 'button', class: 'link-button', 'aria-label': `Remove file ${path}`, onclick: () => {
          this.files = this.files.filter((f) => f !== path);
          this.renderChips();
        } }, '×')));
    }
  }

  /**
   * Completes the input's value: one request at a time. A key typed while
   * one is out waits for its answer (which is dropped when the value moved
   * on), then asks for the value of that moment: typing faster than the
   * answers skips the keystrokes in between instead of queueing them.
   */
  private async complete(): Promise<void> {
    this.request += 1;
    if (this.asking) return;
    this.asking = true;
    try {
      for (;;) {
        const request = this.request;
        const query = this.input.value.trim();
        if (query === '') {
          this.showMatches([]);
          return;
        }
        let matches: SearchMatch[] | Error;
        try {
          matches = await this.search(query, COMPLETIONS);
        } catch (error) {
          matches = error instanceof Error ? error : new Error(String(error));
        }
        if (request !== this.request) continue;
        if (matches instanceof Error) {
          this.status.textContent = `Completion failed: ${matches.message}`;
          this.showMatches([]);
        } else {
          this.showMatches(matches);
        }
        return;
      }
    } finally {
      this.asking = false;
    }
  }

  /**
   * Shows `matches` (at most eight) in the rows made once: a row whose
   * path and marks are the same is left alone, another gets its text
   * anew (runs of matched characters in `<mark>`); rows past the matches
   * are detached. Nothing here reads layout.
   */
  private showMatches(matches: SearchMatch[]): void {
    this.matches = matches.slice(0, COMPLETIONS);
    this.active = this.matches.length > 0 ? 0 : -1;
    this.rows.forEach((row, i) => {
      const m = this.matches[i];
      if (!m) {
        if (row.li.parentNode) row.li.remove();
        return;
      }
      const key = `${m.path}\n${m.indices.join(',')}`;
      if (row.key !== key) {
        row.key = key;
        row.li.setAttribute('data-path', m.path);
        row.label.replaceChildren(...marked(m.path, m.indices));
      }
      if (row.li.parentNode !== this.listbox) this.listbox.appendChild(row.li);
    });
    const open = this.matches.length > 0;
    if (this.listbox.hidden === open) this.listbox.hidden = !open;
    setAttr(this.input, 'aria-expanded', String(open));
    this.markActive();
  }

  private markActive(): void {
    this.rows.forEach((row, i) => {
      const selected = i === this.active;
      if (row.selected !== selected) {
        row.selected = selected;
        row.li.setAttribute('aria-selected', String(selected));
      }
    });
    if (this.active >= 0) setAttr(this.input, 'aria-activedescendant', `${this.listbox.id}-${this.active}`);
    else if (this.input.hasAttribute('aria-activedescendant')) this.input.removeAttribute('aria-activedescendant');
  }

  private pick(i: number): void {
    const m = this.matches[i];
    if (!m) return;
    this.addFile(m.path);
    this.input.value = '';
    this.request += 1;
    this.showMatches([]);
    this.input.focus();
  }

  private keys(e: KeyboardEvent): void {
    const n = this.matches.length;
    if (e.key === 'ArrowDown' && n > 0) {
      e.preventDefault();
      this.active = (this.active + 1) % n;
      this.markActive();
    } else if (e.key === 'ArrowUp' && n > 0) {
      e.preventDefault();
      this.active = (this.active - 1 + n) % n;
      this.markActive();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (this.active >= 0) this.pick(this.active);
    } else if (e.key === 'Escape' && n > 0) {
      e.stopPropagation();
      this.showMatches([]);
    }
  }
}
