// The server's work-done progress as a VS Code progress notification with a
// Cancel button (vscode-languageclient alone would show it in the status bar,
// without Cancel): `progressMiddleware` takes the `$/progress` work-done values
// over from the client's own progress parts.

import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { type ProgressView, type ServerProgress, type WorkDoneValue } from './logic/progress.mts';

/** Shows a notification titled `title`; its Cancel calls `cancel`. */
export function showProgress(
  title: string,
  message: string | undefined,
  cancellable: boolean,
  cancel: () => void,
): ProgressView {
  let progress: vscode.Progress<{ message?: string }> | undefined;
  let finish: (() => void) | undefined;
  let finished = false;
  let last = message;
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable },
    (shown, token) => {
      if (finished) return Promise.resolve();
      progress = shown;
      token.onCancellationRequested(cancel);
      if (last !== undefined) shown.report({ message: last });
      return new Promise<void>((resolve) => (finish = resolve));
    },
  );
  return {
    report(text) {
      last = text;
      progress?.report({ message: text });
    },
    done() {
      finished = true;
      finish?.();
    },
  };
}

/**
 * The client middleware that hands the server's work-done progress to
 * `progress` instead of the client's status-bar item: begin and reports never
 * reach the client's handler (so it shows nothing); the end does too, so the
 * client's part for the token is disposed.
 */
export function progressMiddleware(progress: ServerProgress): Pick<Middleware, 'handleWorkDoneProgress'> {
  return {
    handleWorkDoneProgress(token, params, next) {
      progress.handle(token, params as WorkDoneValue);
      if (params.kind === 'end') next(token, params);
    },
  };
}
