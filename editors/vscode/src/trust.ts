// Restricted Mode in the workbench: the refusal of a run or debug command
// while the workspace is not trusted (the decisions are in logic/trust.mts).

import * as vscode from 'vscode';
import { MANAGE_TRUST, MANAGE_TRUST_COMMAND, refusal, type TrustedCommand } from './logic/trust.mts';

/**
 * True when `command` may go on. Else shows why not, with a button that opens
 * the Workspace Trust editor, and returns false.
 */
export function allowedInThisWorkspace(command: TrustedCommand): boolean {
  const message = refusal(vscode.workspace.isTrusted, command);
  if (message === undefined) return true;
  void vscode.window.showErrorMessage(message, MANAGE_TRUST).then((choice) => {
    if (choice === MANAGE_TRUST) void vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
  });
  return false;
}
