// The prompt runs of the session as the PromptForge Runs view lists them:
// newest first, each with its status, its trace once the run ended (the
// server's `promptforge/trace`), and where its failure is.

import type { Position, RunEvent } from './events.mts';
import { failingNode, formatDuration, formatTokens, nodeUsage, type SpanNode, spanTree, type Trace } from './trace.mts';

/** How many runs the view keeps (the server keeps the traces of as many). */
export const MAX_RUNS = 20;

/** A run's state. */
export type RunStatus = 'running' | 'finished' | 'failed' | 'cancelled';

/** One prompt run of the view. */
export interface RunEntry {
  /** The view's own number of the run (1, 2, ...: run ids start again with a new server). */
  readonly key: number;
  /** The id the `promptforge.run` command answered (`run-1`). */
  readonly runId: string;
  /** The prompt's document URI. */
  readonly uri: string;
  /** The prompt's file name. */
  readonly file: string;
  /** Run offline: every model label answered by `echo`. */
  readonly offline: boolean;
  status: RunStatus;
  durationMs?: number;
  /** The `failed` event: its kind, message and range (zero-based), when it failed. */
  failure?: { kind: string; message: string; range?: { start: Position; end: Position } };
  /** The trace, once fetched. */
  trace?: Trace;
  /** Its spans as a tree, once fetched. */
  tree?: SpanNode;
  /** Why the run has no trace, when it has none. */
  noTrace?: string;
}

/** A run just started. */
export interface StartedRun {
  runId: string;
  uri: string;
  file: string;
  offline: boolean;
}

/** The runs of the view, newest first, at most `MAX_RUNS`. */
export class RunList {
  private entries: RunEntry[] = [];
  private next = 1;

  /** The runs, newest first. */
  list(): readonly RunEntry[] {
    return this.entries;
  }

  /** The run the view numbered `key`. */
  get(key: number): RunEntry | undefined {
    return this.entries.find((e) => e.key === key);
  }

  /** A run started; the oldest runs past `MAX_RUNS` go. */
  started(run: StartedRun): RunEntry {
    const entry: RunEntry = { key: this.next++, ...run, status: 'running' };
    this.entries = [entry, ...this.entries].slice(0, MAX_RUNS);
    return entry;
  }

  /**
   * The last event of run `runId` (the newest running one of that id):
   * returns the entry, or undefined when the view does not list the run.
   */
  ended(runId: string, event: RunEvent): RunEntry | undefined {
    const entry = this.entries.find((e) => e.runId === runId && e.status === 'running');
    if (!entry) return undefined;
    if (event.type === 'finished') {
      entry.status = 'finished';
      entry.durationMs = event.durationMs;
    } else if (event.type === 'failed') {
      entry.status = event.kind === 'Cancelled' ? 'cancelled' : 'failed';
      entry.failure = { kind: event.kind, message: event.message, range: event.range };
    }
    return entry;
  }

  /** The run's trace came. */
  traced(entry: RunEntry, trace: Trace): void {
    entry.trace = trace;
    entry.tree = spanTree(trace);
    entry.noTrace = entry.tree ? undefined : 'the trace has no span';
  }

  /** The run has no trace, for `reason`. */
  untraced(entry: RunEntry, reason: string): void {
    entry.noTrace = reason;
  }

  /** Forgets every run that ended. */
  clearEnded(): void {
    this.entries = this.entries.filter((e) => e.status === 'running');
  }
}

/** The trace id a run's last event carries, when the server kept its trace. */
export function traceIdOf(event: RunEvent): string | undefined {
  const id = (event as { traceId?: unknown }).traceId;
  return typeof id === 'string' ? id : undefined;
}

/** The run's line in the view: its file name. */
export function runLabel(entry: RunEntry): string {
  return entry.file;
}

/** What the view says after a run's name: offline, its status, duration, tokens, its id. */
export function runDetails(entry: RunEntry): string {
  const parts: string[] = [];
  if (entry.offline) parts.push('offline');
  switch (entry.status) {
    case 'running':
      parts.push('running…');
      break;
    case 'finished':
      parts.push(`✔ ${entry.tree?.span.endNanos != null ? formatDuration(entry.tree.span.endNanos - entry.tree.span.startNanos) : `${entry.durationMs ?? 0} ms`}`);
      break;
    case 'cancelled':
      parts.push('cancelled');
      break;
    case 'failed':
      parts.push(`✘ ${entry.failure?.kind ?? 'failed'}`);
      break;
  }
  const usage = entry.tree && nodeUsage(entry.tree);
  if (usage) parts.push(formatTokens(usage));
  parts.push(entry.runId);
  return parts.join(' · ');
}

/**
 * Where a run opens in its prompt (zero-based): a failed run at its failure
 * (the `failed` event's range, else the line of the span that failed), any
 * other at its run span's line; undefined when neither is known.
 */
export function runLocation(entry: RunEntry): Position | undefined {
  if (entry.status === 'failed' || entry.status === 'cancelled') {
    const range = entry.failure?.range;
    if (range) return range.start;
    const failing = entry.tree && failingNode(entry.tree);
    if (failing?.line !== undefined) return { line: failing.line - 1, character: 0 };
  }
  return lineStart(entry.tree?.line);
}

/**
 * Where a span opens in its prompt (zero-based): the run's failure range for
 * the span that failed the run when the event gave one, else the start of the
 * span's line (or the enclosing span's).
 */
export function spanLocation(entry: RunEntry, node: SpanNode): Position | undefined {
  const range = entry.failure?.range;
  if (range && entry.tree && failingNode(entry.tree) === node) return range.start;
  return lineStart(node.line);
}

function lineStart(line: number | undefined): Position | undefined {
  return line === undefined ? undefined : { line: Math.max(0, line - 1), character: 0 };
}
