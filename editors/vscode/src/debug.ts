// The `promptforge` debugger: VS Code's debugger on `promptforge dap` (the
// Debug Adapter Protocol on stdin/stdout), its launch configurations, and the
// `promptforge.debug` command of the `Debug` lens and the editor title.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { uriOfArgument } from './logic/args.mts';
import type { Resolved } from './logic/binary.mts';
import {
  type ActiveDocument,
  adapterArgs,
  DEBUG_TYPE,
  debugConfiguration,
  type LaunchConfiguration,
  NO_PROMPT,
  resolveConfiguration,
  resolveSubstituted,
} from './logic/debug.mts';
import { allowedInThisWorkspace } from './trust.ts';

/** What the debugger needs of the rest of the extension. */
export interface DebugHost {
  /** The `promptforge` binary (`promptforge.server.path`), or why it is missing. */
  findBinary(): Resolved;
  /** Shows the missing binary's error, with its buttons, as the server start does. */
  reportMissingBinary(message: string): void;
}

/** Registers the debugger, its configuration providers and `promptforge.debug`. */
export function registerDebugger(context: vscode.ExtensionContext, host: DebugHost): void {
  const provider = new ConfigurationProvider(host);
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new AdapterFactory(host)),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, provider),
    vscode.debug.registerDebugConfigurationProvider(
      DEBUG_TYPE,
      { provideDebugConfigurations: () => dynamicConfigurations() },
      vscode.DebugConfigurationProviderTriggerKind.Dynamic,
    ),
    vscode.commands.registerCommand('promptforge.debug', debugPrompt),
  );
}

/**
 * Starts `promptforge dap` with the binary the language server runs from,
 * with `--trust` in a trusted workspace.
 */
class AdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  private readonly host: DebugHost;

  constructor(host: DebugHost) {
    this.host = host;
  }

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const binary = this.host.findBinary();
    if (!binary.ok) {
      // resolveDebugConfigurationWithSubstitutedVariables already said so
      // (and stopped the start); this is for a binary gone since.
      throw new Error(binary.message);
    }
    const cwd = session.workspaceFolder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return new vscode.DebugAdapterExecutable(binary.path, adapterArgs(vscode.workspace.isTrusted), cwd ? { cwd } : undefined);
  }
}

/** The active editor's document, as the configuration logic reads it. */
function activeDocument(): ActiveDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  if (!document) return undefined;
  return {
    fsPath: document.uri.scheme === 'file' ? document.uri.fsPath : undefined,
    languageId: document.languageId,
    text: document.getText(),
  };
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Completes and checks a launch configuration (launch.json's, or none: F5).
 * (In Restricted Mode VS Code asks for trust before any debug start, and
 * calls this only once it is granted.)
 * A new launch.json gets package.json's `initialConfigurations` (a
 * `provideDebugConfigurations` here would add its entries to them).
 */
class ConfigurationProvider implements vscode.DebugConfigurationProvider {
  private readonly host: DebugHost;

  constructor(host: DebugHost) {
    this.host = host;
  }

  resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    const resolved = resolveConfiguration(config as Partial<LaunchConfiguration>, activeDocument());
    if (!resolved.ok) {
      void vscode.window.showErrorMessage(resolved.message);
      return undefined;
    }
    return resolved.config;
  }

  resolveDebugConfigurationWithSubstitutedVariables(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    const binary = this.host.findBinary();
    if (!binary.ok) {
      this.host.reportMissingBinary(binary.message);
      return undefined;
    }
    const base = folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const resolved = resolveSubstituted(config as LaunchConfiguration, { folder: base, readText });
    if (!resolved.ok) {
      void vscode.window.showErrorMessage(resolved.message);
      return undefined;
    }
    return resolved.config;
  }
}

/** The Run and Debug view's dynamic entries: the prompts open in editors. */
function dynamicConfigurations(): vscode.DebugConfiguration[] {
  const seen = new Set<string>();
  const configurations: vscode.DebugConfiguration[] = [];
  for (const editor of [vscode.window.activeTextEditor, ...vscode.window.visibleTextEditors]) {
    const document = editor?.document;
    if (!document || document.languageId !== 'promptforge' || document.uri.scheme !== 'file') continue;
    if (seen.has(document.uri.fsPath)) continue;
    seen.add(document.uri.fsPath);
    configurations.push(debugConfiguration(document.uri.fsPath));
  }
  return configurations;
}

/**
 * `promptforge.debug`: debugs a prompt, the one of the lens (`{uri}`), of a
 * menu (a `Uri`) or the active editor's. Resolves to true when the session
 * started; refused in Restricted Mode.
 */
async function debugPrompt(arg?: unknown): Promise<boolean> {
  if (!allowedInThisWorkspace('promptforge.debug')) return false;
  const given = uriOfArgument(arg);
  const uri = given ? vscode.Uri.parse(given) : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== 'file') {
    void vscode.window.showErrorMessage(uri ? 'PromptForge: only a prompt saved to a file can be debugged.' : NO_PROMPT);
    return false;
  }
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  return vscode.debug.startDebugging(folder, debugConfiguration(uri.fsPath));
}
