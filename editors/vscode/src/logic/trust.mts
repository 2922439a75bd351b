// Workspace Trust (host.md §1.1, editor.md): a repository's promptforge.toml
// is code, so in Restricted Mode the extension offers no run and no debugging,
// and tells the server the workspace is not trusted. The server has the last
// word (it refuses runs of an untrusted workspace itself); this module is what
// the extension decides on its side.

/**
 * The `initializationOptions` of the language server: `trusted` is VS Code's
 * Workspace Trust; `bookUrl` (the `promptforge.bookUrl` setting, left out when
 * empty) makes each diagnostic link to its entry in the book.
 */
export function initializationOptions(
  isTrusted: boolean,
  bookUrl = '',
): { trusted: boolean; bookUrl?: string } {
  const url = bookUrl.trim();
  return url === '' ? { trusted: isTrusted } : { trusted: isTrusted, bookUrl: url };
}

/**
 * The extension's commands that run or debug a prompt, with what each does:
 * hidden in Restricted Mode (package.json `when` clauses with
 * `isWorkspaceTrusted`) and refused if invoked there.
 */
export const TRUSTED_COMMANDS = {
  'promptforge.runPrompt': 'run a prompt',
  'promptforge.runWithArguments': 'run a prompt',
  'promptforge.runOffline': 'run a prompt',
  'promptforge.runTests': 'run prompt tests',
  'promptforge.debug': 'debug a prompt',
} as const;

export type TrustedCommand = keyof typeof TRUSTED_COMMANDS;

/**
 * The settings a workspace may not set in Restricted Mode: they name the
 * program that starts, or the address every diagnostic links to (a folder's
 * settings could send a reader of its problems anywhere).
 */
export const RESTRICTED_SETTINGS = ['promptforge.server.path', 'promptforge.server.extraArgs', 'promptforge.bookUrl'];

/** The button of the refusal that opens the workbench's Workspace Trust editor. */
export const MANAGE_TRUST = 'Manage Workspace Trust';

/** The workbench command behind `MANAGE_TRUST`. */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

/** Why `command` cannot go on in Restricted Mode. */
export function restrictedMessage(command: TrustedCommand): string {
  return (
    `PromptForge: cannot ${TRUSTED_COMMANDS[command]} in Restricted Mode: ` +
    "this workspace's promptforge.toml may start programs and hand them environment variables. " +
    'Trust the workspace to run and debug its prompts.'
  );
}

/** The refusal of `command`, or undefined when the workspace is trusted. */
export function refusal(isTrusted: boolean, command: TrustedCommand): string | undefined {
  return isTrusted ? undefined : restrictedMessage(command);
}
