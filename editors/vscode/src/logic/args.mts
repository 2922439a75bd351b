// The arguments of the server's commands (editor.md §2) and of the lenses.

/** The argument of `promptforge.run`. */
export interface RunArgument {
  uri: string;
  args?: string;
  seed?: number;
  /** Answer every model label with `echo` (Run offline). */
  offline?: boolean;
}

/** The argument of `promptforge.test`. */
export interface TestArgument {
  uri: string;
  case?: string;
}

/** The argument of `promptforge.run` for `uri`, with `args` and `seed` when given, `offline` when true. */
export function runArgument(uri: string, args?: string, seed?: number, offline = false): RunArgument {
  const argument: RunArgument = { uri };
  if (args !== undefined) argument.args = args;
  if (seed !== undefined) argument.seed = seed;
  if (offline) argument.offline = true;
  return argument;
}

/** The argument of `promptforge.test` for `uri`, one case when named. */
export function testArgument(uri: string, caseName?: string): TestArgument {
  return caseName === undefined ? { uri } : { uri, case: caseName };
}

/**
 * The document URI a command was given: a lens's `{uri}` object, a URI string,
 * or an object with a `toString()` that gives a URI (a `vscode.Uri` from a menu).
 * Undefined when the command was given nothing usable.
 */
export function uriOfArgument(argument: unknown): string | undefined {
  if (typeof argument === 'string') return argument || undefined;
  if (argument === null || typeof argument !== 'object') return undefined;
  const record = argument as Record<string, unknown>;
  if (typeof record.uri === 'string') return record.uri;
  if (typeof record.scheme === 'string' && typeof record.toString === 'function') {
    return String(record.toString());
  }
  return undefined;
}

/** What kind of run a server command starts, or undefined for other commands. */
export function runKindOf(command: string): 'run' | 'test' | undefined {
  if (command === 'promptforge.run') return 'run';
  if (command === 'promptforge.test') return 'test';
  return undefined;
}
