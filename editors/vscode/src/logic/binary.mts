// Finding the `promptforge` binary the server runs from.

import * as path from 'node:path';

/** Where to read how the server starts. */
export interface ResolveInput {
  /** The setting `promptforge.server.path` (empty: not set). */
  setting: string;
  /**
   * The binary a platform package carries (`server/promptforge` in the
   * extension's folder), if this package has one.
   */
  bundled?: string;
  /** The `PATH` of the extension host. */
  envPath: string;
  /** The workspace folder a relative path is taken from, if any. */
  workspaceFolder?: string;
  /** `process.platform`. */
  platform: string;
  /** True when the file exists and can be run. */
  isExecutable: (file: string) => boolean;
}

/** Where the binary was found: the setting, the extension's own copy, or `PATH`. */
export type Source = 'setting' | 'bundled' | 'path';

/** The binary found, or why none was. */
export type Resolved = { ok: true; path: string; source: Source } | { ok: false; message: string };

/** The name of the binary a platform package carries, under `server/`. */
export function bundledName(platform: string): string {
  return platform === 'win32' ? 'promptforge.exe' : 'promptforge';
}

/** The path of the binary a platform package carries, in the extension's folder. */
export function bundledPath(extensionPath: string, platform: string): string {
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  return join(extensionPath, 'server', bundledName(platform));
}

/** The text of the error shown when the binary is not found. */
export function notFoundMessage(name: string, searched: string): string {
  return (
    `PromptForge: the language server binary "${name}" was not found (${searched}). ` +
    'Install promptforge, or set "promptforge.server.path" to its full path.'
  );
}

/**
 * The binary to run, in this order:
 *
 * 1. `promptforge.server.path` when it is set: a path with a folder in it is
 *    taken as it is (relative to the workspace folder), a bare name is looked
 *    up on `PATH` (with `.exe` on Windows);
 * 2. the binary the extension carries (the platform packages), when it is
 *    there and can be run;
 * 3. `promptforge` on `PATH` (the universal package has no binary).
 */
export function resolveServer(input: ResolveInput): Resolved {
  const setting = input.setting.trim();
  if (setting !== '') return fromSetting(setting, input);
  if (input.bundled !== undefined && input.isExecutable(input.bundled)) {
    return { ok: true, path: input.bundled, source: 'bundled' };
  }
  const found = onPath('promptforge', input);
  if (found) return { ok: true, path: found, source: 'path' };
  const searched = input.bundled !== undefined ? 'not in the extension, not on PATH' : 'not on PATH';
  return { ok: false, message: notFoundMessage('promptforge', searched) };
}

function fromSetting(setting: string, input: ResolveInput): Resolved {
  const windows = input.platform === 'win32';
  if (setting.includes('/') || (windows && setting.includes('\\'))) {
    const base = input.workspaceFolder ?? process.cwd();
    for (const name of candidates(setting, windows)) {
      const full = path.resolve(base, name);
      if (input.isExecutable(full)) return { ok: true, path: full, source: 'setting' };
    }
    return { ok: false, message: notFoundMessage(setting, 'no executable file there') };
  }
  const found = onPath(setting, input);
  if (found) return { ok: true, path: found, source: 'setting' };
  return { ok: false, message: notFoundMessage(setting, 'not on PATH') };
}

/** The names tried for `name`: on Windows `NAME.exe` first. */
function candidates(name: string, windows: boolean): string[] {
  return windows && !/\.exe$/i.test(name) ? [name + '.exe', name] : [name];
}

/** The first executable `name` in the folders of `PATH`. */
function onPath(name: string, input: ResolveInput): string | undefined {
  const windows = input.platform === 'win32';
  const folders = input.envPath.split(windows ? ';' : ':').filter((f) => f !== '');
  for (const folder of folders) {
    for (const candidate of candidates(name, windows)) {
      const full = path.join(folder, candidate);
      if (input.isExecutable(full)) return full;
    }
  }
  return undefined;
}

/** The server's command-line arguments: `lsp`, then the extra ones. */
export function serverArgs(extraArgs: unknown): string[] {
  const extra = Array.isArray(extraArgs) ? extraArgs.filter((a) => typeof a === 'string') : [];
  return ['lsp', ...extra];
}
