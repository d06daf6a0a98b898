/**
 * Orbit Code: the page beside the code. Finds `orbit` (`orbit.path`, else
 * `PATH`), joins the user's running Orbit or starts it for the first
 * workspace folder, shows the page in a webview whose channel the extension
 * host relays over the control socket, and adds the commands, the status
 * bar item, the notifications while the page is hidden, and the
 * `orbit.claude.*` settings.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ControlConnection, type ControlError } from './control';
import { controlSocket, findOrbit } from './locate';
import { Relay, type HostSettings } from './relay';
import { StatusModel, type Card } from './status';
import { nonce, pageHtml } from './webview';

export const VIEW_TYPE = 'orbit.page';

/** How long a started Orbit may take to answer on its socket. */
/** How long the webview's request for the map waits for the panel's connection. */
const MAP_WAIT_MS = 15000;
const START_PATIENCE_MS = 20000;

function actionId(): string {
  return `vsc-${randomUUID()}`;
}

/** What `vscode.WorkspaceConfiguration` gives the settings' reader. */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T; defaultValue?: T }
    | undefined;
}

/**
 * The `orbit.claude.*` settings as the host's settings for this workspace
 * (`orbit.page.settings`): each one the user set takes the place of Orbit's
 * own `settings.json` value; `null` leaves Orbit's. `bypassPermissions` is
 * passed on only from the user's own settings, never a workspace's.
 */
export function hostSettings(config: SettingsSource): { settings: HostSettings; warnings: string[] } {
  const warnings: string[] = [];
  const text = (key: string): string | null => {
    const value = config.get<unknown>(key);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
  };
  const set = (key: string): boolean => {
    const i = config.inspect<unknown>(key);
    return i !== undefined && (i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined);
  };
  let extraArgs: string[] | null = null;
  if (set('claude.extraArgs')) {
    const value = config.get<unknown>('claude.extraArgs');
    if (Array.isArray(value) && value.every((a): a is string => typeof a === 'string')) extraArgs = value;
    else warnings.push('orbit.claude.extraArgs must be an array of strings; Orbit\'s own claude.extraArgs is used');
  }
  let permissionMode = set('claude.permissionMode') ? text('claude.permissionMode') : null;
  if (permissionMode !== null && /bypass/i.test(permissionMode.replace(/[\s\-_.]/g, ''))) {
    const i = config.inspect<string>('claude.permissionMode');
    const fromWorkspace = i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
    if (fromWorkspace || i?.globalValue !== 'bypassPermissions') {
      warnings.push('orbit.claude.permissionMode: bypassPermissions is accepted only from your user settings, not a workspace\'s');
      permissionMode = null;
    }
  }
  return {
    settings: {
      path: text('claude.path'),
      extraArgs,
      model: text('claude.model'),
      effort: text('claude.effort'),
      permissionMode,
    },
    warnings,
  };
}

/** One folder's connection to Orbit: the watcher (status, notifications, commands) and the panel. */
export class OrbitCode implements vscode.Disposable {
  private readonly model = new StatusModel();
  private watcher: Relay | null = null;
  private panel: vscode.WebviewPanel | null = null;
  private panelRelay: Relay | null = null;
  private readonly status: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private ready: Promise<string> | null = null;
  private trustSent = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.status.command = 'orbit.open';
    this.status.name = 'Orbit Code';
    this.renderStatus();
    this.status.show();
  }

  get folder(): string | null {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? null;
  }

  get socket(): string {
    return controlSocket(this.env);
  }

  /** Joins the running Orbit, or starts it; the control socket's path. */
  ensureOrbit(): Promise<string> {
    this.ready ??= this.startOrJoin().catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  private async startOrJoin(): Promise<string> {
    const socket = this.socket;
    if (await ping(socket)) return socket;
    const folder = this.folder;
    if (!folder) throw new Error('Open a folder first: Orbit shows a workspace folder');
    const config = vscode.workspace.getConfiguration('orbit');
    const orbit = findOrbit(config.get<string>('path') ?? '', this.env);
    // The user's Orbit outlives the window: started on its own, its output unread.
    const child = spawn(orbit, ['open', '--no-browser', folder], {
      cwd: folder,
      env: this.env,
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    const deadline = Date.now() + START_PATIENCE_MS;
    while (Date.now() < deadline) {
      if (await ping(socket)) return socket;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`Orbit did not answer on ${socket} within ${START_PATIENCE_MS / 1000} s`);
  }

  /** Starts the watcher that feeds the status bar and the notifications. */
  async watch(): Promise<void> {
    if (this.watcher) return;
    const folder = this.folder;
    if (!folder) return;
    const socket = await this.ensureOrbit();
    const watcher = new Relay({
      socket,
      workspace: folder,
      trusted: () => vscode.workspace.isTrusted,
      events: {
        frames: (frames) => {
          this.onFrames(frames);
        },
        state: (state) => {
          if (state === 'open') {
            void watcher.fromPage({ type: 'resume', instanceId: this.model.instanceId, lastSeq: this.model.lastSeq });
          }
        },
      },
    });
    this.watcher = watcher;
    watcher.start();
  }

  private onFrames(frames: unknown[]): void {
    const fresh = frames.some(isFreshHello);
    const arrived = this.model.apply(frames);
    // A new connection to an Orbit that may not have them (started again): the settings again.
    if (fresh) void this.applySettings().catch(() => undefined);
    this.renderStatus();
    if (vscode.workspace.isTrusted && !this.model.trusted && !this.trustSent && frames.some(isWorkspaceFrame)) {
      // VS Code trusts the folder: Orbit trusts it too.
      this.trustSent = true;
      void this.watcher?.act({ type: 'trust', id: actionId() });
    }
    if (!this.panel?.visible) for (const card of arrived) void this.notify(card);
  }

  private renderStatus(): void {
    const { text, tooltip } = this.model.text();
    this.status.text = text;
    this.status.tooltip = tooltip;
  }

  private async notify(card: Card): Promise<void> {
    const open = 'Open Orbit';
    const skip = 'Skip';
    const choices = card.kind === 'questions' ? [open, skip] : [open];
    const message = card.kind === 'questions' ? `Claude asks: ${card.title}` : `Claude is waiting: ${card.title}`;
    const picked = await vscode.window.showInformationMessage(message, ...choices);
    if (picked === open) await this.open();
    if (picked === skip) {
      await this.act({ type: 'skipQuestions', key: card.key, requestId: card.requestId });
    }
  }

  /** Sends a request as the extension (commands, settings). */
  async act(request: Record<string, unknown>): Promise<void> {
    await this.watch();
    await this.watcher?.whenConnected(START_PATIENCE_MS);
    const ack = await this.watcher?.act({ type: 'action', id: actionId(), request });
    if (ack && !ack.ok) {
      void vscode.window.showWarningMessage(`Orbit refused: ${ack.message ?? ack.code ?? 'unknown reason'}`);
    }
  }

  /** **Orbit Code: Ask Claude…** */
  async askClaude(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Orbit Code: Claude is unavailable until VS Code trusts this folder (Workspaces: Manage Workspace Trust).');
      return;
    }
    const text = await vscode.window.showInputBox({ title: 'Ask Claude', prompt: 'Continues the current conversation', ignoreFocusOut: true });
    if (text === undefined || text.trim() === '') return;
    const files: string[] = [];
    const editor = vscode.window.activeTextEditor;
    const folder = this.folder;
    if (editor && folder && editor.document.uri.scheme === 'file') {
      const relative = path.relative(folder, editor.document.uri.fsPath);
      // Orbit keeps it only when it is a graph file.
      if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)) files.push(relative.split(path.sep).join('/'));
    }
    await this.act({ type: 'prompt', text, skills: [], files });
  }

  /**
   * Passes the `orbit.claude.*` settings on as the host's settings for this
   * workspace: a new path or extra arguments probe again; model, effort and
   * mode apply from the next prompt. Not while VS Code does not trust the
   * folder (no sessions there, and the restricted settings are not the
   * user's to trust yet).
   */
  async applySettings(): Promise<void> {
    if (!vscode.workspace.isTrusted) return;
    const { settings, warnings } = hostSettings(vscode.workspace.getConfiguration('orbit'));
    for (const warning of warnings) this.warnOnce(warning);
    await this.watch();
    await this.watcher?.whenConnected(START_PATIENCE_MS);
    let applied;
    try {
      applied = await this.watcher?.settings(settings);
    } catch (error) {
      const e = error as ControlError;
      this.warnOnce(
        e.code === 'unknown_method'
          ? 'this orbit does not take the editor\'s settings (update orbit); the orbit.claude.* settings are not applied'
          : `the orbit.claude.* settings were not applied: ${e.message}`,
      );
      return;
    }
    if (!applied) return;
    for (const warning of applied.warnings) if (/claude\./.test(warning)) this.warnOnce(warning);
    if (applied.reprobed && !applied.agent.available && applied.agent.message) this.warnOnce(applied.agent.message);
  }

  private readonly warned = new Set<string>();

  private warnOnce(warning: string): void {
    if (this.warned.has(warning)) return;
    this.warned.add(warning);
    void vscode.window.showWarningMessage(`Orbit Code: ${warning}`);
  }

  async trustGranted(): Promise<void> {
    this.trustSent = false;
    await this.watcher?.trustChanged();
    await this.panelRelay?.trustChanged();
    if (!this.model.trusted) {
      this.trustSent = true;
      await this.watcher?.act({ type: 'trust', id: actionId() });
    }
    await this.applySettings();
  }

  /** **Orbit Code: Open** (and a restored panel). */
  async open(restored?: vscode.WebviewPanel): Promise<void> {
    if (this.panel && !restored) {
      this.panel.reveal();
      return;
    }
    const pageRoot = vscode.Uri.joinPath(this.context.extensionUri, 'page');
    const panel =
      restored ??
      vscode.window.createWebviewPanel(VIEW_TYPE, 'Orbit', vscode.ViewColumn.Beside, {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [pageRoot],
      });
    panel.webview.options = { enableScripts: true, localResourceRoots: [pageRoot] };
    this.panel = panel;
    const index = fs.readFileSync(vscode.Uri.joinPath(pageRoot, 'index.html').fsPath, 'utf8');
    const scriptNonce = nonce();
    panel.webview.html = pageHtml(
      index,
      (asset) => panel.webview.asWebviewUri(vscode.Uri.joinPath(pageRoot, ...asset.split('/'))).toString(),
      panel.webview.cspSource,
      scriptNonce,
    );
    let relay: Relay | null = null;
    let disposed = false;
    const post = (message: unknown): void => {
      // A disposed webview throws: nothing is posted to it any more.
      if (disposed) return;
      panel.webview.postMessage(message).then(undefined, () => undefined);
    };
    const listener = panel.webview.onDidReceiveMessage(async (message: unknown) => {
      const m = message as { orbit?: unknown; frame?: unknown; path?: unknown; line?: unknown; id?: unknown };
      if (m.orbit === 'ready') {
        try {
          const socket = await this.ensureOrbit();
          const folder = this.folder;
          if (!folder) throw new Error('Open a folder first: Orbit shows a workspace folder');
          relay?.close();
          relay = new Relay({
            socket,
            workspace: folder,
            trusted: () => vscode.workspace.isTrusted,
            events: {
              frames: (frames) => { post({ orbit: 'frames', frames }); },
              state: (state, reason) => { post({ orbit: 'state', state, reason }); },
              // A sign-in's address opens in the system browser, through VS Code (remote windows too).
              openExternal: (url) => { void vscode.env.openExternal(vscode.Uri.parse(url)); },
            },
          });
          this.panelRelay = relay;
          relay.start();
        } catch (error) {
          post({ orbit: 'state', state: 'closed', reason: String((error as Error).message) });
          void vscode.window.showErrorMessage(`Orbit Code: ${(error as Error).message}`);
        }
      } else if (m.orbit === 'frame') {
        await relay?.fromPage(m.frame);
      } else if (m.orbit === 'openFile' && typeof m.path === 'string') {
        await this.openFile(m.path, typeof m.line === 'number' ? m.line : null);
      } else if (m.orbit === 'pickFiles') {
        post({ orbit: 'picked', paths: await this.pickFiles(relay) });
      } else if (m.orbit === 'map' && typeof m.id === 'number') {
        // The map's snapshot, relayed (the webview has no `/map` route).
        // The page asks at once, while its connection may still be on its
        // way: the answer waits for it (a while).
        try {
          const deadline = Date.now() + MAP_WAIT_MS;
          while (!relay && !disposed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
          if (!relay) throw new Error('Orbit is not connected yet');
          await relay.whenConnected(Math.max(0, deadline - Date.now()));
          post({ orbit: 'map', id: m.id, bytes: await relay.map() });
        } catch (error) {
          post({ orbit: 'map', id: m.id, error: String((error as Error).message) });
        }
      }
    });
    panel.onDidDispose(() => {
      disposed = true;
      if (this.panel === panel) {
        this.panel = null;
        this.panelRelay = null;
      }
      listener.dispose();
      relay?.close();
    });
  }

  /**
   * A file chip's **Add file**: VS Code's own file dialog. The absolute
   * paths it returns are told to Orbit by this code (`orbit.page.picked`)
   * before the page gets them, so a prompt may carry them; none when the
   * dialog is cancelled or Orbit refused them.
   */
  async pickFiles(relay: Relay | null): Promise<string[]> {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      canSelectFiles: true,
      canSelectFolders: false,
      openLabel: 'Add to the prompt',
      title: 'Add files to the prompt',
    });
    const paths = (picked ?? []).filter((uri) => uri.scheme === 'file').map((uri) => uri.fsPath);
    if (paths.length === 0 || !relay) return [];
    try {
      await relay.picked(paths);
    } catch (error) {
      void vscode.window.showWarningMessage(`Orbit Code: the files were not added: ${(error as Error).message}`);
      return [];
    }
    return paths;
  }

  /** Opens a graph file (workspace-relative, as the page names it) at `line`. */
  async openFile(graphPath: string, line: number | null): Promise<void> {
    const folder = this.folder;
    if (!folder) return;
    const file = path.resolve(folder, graphPath);
    if (path.relative(folder, file).startsWith('..') || path.isAbsolute(graphPath)) return;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const at = line !== null && line > 0 ? new vscode.Position(line - 1, 0) : null;
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.One,
      selection: at ? new vscode.Range(at, at) : undefined,
    });
  }

  dispose(): void {
    this.watcher?.close();
    this.panelRelay?.close();
    this.panel?.dispose();
    this.status.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

function isFreshHello(frame: unknown): boolean {
  const body = (frame as { body?: { type?: unknown; resumed?: unknown } } | null)?.body;
  return body?.type === 'hello' && body.resumed !== true;
}

function isWorkspaceFrame(frame: unknown): boolean {
  return (frame as { body?: { type?: unknown } } | null)?.body?.type === 'workspace';
}

async function ping(socket: string): Promise<boolean> {
  const connection = new ControlConnection(socket);
  try {
    const pong = (await connection.call('orbit.ping')) as { instanceId?: unknown };
    return typeof pong.instanceId === 'string';
  } catch {
    return false;
  } finally {
    connection.close();
  }
}

export function activate(context: vscode.ExtensionContext): OrbitCode {
  const orbit = new OrbitCode(context);
  const report = (error: unknown): void => {
    void vscode.window.showErrorMessage(`Orbit Code: ${(error as Error).message}`);
  };
  const run = (work: () => Promise<void>) => () => work().catch(report);
  context.subscriptions.push(
    orbit,
    vscode.commands.registerCommand('orbit.open', run(() => orbit.open())),
    vscode.commands.registerCommand('orbit.askClaude', run(() => orbit.askClaude())),
    vscode.commands.registerCommand('orbit.stopClaude', run(() => orbit.act({ type: 'stopAll' }))),
    vscode.commands.registerCommand('orbit.newConversation', run(() => orbit.act({ type: 'newConversation' }))),
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      deserializeWebviewPanel: (panel: vscode.WebviewPanel) => orbit.open(panel).catch(report),
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      orbit.trustGranted().catch(report);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('orbit.claude')) orbit.applySettings().catch(report);
    }),
  );
  if (orbit.folder) {
    // The watcher's first connection passes the settings on.
    orbit.watch().catch(report);
    if (vscode.workspace.getConfiguration('orbit').get<boolean>('openOnStartup')) orbit.open().catch(report);
  }
  return orbit;
}

export function deactivate(): void {
  // The subscriptions close the relays; the user's Orbit goes on.
}
