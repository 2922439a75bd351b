// The server's work-done progress (a run's `$/progress` begin, reports, end;
// its token is the run id) shown as a progress notification with a Cancel
// button that sends `window/workDoneProgress/cancel` for the token.

/** A progress token. */
export type Token = string | number;

/** The value of a `$/progress` work-done notification. */
export type WorkDoneValue =
  | { kind: 'begin'; title: string; cancellable?: boolean; message?: string; percentage?: number }
  | { kind: 'report'; cancellable?: boolean; message?: string; percentage?: number }
  | { kind: 'end'; message?: string };

/** One shown progress notification. */
export interface ProgressView {
  /** Shows `message` under the title. */
  report(message: string): void;
  /** Closes the notification. */
  done(): void;
}

/** What `ServerProgress` needs of the editor. */
export interface ProgressHost {
  /** Shows a notification titled `title` (`message` under it); its Cancel, if `cancellable`, calls `cancel`. */
  show(title: string, message: string | undefined, cancellable: boolean, cancel: () => void): ProgressView;
  /** Sends `window/workDoneProgress/cancel` `{token}` to the server. */
  cancel(token: Token): void;
}

/** The server's progress notifications, by token. */
export class ServerProgress {
  private readonly shown = new Map<Token, ProgressView>();
  private readonly host: ProgressHost;

  constructor(host: ProgressHost) {
    this.host = host;
  }

  /** The tokens whose notification shows. */
  active(): Token[] {
    return [...this.shown.keys()];
  }

  /** One `$/progress` value for `token`. */
  handle(token: Token, value: WorkDoneValue): void {
    switch (value.kind) {
      case 'begin': {
        if (this.shown.has(token)) return;
        let cancelled = false;
        const cancel = () => {
          if (cancelled || !this.shown.has(token)) return;
          cancelled = true;
          this.host.cancel(token);
        };
        this.shown.set(token, this.host.show(value.title, value.message, value.cancellable === true, cancel));
        return;
      }
      case 'report':
        if (value.message !== undefined) this.shown.get(token)?.report(value.message);
        return;
      case 'end':
        this.shown.get(token)?.done();
        this.shown.delete(token);
        return;
    }
  }

  /** Closes every notification (the server stopped: no end will come). */
  clear(): void {
    for (const view of this.shown.values()) view.done();
    this.shown.clear();
  }
}
