// The Testing view's decisions (editors.md, "The Testing view"): what a test
// run sends (`promptforge.test` per file or case), what a `caseFinished` event
// makes of a case (passed, or failed with one message per failed expectation,
// placed at its line, with a diff when both texts are there), which test files
// a saved file affects, what a file listed without all its cases says, and the
// link to a failed case's trace.

import type { Position } from './events.mts';

/** An LSP range. */
export interface LspRange {
  start: Position;
  end: Position;
}

/** A case as `promptforge/tests` lists it. */
export interface ListedCase {
  name: string;
  range: LspRange;
  live: boolean;
}

/** A test file as `promptforge/tests` lists it. */
export interface ListedFile {
  uri: string;
  promptUri: string | null;
  cases: ListedCase[];
  /** Its cases are not all listed: the file is larger than a listing reads (none is), or the answer's cases ran out (the first ones are). */
  truncated?: boolean;
}

/** The answer of `promptforge/tests`. */
export interface TestsAnswer {
  files: ListedFile[];
  /** A bound of the listing was reached: files or cases are left out. */
  truncated?: boolean;
}

/** What a listed file's item says beside its name: why its cases are not all there, if they are not. */
export function listingNote(file: ListedFile): string | undefined {
  if (!file.truncated) return undefined;
  return file.cases.length === 0 ? 'cases not listed: past what the listing reads' : 'not all cases listed';
}

/** The warning shown (once a session) when the server's listing reached its bounds. */
export const TRUNCATED_LISTING =
  'PromptForge lists only part of the workspace\'s tests: a test file over 1 MiB, or past 16 MiB read or 10,000 cases in all, is listed without its cases (run it with `promptforge test`).';

/** One failed expectation of `caseFinished.details`. */
export interface FailureDetail {
  what: string;
  message: string;
  range?: LspRange;
  expected?: string;
  actual?: string;
  exact: boolean;
}

/** The `caseFinished` event of `promptforge/runEvent`. */
export interface CaseFinished {
  type: 'caseFinished';
  name: string;
  ok: boolean;
  failures: string[];
  durationMs?: number;
  details?: FailureDetail[];
  traceRunId?: string;
  promptUri?: string;
}

/** What the Testing view selected: a whole file, or one case of it. */
export interface Selected {
  fileUri: string;
  caseName?: string;
}

/** The argument of one `promptforge.test` command. */
export interface TestCommand {
  uri: string;
  case?: string;
}

/**
 * The commands that run `selected`: a whole file in one command (its cases
 * selected too are left out), each other case in its own; in selection order.
 */
export function testCommands(selected: Selected[]): TestCommand[] {
  const wholeFiles = new Set(selected.filter((s) => s.caseName === undefined).map((s) => s.fileUri));
  const seen = new Set<string>();
  const commands: TestCommand[] = [];
  for (const item of selected) {
    if (item.caseName !== undefined && wholeFiles.has(item.fileUri)) continue;
    const key = JSON.stringify([item.fileUri, item.caseName ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    commands.push(item.caseName === undefined ? { uri: item.fileUri } : { uri: item.fileUri, case: item.caseName });
  }
  return commands;
}

/** One message of a failed case: its text, where it goes, and the texts to diff. */
export interface CaseMessage {
  message: string;
  /** The line range in the test file (the expectation's, else the case's). */
  range?: LspRange;
  /** Both present: the message is shown as a diff. */
  expected?: string;
  actual?: string;
}

/** What a `caseFinished` makes of its case. */
export interface CaseOutcome {
  passed: boolean;
  durationMs?: number;
  messages: CaseMessage[];
}

/**
 * The outcome of `event` for the case at `caseRange`: each failure with its
 * parts when the server sent them (`what: message`, at the expectation), else
 * its rendered text at the case.
 */
export function caseOutcome(event: CaseFinished, caseRange?: LspRange): CaseOutcome {
  if (event.ok) return { passed: true, durationMs: event.durationMs, messages: [] };
  const details = event.details ?? [];
  const messages: CaseMessage[] =
    details.length > 0
      ? details.map((d) => {
          const message: CaseMessage = { message: `${d.what}: ${d.message}`, range: d.range ?? caseRange };
          if (d.expected !== undefined && d.actual !== undefined) {
            message.expected = d.expected;
            message.actual = d.actual;
          }
          return message;
        })
      : event.failures.map((text) => ({ message: text, range: caseRange }));
  return { passed: false, durationMs: event.durationMs, messages };
}

/** The test files a save of `savedUri` affects: itself, or the files testing it. */
export function affectedFiles(savedUri: string, files: ListedFile[]): ListedFile[] {
  return files.filter((f) => f.uri === savedUri || f.promptUri === savedUri);
}

/** The command a failed case's trace link runs (its only trusted command). */
export const SHOW_TRACE_COMMAND = 'promptforge.showTrace';

/** The argument of [SHOW_TRACE_COMMAND]: the kept trace and its prompt. */
export interface ShowTrace {
  runId: string;
  promptUri: string;
  caseName: string;
}

/** The Markdown link to a failed case's trace (`[Open trace](command:...)`). */
export function traceLink(event: CaseFinished): string | undefined {
  if (event.traceRunId === undefined || event.promptUri === undefined) return undefined;
  const argument: ShowTrace = { runId: event.traceRunId, promptUri: event.promptUri, caseName: event.name };
  return `[Open trace](command:${SHOW_TRACE_COMMAND}?${encodeURIComponent(JSON.stringify([argument]))})`;
}
