// The text of a run in the output channel: one block per run, a header, the
// events of `promptforge/runEvent` as they arrive, the result or error last.

/** A zero-based LSP position. */
export interface Position {
  line: number;
  character: number;
}

/** An event of `promptforge/runEvent` (editor.md §2), by its `type`. */
export type RunEvent =
  | { type: 'log'; text: string }
  | { type: 'section'; heading: string }
  | { type: 'modelRound'; label: string; round: number }
  | { type: 'toolCall'; alias: string; path?: string; callId: string }
  | { type: 'toolResult'; alias: string; callId: string; ok: boolean; durationMs: number }
  | {
      type: 'caseFinished';
      name: string;
      ok: boolean;
      failures: string[];
      durationMs?: number;
      details?: import('./testing.mts').FailureDetail[];
      traceRunId?: string;
      promptUri?: string;
    }
  | { type: 'finished'; result: string | null; durationMs: number; traceId?: string }
  | { type: 'failed'; kind: string; message: string; range?: { start: Position; end: Position }; traceId?: string };

/** What the editor knows of a run when it starts it. */
export interface RunStart {
  kind: 'run' | 'test';
  /** The file's name. */
  file: string;
  args?: string;
  caseName?: string;
  /** Run offline: every model label answered by `echo`. */
  offline?: boolean;
}

/** True for the events that end a run. */
export function isLast(event: RunEvent): boolean {
  return event.type === 'finished' || event.type === 'failed';
}

/** The header line of a run's block. */
export function header(runId: string, start: RunStart): string {
  const what = start.kind === 'test' ? 'Test' : 'Run';
  let line = `▶ ${what} ${start.file}`;
  if (start.caseName !== undefined) line += ` (case "${start.caseName}")`;
  if (start.args !== undefined) line += ` with arguments ${JSON.stringify(start.args)}`;
  if (start.offline) line += ' offline';
  return `${line}  [${runId}]`;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

/** The lines an event adds to its run's block. */
export function formatEvent(event: RunEvent): string {
  switch (event.type) {
    case 'log':
      return indent(event.text, '  log: ');
    case 'section':
      return `  § ${event.heading === '' ? '(title)' : event.heading}`;
    case 'modelRound':
      return `  model ${event.label}, round ${event.round}`;
    case 'toolCall':
      return `  tool ${event.alias}${event.path ? ` (${event.path})` : ''} called`;
    case 'toolResult':
      return `  tool ${event.alias} ${event.ok ? 'returned' : 'failed'} in ${event.durationMs} ms`;
    case 'caseFinished': {
      const mark = event.ok ? '✓' : '✗';
      const failures = event.failures.map((f) => indent(f, '      ')).join('\n');
      return `  ${mark} ${event.name}` + (failures ? '\n' + failures : '');
    }
    case 'finished':
      return event.result === null
        ? `✔ Finished with no result (${event.durationMs} ms)`
        : `✔ Result (${event.durationMs} ms):\n${event.result}`;
    case 'failed': {
      const where = event.range ? ` (line ${event.range.start.line + 1})` : '';
      return `✘ Failed: ${event.kind}${where}: ${event.message}`;
    }
    default:
      return `  ${JSON.stringify(event)}`;
  }
}

/** The notification text of a run's last event. */
export function summary(start: RunStart | undefined, event: RunEvent): string {
  const file = start ? ` ${start.file}` : '';
  if (event.type === 'finished') {
    const what = start?.kind === 'test' ? 'Tests' : 'Run';
    return `PromptForge: ${what}${file}: ${event.result ?? 'finished with no result'}`;
  }
  if (event.type === 'failed') return `PromptForge:${file} failed: ${event.kind}: ${event.message}`;
  return formatEvent(event);
}

/** What a `RunLog` tells its owner. */
export interface RunLogSink {
  /** Adds lines to the output. */
  append(text: string): void;
  /** A run ended with `event`. */
  ended(runId: string, start: RunStart | undefined, event: RunEvent): void;
}

/**
 * The runs going on and their blocks. Events that arrive before the editor
 * learnt the run's id (the command's answer) wait until `started` is called.
 */
export class RunLog {
  private readonly runs = new Map<string, RunStart>();
  private readonly early = new Map<string, RunEvent[]>();

  private readonly sink: RunLogSink;

  constructor(sink: RunLogSink) {
    this.sink = sink;
  }

  /** The runs that have not ended. */
  active(): string[] {
    return [...this.runs.keys()];
  }

  /** A run started: writes its header and any event that came first. */
  started(runId: string, start: RunStart): void {
    this.sink.append(header(runId, start));
    const waiting = this.early.get(runId) ?? [];
    this.early.delete(runId);
    this.runs.set(runId, start);
    for (const event of waiting) this.event(runId, event);
  }

  /** Ends every run going on (the server stopped): each gets `reason`. */
  abandon(reason: string): void {
    for (const runId of [...this.runs.keys()]) {
      this.event(runId, { type: 'failed', kind: 'ServerStopped', message: reason });
    }
    this.early.clear();
  }

  /** An event of `promptforge/runEvent`. */
  event(runId: string, event: RunEvent): void {
    const start = this.runs.get(runId);
    if (start === undefined) {
      const waiting = this.early.get(runId) ?? [];
      waiting.push(event);
      this.early.set(runId, waiting);
      return;
    }
    this.sink.append(formatEvent(event));
    if (isLast(event)) {
      this.runs.delete(runId);
      this.sink.append('');
      this.sink.ended(runId, start, event);
    }
  }
}
