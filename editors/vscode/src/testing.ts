// The Testing view (editors.md, "The Testing view"): a TestController whose
// items are the test files and their cases as `promptforge/tests` lists them,
// kept current on saves and file changes; a Run profile and a continuous-run
// profile that run `promptforge.test` and map each `caseFinished` to the case's
// result (the decisions are in logic/testing.mts); a Debug profile that runs
// each chosen case under the debugger (`promptforge dap`, launch with `case`),
// one session after another, the session's exit code its result.

import * as vscode from 'vscode';
import type { RunEvent } from './logic/events.mts';
import {
  affectedFiles,
  type CaseFinished,
  caseOutcome,
  type ListedFile,
  listingNote,
  type LspRange,
  SHOW_TRACE_COMMAND,
  type Selected,
  type TestCommand,
  testCommands,
  type TestsAnswer,
  traceLink,
  TRUNCATED_LISTING,
} from './logic/testing.mts';
import { caseDebugConfiguration, DEBUG_TYPE } from './logic/debug.mts';
import { allowedInThisWorkspace } from './trust.ts';

/** What the Testing view needs of the server. */
export interface TestingServer {
  /** `promptforge/tests` (undefined while no server runs). */
  list(params: { uri?: string }): Promise<TestsAnswer | undefined>;
  /** Starts `promptforge.test` with `argument`; its run id. */
  run(argument: TestCommand): Promise<string | undefined>;
  /** Cancels a run. */
  cancel(runId: string): Promise<void>;
}

/** A test run going on: its TestRun and the file's items by case name. */
interface Pending {
  run: vscode.TestRun;
  file: vscode.TestItem;
  ended: () => void;
}

function range(r: LspRange): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

/** The Testing view's controller. */
export class TestingView {
  readonly controller = vscode.tests.createTestController('promptforge', 'PromptForge');
  /** The listed files by URI (for the prompts a save affects). */
  private readonly files = new Map<string, ListedFile>();
  private readonly pending = new Map<string, Pending>();
  /** The last outcome of each case item, by id (the end-to-end test reads it). */
  private readonly outcomes = new Map<string, unknown>();
  /** True once the listing's truncation was shown (it is shown once a session). */
  private warnedTruncated = false;
  /** The continuous runs going on: the items they watch (undefined: all). */
  private readonly continuous = new Set<{ include: readonly vscode.TestItem[] | undefined; token: vscode.CancellationToken }>();

  private readonly server: TestingServer;
  /** The cases being debugged, by session name: how their session ended. */
  private readonly debugged = new Map<string, { exitCode?: number; stderr: string }>();

  /** `showTrace` opens a failed case's kept trace (the link in its message). */
  constructor(
    context: vscode.ExtensionContext,
    server: TestingServer,
    showTrace: (argument: { runId: string; promptUri: string; caseName: string }) => unknown,
  ) {
    this.server = server;
    const run = (request: vscode.TestRunRequest, token: vscode.CancellationToken) => this.runRequest(request, token);
    this.controller.createRunProfile('Run', vscode.TestRunProfileKind.Run, run, true, undefined, true);
    const debug = (request: vscode.TestRunRequest, token: vscode.CancellationToken) => this.debugRequest(request, token);
    this.controller.createRunProfile('Debug', vscode.TestRunProfileKind.Debug, debug, true);
    this.controller.refreshHandler = () => this.refresh();
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.test.yaml');
    context.subscriptions.push(
      this.controller,
      watcher,
      watcher.onDidCreate((uri) => void this.refresh(uri.toString())),
      watcher.onDidChange((uri) => void this.refresh(uri.toString())),
      watcher.onDidDelete((uri) => this.forget(uri.toString())),
      vscode.workspace.onDidSaveTextDocument((document) => void this.saved(document.uri.toString())),
      vscode.commands.registerCommand(SHOW_TRACE_COMMAND, (argument) => showTrace(argument)),
      // What a case's debug session ends with: its exit code and its verdict text.
      vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (message: { type?: string; event?: string; body?: { exitCode?: number; category?: string; output?: string } }) => {
            if (message.type !== 'event' || !this.debugged.has(session.configuration.name)) return;
            const ending = this.debugged.get(session.configuration.name);
            if (!ending) return;
            if (message.event === 'exited') ending.exitCode = message.body?.exitCode;
            if (message.event === 'output' && message.body?.category === 'stderr') ending.stderr += message.body.output ?? '';
          },
        }),
      }),
    );
  }

  /** Lists every test file again, or (`uri`) the one. */
  async refresh(uri?: string): Promise<void> {
    const answer = await this.server.list(uri === undefined ? {} : { uri }).catch(() => undefined);
    if (!answer) return;
    if (answer.truncated && !this.warnedTruncated) {
      this.warnedTruncated = true;
      void vscode.window.showWarningMessage(TRUNCATED_LISTING);
    }
    // A listing cut at its bounds may leave out files that exist: they stay.
    if (uri === undefined && !answer.truncated) {
      for (const known of [...this.files.keys()]) if (!answer.files.some((f) => f.uri === known)) this.forget(known);
    } else if (uri !== undefined && answer.files.length === 0) {
      this.forget(uri);
    }
    for (const file of answer.files) this.update(file);
  }

  /** The state of the view, as plain data (the end-to-end test reads it). */
  state(): unknown {
    const items: unknown[] = [];
    this.controller.items.forEach((file) => {
      const cases: unknown[] = [];
      file.children.forEach((c) =>
        cases.push({ id: c.id, label: c.label, line: c.range?.start.line, outcome: this.outcomes.get(c.id) }),
      );
      items.push({ id: file.id, label: file.label, cases });
    });
    return items;
  }

  /** A run event of any run (only the runs started here are followed). */
  event(runId: string, event: RunEvent): void {
    const pending = this.pending.get(runId);
    if (!pending) return;
    if (event.type === 'caseFinished') {
      const item = pending.file.children.get(caseId(pending.file.id, event.name));
      if (item) this.report(pending.run, item, event as CaseFinished);
    } else if (event.type === 'failed') {
      const message = new vscode.TestMessage(`${event.kind}: ${event.message}`);
      if (event.range) message.location = new vscode.Location(pending.file.uri!, range(event.range));
      pending.run.errored(pending.file, message);
    }
    if (event.type === 'finished' || event.type === 'failed') {
      this.pending.delete(runId);
      pending.ended();
    }
  }

  /** The server stopped: the runs going on end. */
  abandon(): void {
    for (const [runId, pending] of this.pending) {
      pending.run.errored(pending.file, new vscode.TestMessage('the language server stopped'));
      this.pending.delete(runId);
      pending.ended();
    }
  }

  private update(file: ListedFile): void {
    this.files.set(file.uri, file);
    const uri = vscode.Uri.parse(file.uri);
    let item = this.controller.items.get(file.uri);
    if (!item) {
      item = this.controller.createTestItem(file.uri, vscode.workspace.asRelativePath(uri), uri);
      this.controller.items.add(item);
    }
    const fileItem = item;
    fileItem.description = listingNote(file);
    fileItem.children.replace(
      file.cases.map((c) => {
        const child = this.controller.createTestItem(caseId(file.uri, c.name), c.name, uri);
        child.range = range(c.range);
        if (c.live) child.description = 'live';
        return child;
      }),
    );
  }

  private forget(uri: string): void {
    this.files.delete(uri);
    this.controller.items.delete(uri);
  }

  private async saved(uri: string): Promise<void> {
    if (uri.endsWith('.test.yaml')) await this.refresh(uri);
    const affected = affectedFiles(uri, [...this.files.values()]);
    for (const watch of this.continuous) {
      if (watch.token.isCancellationRequested) continue;
      const include = affected
        .map((f) => this.controller.items.get(f.uri))
        .filter((item): item is vscode.TestItem => item !== undefined)
        .filter((item) => watch.include === undefined || watch.include.some((w) => w === item || w.parent === item));
      if (include.length > 0) void this.execute(new vscode.TestRunRequest(include), watch.token);
    }
  }

  private async runRequest(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    // Running tests is the trusted command `promptforge.runTests` (refused in Restricted Mode).
    if (!allowedInThisWorkspace('promptforge.runTests')) return;
    if (request.continuous) {
      const watch = { include: request.include, token };
      this.continuous.add(watch);
      token.onCancellationRequested(() => this.continuous.delete(watch));
      return;
    }
    await this.execute(request, token);
  }

  /**
   * The Debug profile: each chosen case (a file's: its scripted cases) in its own
   * debug session, one after another; exit code 0 passes it, another fails it
   * with the verdict the adapter printed.
   */
  private async debugRequest(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    if (!allowedInThisWorkspace('promptforge.debug')) return;
    const run = this.controller.createTestRun(request);
    const excluded = new Set(request.exclude ?? []);
    const cases: vscode.TestItem[] = [];
    const roots: vscode.TestItem[] = [];
    if (request.include) roots.push(...request.include);
    else this.controller.items.forEach((item) => roots.push(item));
    for (const item of roots) {
      if (excluded.has(item)) continue;
      if (item.parent) cases.push(item);
      else {
        const listed = this.files.get(item.id);
        item.children.forEach((c) => {
          if (!excluded.has(c) && !listed?.cases.find((l) => l.name === c.label)?.live) cases.push(c);
        });
      }
    }
    for (const item of cases) {
      if (token.isCancellationRequested) break;
      const file = item.parent;
      if (!file?.uri) continue;
      run.started(item);
      const config = caseDebugConfiguration(file.uri.fsPath, String(item.label));
      const ending = { exitCode: undefined as number | undefined, stderr: '' };
      this.debugged.set(config.name, ending);
      const ended = new Promise<void>((resolve) => {
        const done = vscode.debug.onDidTerminateDebugSession((session) => {
          if (session.configuration.name !== config.name) return;
          done.dispose();
          resolve();
        });
      });
      const folder = vscode.workspace.getWorkspaceFolder(file.uri);
      const started = await vscode.debug.startDebugging(folder, config, { testRun: run });
      if (started) await ended;
      this.debugged.delete(config.name);
      const passed = started && ending.exitCode === 0;
      const message = !started
        ? 'the debug session did not start'
        : ending.stderr.trim() || `the session ended with exit code ${ending.exitCode}`;
      if (!started) run.errored(item, new vscode.TestMessage(message));
      else if (passed) run.passed(item);
      else run.failed(item, new vscode.TestMessage(message));
      this.outcomes.set(item.id, { passed, profile: 'debug', messages: passed ? [] : [{ message }] });
    }
    run.end();
  }

  private async execute(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    if (!vscode.workspace.isTrusted) return;
    const run = this.controller.createTestRun(request);
    const roots: vscode.TestItem[] = [];
    if (request.include) roots.push(...request.include);
    else this.controller.items.forEach((item) => roots.push(item));
    const excluded = new Set(request.exclude ?? []);
    const selected: Selected[] = [];
    for (const item of roots) {
      if (excluded.has(item)) continue;
      const fileItem = item.parent ?? item;
      const listed = this.files.get(fileItem.id);
      if (item.parent) {
        selected.push({ fileUri: fileItem.id, caseName: String(item.label) });
        run.enqueued(item);
      } else {
        selected.push({ fileUri: item.id });
        item.children.forEach((c) => {
          if (!excluded.has(c) && !listed?.cases.find((l) => l.name === c.label)?.live) run.enqueued(c);
        });
      }
    }
    for (const command of testCommands(selected)) {
      if (token.isCancellationRequested) break;
      const file = this.controller.items.get(command.uri);
      if (!file) continue;
      const runId = await this.server.run(command);
      if (runId === undefined) {
        run.errored(file, new vscode.TestMessage('the run did not start'));
        continue;
      }
      await new Promise<void>((resolve) => {
        const cancelled = token.onCancellationRequested(() => void this.server.cancel(runId));
        const ended = () => {
          cancelled.dispose();
          resolve();
        };
        this.pending.set(runId, { run, file, ended });
      });
    }
    run.end();
  }

  private report(run: vscode.TestRun, item: vscode.TestItem, event: CaseFinished): void {
    const outcome = caseOutcome(event, item.range && toLsp(item.range));
    this.outcomes.set(item.id, { ...outcome, traceLink: traceLink(event) });
    if (outcome.passed) {
      run.passed(item, outcome.durationMs);
      return;
    }
    const link = traceLink(event);
    const messages = outcome.messages.map((m) => {
      const message =
        m.expected !== undefined && m.actual !== undefined
          ? vscode.TestMessage.diff(m.message, m.expected, m.actual)
          : new vscode.TestMessage(m.message);
      if (link && m.expected === undefined) {
        const markdown = new vscode.MarkdownString(`${escape(m.message)}\n\n${link}`);
        markdown.isTrusted = { enabledCommands: [SHOW_TRACE_COMMAND] };
        message.message = markdown;
      }
      if (m.range && item.uri) message.location = new vscode.Location(item.uri, range(m.range));
      return message;
    });
    if (link && messages.every((m) => m.expectedOutput !== undefined)) {
      // A diff shows its text as is: the link goes in a message of its own, at the case.
      const markdown = new vscode.MarkdownString(link);
      markdown.isTrusted = { enabledCommands: [SHOW_TRACE_COMMAND] };
      const message = new vscode.TestMessage(markdown);
      if (item.uri && item.range) message.location = new vscode.Location(item.uri, item.range);
      messages.push(message);
    }
    run.failed(item, messages, outcome.durationMs);
  }
}

/** The id of a case's item: the file's URI and the case's name. */
function caseId(fileUri: string, name: string): string {
  return `${fileUri}#${name}`;
}

function toLsp(r: vscode.Range): LspRange {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

/** Markdown with its special characters escaped. */
function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
