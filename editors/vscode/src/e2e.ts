// The end-to-end test's window into the extension: it writes a request into
// `$PROMPTFORGE_E2E_DIR/request.json`, runs the command `PromptForge (e2e):
// Answer End-to-End Request` from the command palette, and reads the answer
// from `response.json`. Only shown in the palette when that variable is set.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

interface Request {
  id: number;
  op: 'open' | 'state' | 'diagnostics' | 'hover' | 'output' | 'command' | 'setting';
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
  }
}
