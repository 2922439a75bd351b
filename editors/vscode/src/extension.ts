// The PromptForge extension: starts `promptforge lsp`, gives prompt files the
// `promptforge` language, runs prompts and their tests (editor.md §2, §3), and
// debugs prompts on `promptforge dap` (debug.ts).

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
import { initializationOptions, type TrustedCommand } from './logic/trust.mts';
import { allowedInThisWorkspace } from './trust.ts';

let client: LanguageClient | undefined;
// The `initializationOptions.trusted` the running server was started with.
let serverTrusted: boolean | undefined;
// The binary the running server was started from, and where it was found.
let serverBinary: Resolved | undefined;
let output: Output;
let runLog: RunLog;
let status: vscode.StatusBarItem;
let serverChannel: vscode.OutputChannel;
let extensionUri: vscode.Uri;
// The extension's folder (a platform package carries the binary under server/).
let extensionPath: string;
// The server's progress notifications (their Cancel cancels the run).
const progress = new ServerProgress({
  show: showProgress,
  cancel: (token) => void client?.sendNotification(WorkDoneProgressCancelNotification.type, { token }),
});

/** The `PromptForge` output channel, keeping its text for the tests. */
class Output {
  readonly channel = vscode.window.createOutputChannel('PromptForge');
  text = '';
  append(line: string): void {
    this.text += line + '\n';
    this.channel.appendLine(line);
  }
}

/** Starts the extension: the language, the commands and the server. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionUri = context.extensionUri;
  extensionPath = context.extensionPath;
  output = new Output();
  serverChannel = vscode.window.createOutputChannel('PromptForge Language Server');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.command = 'promptforge.stop';
  status.tooltip = 'Stop the PromptForge runs';
  runLog = new RunLog({ append: (text) => output.append(text), ended });
  context.subscriptions.push(output.channel, serverChannel, status);

  const command = (name: string, handler: (...args: any[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(name, handler));
  // The run commands are refused in Restricted Mode (their menus are hidden there).
  const trustedCommand = (name: TrustedCommand, handler: (...args: any[]) => unknown) =>
    command(name, (...args: any[]) => (allowedInThisWorkspace(name) ? handler(...args) : undefined));
  trustedCommand('promptforge.runPrompt', (arg?: unknown) => startRun('run', arg));
  trustedCommand('promptforge.runWithArguments', runWithArguments);
  trustedCommand('promptforge.runTests', (arg?: unknown) => startRun('test', arg));
  command('promptforge.stop', stopRuns);
  command('promptforge.restartServer', restart);
  // The end-to-end test's requests, only when its harness set the variable.
  const e2eDir = process.env.PROMPTFORGE_E2E_DIR;
  if (e2eDir) {
    context.subscriptions.push(
      serveE2eRequests(e2eDir, {
        outputText: () => output.text,
        serverState: () => ({
          workspaceTrusted: vscode.workspace.isTrusted,
          serverRunning: client?.isRunning() ?? false,
          serverTrusted: client ? serverTrusted : undefined,
          serverBinary: client && serverBinary?.ok ? serverBinary.path : undefined,
          serverSource: client && serverBinary?.ok ? serverBinary.source : undefined,
        }),
      }),
      watchDebugSessions(),
    );
  }
  registerDebugger(context, { findBinary, reportMissingBinary });

  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(classify),
    vscode.workspace.onDidSaveTextDocument(classify),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('promptforge.server') || e.affectsConfiguration('promptforge.trace')) {
        void restart();
      }
    }),
    // The server was told the workspace is not trusted: start it again, trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
  );
  vscode.workspace.textDocuments.forEach(classify);
  await queued(startClient);
}

/** Stops the server. */
export async function deactivate(): Promise<void> {
  await stopClient();
}

/** Gives a Markdown document that is a prompt the `promptforge` language. */
function classify(document: vscode.TextDocument): void {
  if (document.languageId !== 'markdown') return;
  if (isPromptFileName(document.fileName) || isPromptText(document.getText())) {
    void vscode.languages.setTextDocumentLanguage(document, 'promptforge');
  }
}

/**
 * The `promptforge` binary: the one `promptforge.server.path` names when it is
 * set, else the extension's own (platform packages), else `promptforge` on
 * `PATH`; or why there is none.
 */
function findBinary(): Resolved {
  const config = vscode.workspace.getConfiguration('promptforge');
  return resolveServer({
    setting: stringSetting(config.get<unknown>('server.path')),
    bundled: bundledPath(extensionPath, process.platform),
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

function stringSetting(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Says the binary is missing, offering the install instructions and the setting. */
function reportMissingBinary(message: string): void {
  serverChannel.appendLine(message);
  void vscode.window
    .showErrorMessage(message, 'Install Instructions', 'Open Settings')
    .then((choice) => {
      if (choice === 'Install Instructions') {
        // A packaged extension has readme.md (vsce's name), a checkout README.md.
        const readme = ['readme.md', 'README.md']
          .map((name) => vscode.Uri.joinPath(extensionUri, name))
          .find((uri) => fs.existsSync(uri.fsPath));
        if (readme) void vscode.commands.executeCommand('markdown.showPreview', readme);
      } else if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'promptforge.server');
      }
    });
}

async function startClient(): Promise<void> {
  const config = vscode.workspace.getConfiguration('promptforge');
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const resolved = findBinary();
  if (!resolved.ok) {
    reportMissingBinary(resolved.message);
    return;
  }
  const from = { setting: 'promptforge.server.path', bundled: 'the extension', path: 'PATH' }[resolved.source];
  serverChannel.appendLine(`PromptForge: starting ${resolved.path} (from ${from})`);
  const serverOptions: ServerOptions = {
    command: resolved.path,
    args: serverArgs(config.get('server.extraArgs')),
    // The client adds `--stdio` after the arguments.
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder } : undefined,
  };
  const trusted = vscode.workspace.isTrusted;
  const clientOptions: LanguageClientOptions = {
    initializationOptions: initializationOptions(trusted),
    documentSelector: [
      { language: 'promptforge' },
      { language: 'yaml', pattern: '**/*.test.yaml' },
    ],
    outputChannel: serverChannel,
    middleware: {
      ...progressMiddleware(progress),
      // The lenses run `promptforge.run`/`promptforge.test` through here.
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        const kind = runKindOf(command);
        if (kind) ranWith(kind, args[0], result);
        return result;
      },
    },
  };
  const started = new LanguageClient('promptforge', 'PromptForge', serverOptions, clientOptions);
  started.onNotification('promptforge/runEvent', (p: { runId: string; event: RunEvent }) =>
    runLog.event(p.runId, p.event),
  );
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
      runLog.abandon('the language server stopped');
      progress.clear();
      updateStatus();
    }
  });
  client = started;
  serverTrusted = trusted;
  serverBinary = resolved;
  try {
    await started.start();
  } catch (error) {
    void vscode.window.showErrorMessage(`PromptForge: the language server did not start: ${error}`);
  }
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  runLog.abandon('the language server stopped');
  progress.clear();
  updateStatus();
  if (old) await old.stop().catch(() => undefined);
}

// Starts and restarts run one after the other: granting trust also changes
// the settings the workspace may set, and two restarts at once would leave a
// server behind.
let starts: Promise<void> = Promise.resolve();

function queued(work: () => Promise<void>): Promise<void> {
  // (One that failed does not stop the next.)
  starts = starts.catch(() => undefined).then(work);
  return starts;
}

function restart(): Promise<void> {
  return queued(async () => {
    await stopClient();
    await startClient();
  });
}

/** Records a run the server started (its answer `{runId}`). */
function ranWith(kind: 'run' | 'test', argument: any, result: unknown): void {
  const runId = (result as { runId?: unknown } | undefined)?.runId;
  if (typeof runId !== 'string') return;
  const start: RunStart = {
    kind,
    file: baseName(String(argument?.uri ?? '')),
    args: typeof argument?.args === 'string' ? argument.args : undefined,
    caseName: typeof argument?.case === 'string' ? argument.case : undefined,
  };
  output.channel.show(true);
  runLog.started(runId, start);
  updateStatus();
}

function targetUri(arg: unknown): string | undefined {
  return uriOfArgument(arg) ?? vscode.window.activeTextEditor?.document.uri.toString();
}

/** Runs a prompt (`run`) or its tests (`test`) through the server. */
async function startRun(kind: 'run' | 'test', arg?: unknown, args?: string): Promise<unknown> {
  const uri = targetUri(arg);
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
      ? runArgument(uri, args)
      : testArgument(uri, typeof caseName === 'string' ? caseName : undefined);
  const command = kind === 'run' ? 'promptforge.run' : 'promptforge.test';
  try {
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
    ranWith(kind, argument, result);
    return result;
  } catch (error) {
    void vscode.window.showErrorMessage(`PromptForge: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
}

/** Asks for the argument string, then runs the prompt with it. */
async function runWithArguments(arg?: unknown): Promise<unknown> {
  const uri = targetUri(arg);
  const args = await vscode.window.showInputBox({
    title: `Run ${uri ? baseName(uri) : 'the prompt'}`,
    prompt: 'The argument string of the run',
    ignoreFocusOut: true,
  });
  if (args === undefined) return undefined;
  return startRun('run', uri, args);
}

/** Cancels every run going on. */
async function stopRuns(): Promise<void> {
  const runs = runLog.active();
  if (runs.length === 0 || !client) {
    void vscode.window.showInformationMessage('PromptForge: no run is going on.');
    return;
  }
  await Promise.all(runs.map(cancelRun));
}

/** Asks the server to cancel one run. */
async function cancelRun(runId: string): Promise<void> {
  try {
    await client?.sendRequest(ExecuteCommandRequest.type, { command: 'promptforge.cancel', arguments: [{ runId }] });
  } catch (error) {
    void vscode.window.showErrorMessage(`PromptForge: the cancel failed: ${error}`);
  }
}

function ended(_runId: string, start: RunStart | undefined, event: RunEvent): void {
  updateStatus();
  const text = summary(start, event);
  if (event.type === 'finished') void vscode.window.showInformationMessage(text);
  else if (event.type === 'failed' && event.kind === 'Cancelled') void vscode.window.showWarningMessage(text);
  else void vscode.window.showErrorMessage(text);
}

function updateStatus(): void {
  const count = runLog.active().length;
  void vscode.commands.executeCommand('setContext', 'promptforge.running', count > 0);
  if (count === 0) {
    status.hide();
    return;
  }
  status.text = `$(sync~spin) PromptForge: ${count} run${count === 1 ? '' : 's'} (click to stop)`;
  status.show();
}
