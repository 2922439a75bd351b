// The debug configurations of `promptforge dap` (the `promptforge` debugger):
// the one the `Debug` lens and command start, and how a launch.json entry, or
// none at all (F5 on a prompt), is completed and checked before it starts.

import * as path from 'node:path';
import { baseName, isPromptFileName, isPromptText } from './detect.mts';

/** The debugger's type (package.json `contributes.debuggers`). */
export const DEBUG_TYPE = 'promptforge';

/** A launch configuration of the `promptforge` debugger. */
export interface LaunchConfiguration {
  type: string;
  request: string;
  name: string;
  /** The prompt file. */
  program?: string;
  /** The argument string, or words joined by spaces. */
  args?: string | string[];
  seed?: number;
  /** A promptforge.toml used instead of the one found beside the prompt. */
  config?: string;
  stopOnEntry?: boolean;
  noDebug?: boolean;
  /** With `program` a prompt test file: the case of this name runs. */
  case?: string;
  [key: string]: unknown;
}

/** The editor the configuration may be completed from. */
export interface ActiveDocument {
  /** Its file path (undefined for an untitled or non-file document). */
  fsPath?: string;
  languageId: string;
  /** Its text (to recognise a Markdown prompt the extension has not marked yet). */
  text?: string;
}

/** A configuration ready to start, or why it cannot start. */
export type Resolution = { ok: true; config: LaunchConfiguration } | { ok: false; message: string };

/** The name of the session that debugs `program`. */
export function sessionName(program: string): string {
  return `Debug ${baseName(program)}`;
}

/** The configuration the `Debug` lens and command start for the prompt at `fsPath`. */
export function debugConfiguration(fsPath: string): LaunchConfiguration {
  return { type: DEBUG_TYPE, request: 'launch', name: sessionName(fsPath), program: fsPath };
}

/** The launch configuration that debugs the case `caseName` of the test file at `fsPath`. */
export function caseDebugConfiguration(fsPath: string, caseName: string): LaunchConfiguration {
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: `Debug ${baseName(fsPath)}: ${caseName}`,
    program: fsPath,
    case: caseName,
  };
}

/** The message for `case` with a `program` that is not a prompt test file. */
export const CASE_NEEDS_TEST_FILE = 'PromptForge: with "case", "program" must be a prompt test file (a .test.yaml file).';

/** The message when there is no prompt to debug. */
export const NO_PROMPT =
  'PromptForge: open a prompt to debug it (a Markdown file whose frontmatter has a promptforge: key), ' +
  'or set "program" in the launch configuration.';

/** True when the active document is a prompt saved to a file. */
export function isPromptDocument(document: ActiveDocument | undefined): boolean {
  if (!document?.fsPath) return false;
  if (document.languageId === 'promptforge') return true;
  if (document.languageId !== 'markdown') return false;
  return isPromptFileName(document.fsPath) || mayBePrompt(document.text ?? '');
}

/** Why a launch attribute is not of the type `promptforge dap` takes, if it is not. */
function attributeProblem(config: LaunchConfiguration): string | undefined {
  const { args, seed, config: file, stopOnEntry, program } = config;
  if (program !== undefined && typeof program !== 'string') return '"program" must be a string (the prompt file)';
  if (args !== undefined && typeof args !== 'string' && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) {
    return '"args" must be a string or a list of strings';
  }
  if (seed !== undefined && !(typeof seed === 'number' && Number.isInteger(seed) && seed >= 0)) {
    return '"seed" must be a non-negative integer';
  }
  if (file !== undefined && typeof file !== 'string') return '"config" must be a string (a promptforge.toml)';
  if (stopOnEntry !== undefined && typeof stopOnEntry !== 'boolean') return '"stopOnEntry" must be true or false';
  if (config.case !== undefined && typeof config.case !== 'string') return '"case" must be a string (a case\'s name)';
  return undefined;
}

/**
 * Completes a configuration before its variables are substituted
 * (`resolveDebugConfiguration`): an empty one (F5 with no launch.json) becomes
 * the active prompt's, a `promptforge` one without `program` debugs the active
 * prompt; `type`, `request` and `name` are filled when missing. Fails when a
 * prompt is needed and the active editor holds none, for `attach`, and for an
 * attribute of the wrong type.
 */
export function resolveConfiguration(given: Partial<LaunchConfiguration>, active: ActiveDocument | undefined): Resolution {
  const empty = !given.type && !given.request && !given.name;
  if (empty || !given.program) {
    if (!isPromptDocument(active)) return { ok: false, message: NO_PROMPT };
  }
  const program = (given.program as string | undefined) || active?.fsPath;
  const config: LaunchConfiguration = {
    ...given,
    type: given.type || DEBUG_TYPE,
    request: given.request || 'launch',
    name: given.name || sessionName(program ?? ''),
    program,
  };
  if (config.request !== 'launch') {
    return { ok: false, message: `PromptForge: the debugger only launches prompts ("request": "launch"), not "${config.request}".` };
  }
  const problem = attributeProblem(config);
  if (problem) return { ok: false, message: `PromptForge: the launch configuration "${config.name}": ${problem}.` };
  return { ok: true, config };
}

/** What `resolveSubstituted` reads of the machine. */
export interface FileAccess {
  /** The workspace folder relative paths are taken from, if any. */
  folder?: string;
  /** The text of a file, or undefined when it cannot be read. */
  readText: (file: string) => string | undefined;
}

/**
 * Checks a configuration once its variables (`${file}`, ...) are substituted
 * (`resolveDebugConfigurationWithSubstitutedVariables`): `program` and
 * `config` become absolute (relative to the workspace folder), and `program`
 * must be a prompt that can be read.
 */
export function resolveSubstituted(given: LaunchConfiguration, files: FileAccess): Resolution {
  const absolute = (file: string) => (files.folder ? path.resolve(files.folder, file) : path.resolve(file));
  if (typeof given.program !== 'string' || given.program.trim() === '') {
    return { ok: false, message: NO_PROMPT };
  }
  const config: LaunchConfiguration = { ...given, program: absolute(given.program) };
  if (typeof given.config === 'string' && given.config !== '') config.config = absolute(given.config);
  const program = config.program as string;
  if (typeof config.case === 'string') {
    // A case's test file: the adapter reads it and the prompt it names.
    return program.endsWith('.test.yaml') ? { ok: true, config } : { ok: false, message: CASE_NEEDS_TEST_FILE };
  }
  const text = files.readText(program);
  if (text === undefined) {
    return { ok: false, message: `PromptForge: cannot debug ${program}: the file cannot be read.` };
  }
  if (!mayBePrompt(text)) {
    return {
      ok: false,
      message: `PromptForge: cannot debug ${baseName(program)}: it is not a prompt (its frontmatter has no promptforge: key).`,
    };
  }
  return { ok: true, config };
}

/**
 * False only for a text `promptforge dap` surely refuses as not a prompt: no
 * `---` line first (after blank lines), or no `promptforge` in the frontmatter.
 * (The adapter reads the YAML itself; this check never refuses what it takes.)
 */
export function mayBePrompt(text: string): boolean {
  if (isPromptText(text)) return true;
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  let index = lines.findIndex((line) => line.replace(/[ \t]/g, '') !== '');
  if (index < 0 || lines[index] !== '---') return false;
  for (index++; index < lines.length && lines[index] !== '---'; index++) {
    if (lines[index].includes('promptforge')) return true;
  }
  return false;
}

/**
 * The adapter's command-line arguments: `--trust` when the workspace is
 * trusted (the prompt's promptforge.toml may then start its Plugins' programs).
 */
export function adapterArgs(trusted: boolean): string[] {
  return trusted ? ['dap', '--trust'] : ['dap'];
}
