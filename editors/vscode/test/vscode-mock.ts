/**
 * The part of the `vscode` API the extension uses, recorded: commands
 * registered, messages shown (with a scripted answer), input boxes, the
 * workspace's folders and trust, configuration, status bar items, panels.
 */
type Listener<T> = (value: T) => unknown;

class Emitter<T> {
  listeners: Listener<T>[] = [];
  event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  };
  fire(value: T): void {
    for (const l of this.listeners) void l(value);
  }
}

export class Uri {
  constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(path: string): Uri { return new Uri('file', path); }
  static parse(value: string): Uri {
    const colon = value.indexOf(':');
    const uri = new Uri(value.slice(0, colon), value.slice(colon + 1));
    uri.raw = value;
    return uri;
  }
  static joinPath(base: Uri, ...parts: string[]): Uri { return new Uri(base.scheme, [base.fsPath, ...parts].join('/')); }
  raw: string | null = null;
  toString(): string { return this.raw ?? `${this.scheme}://${this.fsPath}`; }
}

export class Position { constructor(readonly line: number, readonly character: number) {} }
export class Range { constructor(readonly start: Position, readonly end: Position) {} }
export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ViewColumn { One = 1, Beside = -2 }

export const recorded = {
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  serializers: new Map<string, unknown>(),
  info: [] as { message: string; items: string[] }[],
  warnings: [] as string[],
  errors: [] as string[],
  statusItems: [] as { text: string; tooltip: string; command: string; shown: boolean }[],
  /** The answer the next information message gets. */
  infoAnswer: undefined as string | undefined,
  inputAnswer: undefined as string | undefined,
  shownDocuments: [] as unknown[],
  panels: [] as { visible: boolean; posted: unknown[]; receive(message: unknown): Promise<unknown>; webview: { html: string } }[],
  /** What VS Code's file dialog answers next. */
  dialogAnswer: undefined as { scheme: string; fsPath: string }[] | undefined,
  external: [] as string[],
};

export const trust = new Emitter<void>();
export const config = new Emitter<{ affectsConfiguration(section: string): boolean }>();

export const settings: Record<string, unknown> = {};
export const inspected: Record<string, { globalValue?: unknown; workspaceValue?: unknown }> = {};

export const workspace = {
  isTrusted: true,
  workspaceFolders: [{ uri: Uri.file('/tmp/ws') }] as { uri: Uri }[] | undefined,
  onDidGrantWorkspaceTrust: trust.event,
  onDidChangeConfiguration: config.event,
  getConfiguration: (section: string) => ({
    get: <T>(key: string): T | undefined => settings[`${section}.${key}`] as T | undefined,
    inspect: <T>(key: string) => inspected[`${section}.${key}`] as { globalValue?: T; workspaceValue?: T } | undefined,
  }),
  openTextDocument: (uri: Uri) => Promise.resolve({ uri }),
};

export const window = {
  activeTextEditor: undefined as { document: { uri: Uri } } | undefined,
  createStatusBarItem: () => {
    const item = { text: '', tooltip: '', command: '', name: '', shown: false, show() { item.shown = true; }, dispose() { item.shown = false; } };
    recorded.statusItems.push(item);
    return item;
  },
  showInformationMessage: (message: string, ...items: string[]) => {
    recorded.info.push({ message, items });
    return Promise.resolve(recorded.infoAnswer);
  },
  showWarningMessage: (message: string) => {
    recorded.warnings.push(message);
    return Promise.resolve(undefined);
  },
  showErrorMessage: (message: string) => {
    recorded.errors.push(message);
    return Promise.resolve(undefined);
  },
  showInputBox: () => Promise.resolve(recorded.inputAnswer),
  showTextDocument: (document: unknown, options: unknown) => {
    recorded.shownDocuments.push({ document, options });
    return Promise.resolve();
  },
  showOpenDialog: () => Promise.resolve(recorded.dialogAnswer),
  registerWebviewPanelSerializer: (viewType: string, serializer: unknown) => {
    recorded.serializers.set(viewType, serializer);
    return { dispose: () => undefined };
  },
  createWebviewPanel: () => {
    const messages = new Emitter<unknown>();
    const disposed = new Emitter<void>();
    const panel = {
      visible: true,
      posted: [] as unknown[],
      /** A message from the page; resolves once the extension handled it. */
      receive: (message: unknown) => Promise.all(messages.listeners.map((l) => l(message))),
      webview: {
        options: {},
        html: '',
        cspSource: 'vscode-webview:',
        asWebviewUri: (uri: Uri) => uri,
        postMessage: (message: unknown) => {
          // As VS Code's: a disposed webview throws.
          if (panel.disposed) throw new Error('Webview is disposed');
          panel.posted.push(message);
          return Promise.resolve(true);
        },
        onDidReceiveMessage: messages.event,
      },
      onDidDispose: disposed.event,
      reveal: () => undefined,
      disposed: false,
      dispose: () => {
        panel.disposed = true;
        disposed.fire();
      },
    };
    recorded.panels.push(panel);
    return panel;
  },
};

export const env = {
  openExternal: (uri: Uri) => {
    recorded.external.push(uri.toString());
    return Promise.resolve(true);
  },
};

export const commands = {
  registerCommand: (id: string, run: (...args: unknown[]) => unknown) => {
    recorded.commands.set(id, run);
    return { dispose: () => recorded.commands.delete(id) };
  },
};

export interface Disposable { dispose(): unknown }
export type WebviewPanel = unknown;
export type StatusBarItem = unknown;
export type ExtensionContext = { subscriptions: Disposable[]; extensionUri: Uri };
