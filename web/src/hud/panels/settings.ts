/**
 * Settings: the comboboxes `Model` (the catalog's models, the default
 * marked), `Effort` (the chosen model's levels; none for a model without
 * levels) and `Permission mode` (`default`, `acceptEdits`, `plan`: never
 * `bypassPermissions`, which only settings.json can set). Each says which
 * value is in force and where it comes from; a choice made here applies
 * from the next prompt and is remembered for the workspace until `Reset to
 * defaults`. The path and extra arguments are shown, never editable.
 */
import type { CatalogState, ModelChoice, PageRequest, SettingsState } from '../../protocol/types';
import type { PageState } from '../../state/store';
import { clear, h, setText } from '../dom';
import { keyed, sourceText } from './frame';

/** The permission modes the page offers. */
export const PAGE_MODES = ['default', 'acceptEdits', 'plan'] as const;

const MODE_TEXT: Record<(typeof PAGE_MODES)[number], string> = {
  default: 'Default (your Claude Code settings decide)',
  acceptEdits: 'Accept edits',
  plan: 'Plan only',
};

/** The model in force: the settings' value, else the catalog's default. */
export function modelInForce(settings: SettingsState | null, catalog: CatalogState | null): ModelChoice | null {
  const models = catalog?.models ?? [];
  const value = settings?.model.value ?? null;
  if (value !== null) return models.find((m) => m.value === value) ?? null;
  return models.find((m) => m.isDefault) ?? null;
}

/** The effort levels the model in force offers. */
export function effortLevels(settings: SettingsState | null, catalog: CatalogState | null): string[] {
  return modelInForce(settings, catalog)?.effortLevels ?? [];
}

export class SettingsPanel {
  readonly el: HTMLElement;
  private readonly model: HTMLSelectElement;
  private readonly effort: HTMLSelectElement;
  private readonly mode: HTMLSelectElement;
  private readonly modelSource: HTMLElement;
  private readonly effortSource: HTMLElement;
  private readonly modeSource: HTMLElement;
  private readonly process: HTMLElement;
  private readonly status: HTMLElement;
  private readonly reset: HTMLButtonElement;

  constructor(private readonly send: (request: PageRequest) => string) {
    const field = (label: string, select: HTMLSelectElement, source: HTMLElement): HTMLElement =>
      h('div', { class: 'panel-field' }, h('label', null, h('span', { class: 'panel-label' }, label), select), source);
    this.model = h('select', { onchange: () => {
      this.send({ type: 'setModel', model: this.model.value === '' ? null : this.model.value });
    } });
    this.effort = h('select', { onchange: () => {
      this.send({ type: 'setEffort', effort: this.effort.value === '' ? null : this.effort.value });
    } });
    this.mode = h('select', { onchange: () => {
      this.send({ type: 'setPermissionMode', mode: this.mode.value });
    } });
    for (const mode of PAGE_MODES) this.mode.appendChild(h('option', { value: mode }, MODE_TEXT[mode]));
    this.modelSource = h('p', { class: 'panel-source muted' });
    this.effortSource = h('p', { class: 'panel-source muted' });
    this.modeSource = h('p', { class: 'panel-source muted' });
    this.process = h('dl', { class: 'panel-process' });
    this.status = h('p', { class: 'panel-status muted', role: 'status' });
    this.reset = h('button', { type: 'button', onclick: () => { this.send({ type: 'resetSettings' }); } }, 'Reset to defaults');
    this.el = h(
      'div',
      { class: 'panel-body settings-panel' },
      this.status,
      field('Model', this.model, this.modelSource),
      field('Effort', this.effort, this.effortSource),
      field('Permission mode', this.mode, this.modeSource),
      h('p', { class: 'muted' }, 'A change applies from each conversation’s next prompt.'),
      this.reset,
      h('h3', null, 'The process'),
      this.process,
    );
  }

  render(state: PageState): void {
    const { settings, catalog } = state;
    setText(this.status, catalog === null
      ? 'Waiting for Orbit…'
      : catalog.status === 'loading'
        ? 'Reading the models Claude Code offers…'
        : catalog.status === 'ready'
          ? ''
          : `The models could not be listed: ${catalog.message ?? catalog.status}.`);
    const online = state.connection === 'open';
    const models = catalog?.models ?? [];
    const chosen = settings?.model.value ?? '';
    if (keyed(this.model, JSON.stringify([models, chosen]))) {
      clear(this.model);
      const def = models.find((m) => m.isDefault);
      this.model.appendChild(h('option', { value: '' }, def ? `Default (${def.displayName})` : 'Default'));
      for (const m of models) {
        if (m.value === 'default') continue;
        this.model.appendChild(h('option', { value: m.value, title: m.description ?? '' }, `${m.displayName}${m.isDefault ? ' (default)' : ''}`));
      }
      if (chosen !== '' && !models.some((m) => m.value === chosen)) {
        this.model.appendChild(h('option', { value: chosen }, chosen));
      }
      this.model.value = chosen === 'default' ? '' : chosen;
    }
    this.model.disabled = !online || settings === null;
    setText(this.modelSource, settings ? `${settings.model.value ?? 'Default'}: ${sourceText(settings.model.source)}` : '');

    const levels = effortLevels(settings, catalog);
    const effort = settings?.effort.value ?? '';
    if (keyed(this.effort, JSON.stringify([levels, effort]))) {
      clear(this.effort);
      this.effort.appendChild(h('option', { value: '' }, levels.length === 0 ? 'None (this model has no effort levels)' : 'None'));
      for (const level of levels) this.effort.appendChild(h('option', { value: level }, level));
      this.effort.value = levels.includes(effort) ? effort : '';
    }
    this.effort.disabled = !online || settings === null || levels.length === 0;
    setText(this.effortSource, settings ? `${settings.effort.value ?? 'None'}: ${sourceText(settings.effort.source)}` : '');

    const mode = settings?.permissionMode.value ?? 'default';
    const offered = (PAGE_MODES as readonly string[]).includes(mode);
    // Set only when it differs: setting a select's value, even to the same one, selects the option
    // again and invalidates its style (~1 ms on every frame of a turn).
    const shownMode = offered ? mode : 'default';
    if (this.mode.value !== shownMode) this.mode.value = shownMode;
    this.mode.disabled = !online || settings === null || !offered;
    setText(this.modeSource, settings
      ? offered
        ? `${mode}: ${sourceText(settings.permissionMode.source)}`
        : `${mode} is in force, ${sourceText(settings.permissionMode.source)}; only settings.json can change it.`
      : '');
    this.reset.disabled = !online || settings === null
      || [settings.model, settings.effort, settings.permissionMode].every((s) => s.source !== 'page');

    if (settings && keyed(this.process, JSON.stringify([settings.path, settings.executable, settings.extraArgs, settings.extraArgsSource, settings.settingsFile, settings.warnings]))) {
      clear(this.process);
      const row = (term: string, value: string): void => {
        this.process.append(h('dt', null, term), h('dd', null, value));
      };
      row('Executable', `${settings.executable ?? 'not found'} (${settings.path.value ? `claude.path ${sourceText(settings.path.source)}` : 'found on PATH'})`);
      row('Extra arguments', `${settings.extraArgs.length === 0 ? 'none' : settings.extraArgs.join(' ')} (${sourceText(settings.extraArgsSource)})`);
      row('Settings file', settings.settingsFile);
      for (const warning of settings.warnings) row('Ignored', warning);
    }
  }
}
