// The PromptForge extension: starts `promptforge lsp`, gives prompt files the
// `promptforge` language, runs prompts and their tests (editor.md §2, §3),
// shows the runs' traces in the PromptForge Runs view (runs.ts), and debugs
// prompts on `promptforge dap` (debug.ts).

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  State,
  TransportKind,
  WorkDoneProgressCancelNotification,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { runArgument, runKindOf, testArgument, uriOfArgument } from './logic/args.mts';
import { bundledPath, type Resolved, resolveServer, serverArgs } from './logic/binary.mts';
import { registerDebugger } from './debug.ts';
import { baseName, isPromptFileName, isPromptText } from './logic/detect.mts';
import { type RunEvent, RunLog, type RunStart, summary } from './logic/events.mts';
import { serveE2eRequests, watchDebugSessions } from './e2e.ts';
import { ServerProgress } from './logic/progress.mts';
import { progressMiddleware, showProgress } from './progress.ts';
import { RunsView } from './runs.ts';
import { TestingView } from './testing.ts';
import { initializationOptions, type TrustedCommand } from './logic/trust.mts';
import { allowedInThisWorkspace } from './trust.ts';

/** The `PromptForge` output channel, keeping its text for the tests. */
class Output {
  readonly channel = vscode.window.createOutputChannel('PromptForge');
  text = '';
  append(line: string): void {
    this.text += line + '\n';
    this.channel.appendLine(line);
  }
}

/** The running server: its client, and what it was started with. */
interface Server {
  readonly client: LanguageClient;
  /** The `initializationOptions.trusted` it was started with. */
  readonly trusted: boolean;
  /** The binary it was started from, and where that was found. */
  readonly binary: Resolved & { ok: true };
}

/**
 * The extension while it is active: its channels and status item, the runs
 * going on, and the server. The one piece of state of this module.
 */
class PromptForge {
  readonly output = new Output();
  readonly serverChannel = vscode.window.createOutputChannel('PromptForge Language Server');
  readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  readonly runLog = new RunLog({
    append: (text) => this.output.append(text),
    ended: (runId, start, event) => this.ended(runId, start, event),
  });
  /** The PromptForge Runs view (made by `activate`). */
  runsView: RunsView | undefined;
  /** The Testing view's controller (made by `activate`). */
  testingView: TestingView | undefined;
  /** The server's progress notifications (their Cancel cancels the run). */
  readonly progress = new ServerProgress({
    show: showProgress,
    cancel: (token) => void this.server?.client.sendNotification(WorkDoneProgressCancelNotification.type, { token }),
  });
  /** The server, while one was started and not stopped. */
  server: Server | undefined;
  /**
   * Starts and restarts run one after the other: granting trust also changes
   * the settings the workspace may set, and two restarts at once would leave a
   * server behind.
   */
  private starts: Promise<void> = Promise.resolve();

  /** The extension's folder, as a URI (for its README) and a path (a platform package carries the binary under server/). */
  private readonly extensionUri: vscode.Uri;
  private readonly extensionPath: string;

  constructor(context: vscode.ExtensionContext) {
    this.extensionUri = context.extensionUri;
    this.extensionPath = context.extensionPath;
    this.status.command = 'promptforge.stop';
    this.status.tooltip = 'Stop the PromptForge runs';
  }

  /** Registers the commands and listeners on `context`, classifies the open documents and starts the server. */
  async activate(context: vscode.ExtensionContext): Promise<void> {
    context.subscriptions.push(this.output.channel, this.serverChannel, this.status);
    const command = (name: string, handler: (...args: any[]) => unknown) =>
      context.subscriptions.push(vscode.commands.registerCommand(name, handler));
    // The run commands are refused in Restricted Mode (their menus are hidden there).
    const trustedCommand = (name: TrustedCommand, handler: (...args: any[]) => unknown) =>
      command(name, (...args: any[]) => (allowedInThisWorkspace(name) ? handler(...args) : undefined));
    this.runsView = new RunsView(context, {
      trace: (runId) => {
        const client = this.server?.client;
        if (!client?.isRunning()) return Promise.reject(new Error(`no trace of ${runId}: the language server is not running`));
        return client.sendRequest('promptforge/trace', { runId });
      },
    });
    this.testingView = new TestingView(
      context,
      {
        list: async (params) => {
          const client = this.server?.client;
          return client?.isRunning() ? client.sendRequest('promptforge/tests', params) : undefined;
        },
        run: async (argument) => {
          const client = this.server?.client;
          if (!client?.isRunning()) return undefined;
          const result = await client.sendRequest(ExecuteCommandRequest.type, {
            command: 'promptforge.test',
            arguments: [argument],
          });
          this.ranWith('test', argument, result, true);
          const runId = (result as { runId?: unknown } | undefined)?.runId;
          return typeof runId === 'string' ? runId : undefined;
        },
        cancel: (runId) => this.cancelRun(runId),
      },
      ({ runId, promptUri, caseName }) =>
        this.runsView?.showKept({ runId, uri: promptUri, file: `${baseName(promptUri)} (case "${caseName}")`, offline: false }),
    );
    trustedCommand('promptforge.runPrompt', (arg?: unknown) => this.startRun('run', arg));
    trustedCommand('promptforge.runOffline', (arg?: unknown) => this.startRun('run', arg, undefined, true));
    trustedCommand('promptforge.runWithArguments', (arg?: unknown) => this.runWithArguments(arg));
    trustedCommand('promptforge.runTests', (arg?: unknown) => this.startRun('test', arg));
    command('promptforge.stop', () => this.stopRuns());
    command('promptforge.restartServer', () => this.restart());
    // The end-to-end test's requests, only when its harness set the variable.
    const e2eDir = process.env.PROMPTFORGE_E2E_DIR;
    if (e2eDir) {
      context.subscriptions.push(
        serveE2eRequests(e2eDir, {
          outputText: () => this.output.text,
          runsState: () => this.runsView?.state(),
          testingState: () => this.testingView?.state(),
          serverState: () => ({
            workspaceTrusted: vscode.workspace.isTrusted,
            serverRunning: this.server?.client.isRunning() ?? false,
            serverTrusted: this.server?.trusted,
            serverBinary: this.server?.binary.path,
            serverSource: this.server?.binary.source,
          }),
        }),
        watchDebugSessions(),
      );
    }
    registerDebugger(context, {
      findBinary: () => this.findBinary(),
      reportMissingBinary: (message) => this.reportMissingBinary(message),
    });

    context.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument(classify),
      vscode.workspace.onDidSaveTextDocument(classify),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('promptforge.server') || e.affectsConfiguration('promptforge.trace')) {
          void this.restart();
        }
      }),
      // The server was told the workspace is not trusted: start it again, trusted.
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.restart()),
    );
    vscode.workspace.textDocuments.forEach(classify);
    await this.queued(() => this.startClient());
  }

  /**
   * The `promptforge` binary: the one `promptforge.server.path` names when it is
   * set, else the extension's own (platform packages), else `promptforge` on
   * `PATH`; or why there is none.
   */
  findBinary(): Resolved {
    const config = vscode.workspace.getConfiguration('promptforge');
    return resolveServer({
      setting: stringSetting(config.get<unknown>('server.path')),
      bundled: bundledPath(this.extensionPath, process.platform),
      envPath: process.env.PATH ?? '',
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      platform: process.platform,
      isExecutable: (file) => {
        try {
          fs.accessSync(file, fs.constants.X_OK);
          return fs.statSync(file).isFile();
        } catch {
          return false;
        }
      },
    });
  }

  /** Says the binary is missing, offering the install instructions and the setting. */
  reportMissingBinary(message: string): void {
    this.serverChannel.appendLine(message);
    void vscode.window
      .showErrorMessage(message, 'Install Instructions', 'Open Settings')
      .then((choice) => {
        if (choice === 'Install Instructions') {
          // A packaged extension has readme.md (vsce's name), a checkout README.md.
          const readme = ['readme.md', 'README.md']
            .map((name) => vscode.Uri.joinPath(this.extensionUri, name))
            .find((uri) => fs.existsSync(uri.fsPath));
          if (readme) void vscode.commands.executeCommand('markdown.showPreview', readme);
        } else if (choice === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'promptforge.server');
        }
      });
  }

  private async startClient(): Promise<void> {
    const config = vscode.workspace.getConfiguration('promptforge');
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const resolved = this.findBinary();
    if (!resolved.ok) {
      this.reportMissingBinary(resolved.message);
      return;
    }
    const from = { setting: 'promptforge.server.path', bundled: 'the extension', path: 'PATH' }[resolved.source];
    this.serverChannel.appendLine(`PromptForge: starting ${resolved.path} (from ${from})`);
    const serverOptions: ServerOptions = {
      command: resolved.path,
      args: serverArgs(config.get('server.extraArgs')),
      // The client adds `--stdio` after the arguments.
      transport: TransportKind.stdio,
      options: folder ? { cwd: folder } : undefined,
    };
    const trusted = vscode.workspace.isTrusted;
    const clientOptions: LanguageClientOptions = {
      initializationOptions: initializationOptions(trusted, config.get<string>('bookUrl') ?? ''),
      documentSelector: [
        { language: 'promptforge' },
        { language: 'yaml', pattern: '**/*.test.yaml' },
      ],
      outputChannel: this.serverChannel,
      middleware: {
        ...progressMiddleware(this.progress),
        // The lenses run `promptforge.run`/`promptforge.test` through here.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          const kind = runKindOf(command);
          if (kind) this.ranWith(kind, args[0], result);
          return result;
        },
      },
    };
    const started = new LanguageClient('promptforge', 'PromptForge', serverOptions, clientOptions);
    started.onNotification('promptforge/runEvent', (p: { runId: string; event: RunEvent }) => {
      this.testingView?.event(p.runId, p.event);
      this.runLog.event(p.runId, p.event);
    });
    started.onRequest('promptforge/ask', async (p: { runId: string; question: string }) => {
      const answer = await vscode.window.showInputBox({
        title: 'PromptForge asks',
        prompt: p.question,
        ignoreFocusOut: true,
      });
      return answer === undefined ? null : { answer };
    });
    started.onDidChangeState(({ newState }) => {
      // The server went (a crash too): its runs will send nothing more.
      if (newState === State.Stopped) {
        this.runLog.abandon('the language server stopped');
        this.testingView?.abandon();
        this.progress.clear();
        this.updateStatus();
      }
    });
    this.server = { client: started, trusted, binary: resolved };
    try {
      await started.start();
      void this.testingView?.refresh();
    } catch (error) {
      void vscode.window.showErrorMessage(`PromptForge: the language server did not start: ${error}`);
    }
  }

  /** Stops the server (if one runs); its runs are abandoned. */
  async stopClient(): Promise<void> {
    const old = this.server?.client;
    this.server = undefined;
    this.runLog.abandon('the language server stopped');
    this.progress.clear();
    this.updateStatus();
    if (old) await old.stop().catch(() => undefined);
  }

  private queued(work: () => Promise<void>): Promise<void> {
    // (One that failed does not stop the next.)
    this.starts = this.starts.catch(() => undefined).then(work);
    return this.starts;
  }

  private restart(): Promise<void> {
    return this.queued(async () => {
      await this.stopClient();
      await this.startClient();
    });
  }

  /**
   * Records a run the server started (its answer `{runId}`); a prompt run goes
   * to the Runs view too (`reveal`: shown there).
   */
  private ranWith(kind: 'run' | 'test', argument: any, result: unknown, reveal = false): void {
    const runId = (result as { runId?: unknown } | undefined)?.runId;
    if (typeof runId !== 'string') return;
    const uri = String(argument?.uri ?? '');
    const start: RunStart = {
      kind,
      file: baseName(uri),
      args: typeof argument?.args === 'string' ? argument.args : undefined,
      caseName: typeof argument?.case === 'string' ? argument.case : undefined,
      offline: argument?.offline === true ? true : undefined,
    };
    if (kind === 'run') this.runsView?.started({ runId, uri, file: start.file, offline: start.offline === true }, reveal);
    if (!reveal) this.output.channel.show(true);
    this.runLog.started(runId, start);
    this.updateStatus();
  }

  /**
   * Runs a prompt (`run`) or its tests (`test`) through the server; `offline`
   * answers every model label with `echo` and shows the run in the Runs view.
   */
  private async startRun(kind: 'run' | 'test', arg?: unknown, args?: string, offline = false): Promise<unknown> {
    const uri = targetUri(arg);
    const client = this.server?.client;
    if (!client?.isRunning()) {
      void vscode.window.showErrorMessage('PromptForge: the language server is not running.');
      return undefined;
    }
    if (!uri) {
      void vscode.window.showErrorMessage('PromptForge: open a prompt first.');
      return undefined;
    }
    const caseName = (arg as { case?: unknown } | undefined)?.case;
    const argument =
      kind === 'run'
        ? runArgument(uri, args, undefined, offline)
        : testArgument(uri, typeof caseName === 'string' ? caseName : undefined);
    const command = kind === 'run' ? 'promptforge.run' : 'promptforge.test';
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
      this.ranWith(kind, argument, result, offline);
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(`PromptForge: ${error instanceof Error ? error.message : error}`);
      return undefined;
    }
  }

  /** Asks for the argument string, then runs the prompt with it. */
  private async runWithArguments(arg?: unknown): Promise<unknown> {
    const uri = targetUri(arg);
    const args = await vscode.window.showInputBox({
      title: `Run ${uri ? baseName(uri) : 'the prompt'}`,
      prompt: 'The argument string of the run',
      ignoreFocusOut: true,
    });
    if (args === undefined) return undefined;
    return this.startRun('run', uri, args);
  }

  /** Cancels every run going on. */
  private async stopRuns(): Promise<void> {
    const runs = this.runLog.active();
    if (runs.length === 0 || !this.server) {
      void vscode.window.showInformationMessage('PromptForge: no run is going on.');
      return;
    }
    await Promise.all(runs.map((runId) => this.cancelRun(runId)));
  }

  /** Asks the server to cancel one run. */
  private async cancelRun(runId: string): Promise<void> {
    try {
      await this.server?.client.sendRequest(ExecuteCommandRequest.type, {
        command: 'promptforge.cancel',
        arguments: [{ runId }],
      });
    } catch (error) {
      void vscode.window.showErrorMessage(`PromptForge: the cancel failed: ${error}`);
    }
  }

  private ended(runId: string, start: RunStart | undefined, event: RunEvent): void {
    this.updateStatus();
    if (start?.kind === 'run') void this.runsView?.ended(runId, event);
    const text = summary(start, event);
    if (event.type === 'finished') void vscode.window.showInformationMessage(text);
    else if (event.type === 'failed' && event.kind === 'Cancelled') void vscode.window.showWarningMessage(text);
    else void vscode.window.showErrorMessage(text);
  }

  private updateStatus(): void {
    const count = this.runLog.active().length;
    void vscode.commands.executeCommand('setContext', 'promptforge.running', count > 0);
    if (count === 0) {
      this.status.hide();
      return;
    }
    this.status.text = `$(sync~spin) PromptForge: ${count} run${count === 1 ? '' : 's'} (click to stop)`;
    this.status.show();
  }
}

/** The active extension (set by `activate`, stopped by `deactivate`). */
let extension: PromptForge | undefined;

/** Starts the extension: the language, the commands and the server. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new PromptForge(context);
  await extension.activate(context);
}

/** Stops the server. */
export async function deactivate(): Promise<void> {
  await extension?.stopClient();
}

/** Gives a Markdown document that is a prompt the `promptforge` language. */
function classify(document: vscode.TextDocument): void {
  if (document.languageId !== 'markdown') return;
  if (isPromptFileName(document.fileName) || isPromptText(document.getText())) {
    void vscode.languages.setTextDocumentLanguage(document, 'promptforge');
  }
}

function stringSetting(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function targetUri(arg: unknown): string | undefined {
  return uriOfArgument(arg) ?? vscode.window.activeTextEditor?.document.uri.toString();
}
