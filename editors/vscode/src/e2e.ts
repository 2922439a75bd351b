// The end-to-end test's window into the extension, only when the harness
// starts VS Code with `PROMPTFORGE_E2E_DIR` set: the extension then watches
// `$PROMPTFORGE_E2E_DIR/request.json`, answers each request the test writes
// there into `response.json`, and records what the `promptforge` debug
// adapters send. Without that variable none of it runs, and the extension
// registers no command of its own for it (the shipped package.json contributes
// none: test/manifest.test.mts and ci.sh check it).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** What the rest of the extension tells the test. */
export interface E2eHooks {
  /** The text of the `PromptForge` output channel. */
  outputText(): string;
  /** The PromptForge Runs view's runs and selection. */
  runsState(): unknown;
  /** The Testing view's files and their cases. */
  testingState(): unknown;
  /** The workspace's trust, and the running server's binary and trust. */
  serverState(): unknown;
}

/** How often the request file is looked for. */
const POLL_MS = 100;

/** Answers the test's requests in `dir` until disposed (e2e only). */
export function serveE2eRequests(dir: string, hooks: E2eHooks): vscode.Disposable {
  const request = path.join(dir, 'request.json');
  const taken = path.join(dir, 'request.taken.json');
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    try {
      // Taking the file (a rename) answers each request once.
      fs.renameSync(request, taken);
    } catch {
      return;
    }
    busy = true;
    void answerFile(dir, taken, hooks).finally(() => {
      busy = false;
    });
  }, POLL_MS);
  return new vscode.Disposable(() => clearInterval(timer));
}

/** Answers the request in `file` into `dir`/response.json. */
async function answerFile(dir: string, file: string, hooks: E2eHooks): Promise<void> {
  let response: unknown;
  let id: unknown = null;
  try {
    const request = JSON.parse(fs.readFileSync(file, 'utf8')) as Request;
    id = request.id;
    response = { id, result: (await answer(request, hooks)) ?? null };
  } catch (error) {
    response = { id, error: String(error) };
  }
  const temporary = path.join(dir, 'response.json.tmp');
  fs.writeFileSync(temporary, JSON.stringify(response));
  fs.renameSync(temporary, path.join(dir, 'response.json'));
}

interface Request {
  id: number;
  op:
    | 'open'
    | 'state'
    | 'diagnostics'
    | 'hover'
    | 'output'
    | 'command'
    | 'setting'
    | 'codeLenses'
    | 'breakpoint'
    | 'clearBreakpoints'
    | 'debugState'
    | 'startDebugging'
    | 'trust'
    | 'env'
    | 'runs'
    | 'testing'
    | 'documents'
    | 'selection';
  key?: string;
  value?: unknown;
  path?: string;
  line?: number;
  character?: number;
  command?: string;
  args?: unknown[];
}

async function answer(request: Request, hooks: E2eHooks): Promise<unknown> {
  const uri = request.path ? vscode.Uri.file(request.path).toString() : '';
  const position = new vscode.Position(request.line ?? 0, request.character ?? 0);
  switch (request.op) {
    case 'open': {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      const editor = await vscode.window.showTextDocument(document, { preview: false });
      editor.selection = new vscode.Selection(position, position);
      editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenter);
      return { uri };
    }
    case 'state': {
      const document = vscode.window.activeTextEditor?.document;
      return { uri: document?.uri.toString(), languageId: document?.languageId };
    }
    case 'diagnostics':
      return diagnosticsOf(uri);
    case 'hover':
      return hoverAt(uri, position);
    case 'output':
      return hooks.outputText();
    case 'setting':
      // (A null value removes the user setting.)
      return vscode.workspace.getConfiguration().update(request.key ?? '', request.value ?? undefined, vscode.ConfigurationTarget.Global);
    case 'command':
      return vscode.commands.executeCommand(request.command ?? '', ...(request.args ?? []));
    case 'codeLenses': {
      // The lenses of one line (all lines without `line`): titles, commands, arguments.
      const lenses =
        (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', vscode.Uri.parse(uri), 100)) ?? [];
      return lenses
        .filter((lens) => request.line === undefined || lens.range.start.line === request.line)
        .sort((a, b) => a.range.start.line - b.range.start.line)
        .map((lens) => ({ line: lens.range.start.line, title: lens.command?.title, command: lens.command?.command, arguments: lens.command?.arguments }));
    }
    case 'breakpoint':
      vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.parse(uri), position))]);
      return vscode.debug.breakpoints.map(describeBreakpoint);
    case 'clearBreakpoints':
      vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
      return [];
    case 'debugState':
      return debugState();
    case 'startDebugging':
      return vscode.debug.startDebugging(undefined, request.value as vscode.DebugConfiguration);
    case 'trust':
      // The workspace's trust, the running server's binary and what it was told.
      return hooks.serverState();
    case 'runs':
      return hooks.runsState();
    case 'testing':
      return hooks.testingState();
    case 'documents':
      // The open documents of a scheme (`promptforge-trace`): URI and text.
      return vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === request.key)
        .map((d) => ({ uri: d.uri.toString(), path: d.uri.path, languageId: d.languageId, text: d.getText() }));
    case 'selection': {
      // The cursor of the visible editor of a file, and whether it is the active one.
      const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri);
      const active = vscode.window.activeTextEditor?.document.uri.toString() === uri;
      return editor ? { line: editor.selection.active.line, character: editor.selection.active.character, active } : null;
    }
    case 'env':
      // The extension host's PATH (where the universal package looks).
      return { PATH: process.env.PATH ?? '' };
  }
}

/** The diagnostics of a document (a URI string), as plain data. */
function diagnosticsOf(uri: string): unknown[] {
  return vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map((d) => ({
    message: d.message,
    severity: vscode.DiagnosticSeverity[d.severity],
    code: typeof d.code === 'object' ? d.code.value : d.code,
    source: d.source,
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
  }));
}

/** The hover texts at a place of a document (a URI string), as plain strings. */
async function hoverAt(uri: string, position: vscode.Position): Promise<string[]> {
  const hovers =
    (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', vscode.Uri.parse(uri), position)) ?? [];
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : String(c))));
}

function describeBreakpoint(breakpoint: vscode.Breakpoint): unknown {
  if (breakpoint instanceof vscode.SourceBreakpoint) {
    return { path: breakpoint.location.uri.fsPath, line: breakpoint.location.range.start.line, enabled: breakpoint.enabled };
  }
  return { enabled: breakpoint.enabled };
}

/** What the adapter of one `promptforge` session said, as the tracker saw it. */
interface SessionRecord {
  id: string;
  name: string;
  configuration: vscode.DebugConfiguration;
  /** The `stopped` events' bodies, in order. */
  stopped: { reason?: string; threadId?: number }[];
  /** A thread is stopped: a `stopped` event came after the last resume. */
  paused: boolean;
  /** The `output` events' text. */
  output: string;
  exitCode?: number;
  /** The adapter sent `terminated`. */
  terminated: boolean;
  /** VS Code ended the session. */
  ended: boolean;
  /** The adapter's error responses (`command: message`). */
  errors: string[];
  /** The requests VS Code sent, in order (`command`). */
  requests: string[];
}

const sessions = new Map<string, SessionRecord>();

/** Records what the `promptforge` debug adapters send (e2e only). */
export function watchDebugSessions(): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.debug.registerDebugAdapterTrackerFactory('promptforge', {
      createDebugAdapterTracker(session) {
        const record: SessionRecord = {
          id: session.id,
          name: session.name,
          configuration: session.configuration,
          stopped: [],
          paused: false,
          output: '',
          terminated: false,
          ended: false,
          errors: [],
          requests: [],
        };
        sessions.set(session.id, record);
        return {
          onWillReceiveMessage(message: any) {
            if (message?.type === 'request') record.requests.push(String(message.command));
            if (message?.type === 'request' && ['continue', 'next', 'stepIn', 'stepOut'].includes(message.command)) {
              record.paused = false;
            }
          },
          onDidSendMessage(message: any) {
            if (message?.type === 'event') {
              const body = message.body ?? {};
              if (message.event === 'stopped') {
                record.stopped.push({ reason: body.reason, threadId: body.threadId });
                record.paused = true;
              }
              else if (message.event === 'output') record.output += String(body.output ?? '');
              else if (message.event === 'exited') record.exitCode = body.exitCode;
              else if (message.event === 'terminated') record.terminated = true;
            } else if (message?.type === 'response' && message.success === false) {
              record.errors.push(`${message.command}: ${message.message}`);
            }
          },
        };
      },
    }),
    vscode.debug.onDidTerminateDebugSession((session) => {
      const record = sessions.get(session.id);
      if (record) record.ended = true;
    }),
  );
}

/**
 * The debug sessions seen, and the active one's state: its focused thread's
 * top frames (from the adapter, as the Call Stack view shows them) when it is
 * stopped.
 */
async function debugState(): Promise<unknown> {
  const session = vscode.debug.activeDebugSession;
  let active: unknown = null;
  if (session) {
    const record = sessions.get(session.id);
    const item = vscode.debug.activeStackItem;
    const focusedThread = item && item.session.id === session.id ? item.threadId : undefined;
    const threadId = focusedThread ?? record?.stopped.at(-1)?.threadId;
    let frames: unknown[] = [];
    if (threadId !== undefined && record?.paused) {
      try {
        const trace = await session.customRequest('stackTrace', { threadId, startFrame: 0, levels: 20 });
        frames = (trace?.stackFrames ?? []).map((f: any) => ({ name: f.name, line: f.line, path: f.source?.path }));
      } catch (error) {
        frames = [{ error: String(error) }];
      }
    }
    active = {
      id: session.id,
      name: session.name,
      type: session.type,
      configuration: session.configuration,
      threadId,
      paused: record?.paused ?? false,
      focusedFrame: item instanceof vscode.DebugStackFrame ? item.frameId : undefined,
      frames,
    };
  }
  return { active, sessions: [...sessions.values()] };
}
