// The end-to-end test's window into the extension: it writes a request into
// `$PROMPTFORGE_E2E_DIR/request.json`, runs the command `PromptForge (e2e):
// Answer End-to-End Request` from the command palette, and reads the answer
// from `response.json`. Only shown in the palette when that variable is set.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

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
    | 'trust';
  key?: string;
  value?: unknown;
  path?: string;
  line?: number;
  character?: number;
  command?: string;
  args?: unknown[];
}

/** Answers the request in `dir`/request.json into `dir`/response.json. */
export async function e2eRequest(dir: string): Promise<void> {
  const request = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8')) as Request;
  let response: unknown;
  try {
    response = { id: request.id, result: (await answer(request)) ?? null };
  } catch (error) {
    response = { id: request.id, error: String(error) };
  }
  const temporary = path.join(dir, 'response.json.tmp');
  fs.writeFileSync(temporary, JSON.stringify(response));
  fs.renameSync(temporary, path.join(dir, 'response.json'));
}

async function answer(request: Request): Promise<unknown> {
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
      return vscode.commands.executeCommand('promptforge.internal.diagnostics', uri);
    case 'hover':
      return vscode.commands.executeCommand('promptforge.internal.hover', uri, position.line, position.character);
    case 'output':
      return vscode.commands.executeCommand('promptforge.internal.outputText');
    case 'setting':
      return vscode.workspace.getConfiguration().update(request.key ?? '', request.value, vscode.ConfigurationTarget.Global);
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
      // The workspace's trust and what the running server was told.
      return vscode.commands.executeCommand('promptforge.internal.trust');
  }
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
