// Finding the `promptforge` binary the server runs from.

import * as path from 'node:path';

/** Where to read how the server starts. */
export interface ResolveInput {
  /** The setting `promptforge.server.path` (empty: `promptforge`). */
  setting: string;
  /** The `PATH` of the extension host. */
  envPath: string;
  /** The workspace folder a relative path is taken from, if any. */
  workspaceFolder?: string;
  /** `process.platform`. */
  platform: string;
  /** True when the file exists and can be run. */
  isExecutable: (file: string) => boolean;
}

/** The binary found, or why none was. */
export type Resolved = { ok: true; path: string } | { ok: false; message: string };

/** The text of the error shown when the binary is not found. */
export function notFoundMessage(setting: string, searched: string): string {
  return (
    `PromptForge: the language server binary "${setting}" was not found (${searched}). ` +
    'Install promptforge, or set "promptforge.server.path" to its full path.'
  );
}

/**
 * The binary `promptforge.server.path` names: a path with a folder in it is
 * taken as it is (relative to the workspace folder), a bare name is looked up
 * on `PATH` (with `.exe` on Windows).
 */
export function resolveServer(input: ResolveInput): Resolved {
  const setting = input.setting.trim() || 'promptforge';
  const windows = input.platform === 'win32';
  const names = windows && !/\.exe$/i.test(setting) ? [setting + '.exe', setting] : [setting];
  if (setting.includes('/') || (windows && setting.includes('\\'))) {
    const base = input.workspaceFolder ?? process.cwd();
    for (const name of names) {
      const full = path.resolve(base, name);
      if (input.isExecutable(full)) return { ok: true, path: full };
    }
    return { ok: false, message: notFoundMessage(setting, 'no executable file there') };
  }
  const folders = input.envPath.split(windows ? ';' : ':').filter((f) => f !== '');
  for (const folder of folders) {
    for (const name of names) {
      const full = path.join(folder, name);
      if (input.isExecutable(full)) return { ok: true, path: full };
    }
  }
  return { ok: false, message: notFoundMessage(setting, 'not on PATH') };
}

/** The server's command-line arguments: `lsp`, then the extra ones. */
export function serverArgs(extraArgs: unknown): string[] {
  const extra = Array.isArray(extraArgs) ? extraArgs.filter((a) => typeof a === 'string') : [];
  return ['lsp', ...extra];
}
