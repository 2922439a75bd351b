// The PromptForge Runs view: the session's prompt runs, newest first, each
// expanding into its trace (sections, chains, model rounds, tool calls, log
// lines) once it ended. A node jumps to the prompt line that made it; a model
// round also opens its request and response as read-only documents
// (`promptforge-trace:`). The decisions are in logic/runs.mts and
// logic/trace.mts.

import * as vscode from 'vscode';
import type { Position, RunEvent } from './logic/events.mts';
import {
  type RunEntry,
  RunList,
  runDetails,
  runLabel,
  runLocation,
  spanLocation,
  type StartedRun,
  traceIdOf,
} from './logic/runs.mts';
import {
  eventText,
  failingNode,
  isTrace,
  parseRoundDocumentPath,
  type RoundPart,
  roundDocumentPath,
  roundDocumentText,
  type SpanNode,
  spanDetails,
  spanName,
  spanTooltip,
  TRACE_SCHEME,
} from './logic/trace.mts';

/** The view's id (package.json `views`). */
export const RUNS_VIEW = 'promptforge.runs';

/** The command each node runs when selected (not in the palette). */
const SHOW_NODE = 'promptforge.showRunNode';

/** A node of the view. */
type Node =
  | { type: 'run'; entry: RunEntry; id: string }
  | { type: 'span'; entry: RunEntry; node: SpanNode; parent: Node; id: string }
  | { type: 'event'; entry: RunEntry; span: SpanNode; text: string; parent: Node; id: string }
  | { type: 'note'; entry: RunEntry; text: string; parent: Node; id: string };

/** What the view needs of the language server. */
export interface RunsServer {
  /** `promptforge/trace {runId}`. */
  trace(runId: string): Promise<unknown>;
}

/** The Runs view, its documents and its commands. */
export class RunsView implements vscode.TreeDataProvider<Node>, vscode.TextDocumentContentProvider {
  readonly runs = new RunList();
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  /** The run node of each run, remade when the run's state changes (its id then changes too). */
  private readonly runNodes = new Map<number, Node & { type: 'run' }>();
  private readonly children = new WeakMap<Node, Node[]>();
  /** The runs to show expanded in the view once their trace came (Run offline). */
  private readonly revealWhenTraced = new Set<number>();

  private readonly server: RunsServer;

  constructor(context: vscode.ExtensionContext, server: RunsServer) {
    this.server = server;
    this.view = vscode.window.createTreeView(RUNS_VIEW, { treeDataProvider: this, showCollapseAll: true });
    context.subscriptions.push(
      this.view,
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(TRACE_SCHEME, this),
      vscode.commands.registerCommand(SHOW_NODE, (node: Node) => this.show(node)),
      vscode.commands.registerCommand('promptforge.clearRuns', () => this.clear()),
    );
  }

  /** A prompt run started; `reveal` shows it in the view (and expanded once traced). */
  started(run: StartedRun, reveal: boolean): void {
    const entry = this.runs.started(run);
    this.forgetDropped();
    this.changed.fire(undefined);
    if (reveal) {
      this.revealWhenTraced.add(entry.key);
      void this.view.reveal(this.runNode(entry), { select: true, focus: false });
    }
  }

  /** A run's last event: the run's new state, then its trace. */
  async ended(runId: string, event: RunEvent): Promise<void> {
    const entry = this.runs.ended(runId, event);
    if (!entry) return;
    this.changed.fire(undefined);
    const traceId = traceIdOf(event);
    if (traceId === undefined) {
      this.runs.untraced(entry, 'the server kept no trace of this run');
    } else {
      try {
        const trace = await this.server.trace(runId);
        if (!isTrace(trace)) throw new Error(`no trace of ${runId}: the server answered something that is not a trace`);
        if (trace.runId !== traceId) throw new Error(`no trace of ${runId}: the server no longer keeps it`);
        this.runs.traced(entry, trace);
      } catch (error) {
        // (The server's error says which run has no trace and why.)
        this.runs.untraced(entry, error instanceof Error ? error.message : String(error));
      }
    }
    this.changed.fire(undefined);
    if (this.revealWhenTraced.delete(entry.key) && this.runs.get(entry.key)) {
      await this.view.reveal(this.runNode(entry), { select: true, focus: false, expand: 3 });
    }
  }

  /**
   * Shows a trace the server kept for a failed test case (`caseFinished`'s
   * `traceRunId`), as a run of its prompt, expanded.
   */
  async showKept(run: StartedRun): Promise<void> {
    this.started(run, true);
    let event: RunEvent = { type: 'failed', kind: 'CaseFailed', message: 'the case failed' };
    try {
      const trace = await this.server.trace(run.runId);
      if (isTrace(trace)) event = { ...event, traceId: trace.runId };
    } catch {
      // `ended` asks again and shows why there is no trace.
    }
    await this.ended(run.runId, event);
  }

  /** The view's state, as plain data (the end-to-end test reads it). */
  state(): unknown {
    return {
      visible: this.view.visible,
      selection: this.view.selection.map((n) => n.id),
      runs: this.runs.list().map((entry) => ({
        runId: entry.runId,
        file: entry.file,
        offline: entry.offline,
        status: entry.status,
        label: runLabel(entry),
        details: runDetails(entry),
        noTrace: entry.noTrace,
        spans: entry.trace?.spans.length ?? 0,
      })),
    };
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const item = new vscode.TreeItem(this.label(node));
    item.id = node.id;
    item.command = { title: 'Show', command: SHOW_NODE, arguments: [node] };
    switch (node.type) {
      case 'run': {
        const entry = node.entry;
        item.description = runDetails(entry);
        item.collapsibleState =
          entry.status === 'running' ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed;
        item.iconPath = new vscode.ThemeIcon(
          { running: 'sync~spin', finished: 'pass', failed: 'error', cancelled: 'circle-slash' }[entry.status],
          entry.status === 'failed' ? new vscode.ThemeColor('errorForeground') : undefined,
        );
        const failure = entry.failure ? `\n${entry.failure.kind}: ${entry.failure.message}` : '';
        item.tooltip = `${vscode.Uri.parse(entry.uri).fsPath}\n${runDetails(entry)}${failure}`;
        item.contextValue = 'promptforge.run';
        break;
      }
      case 'span': {
        const span = node.node.span;
        item.description = spanDetails(node.node);
        item.tooltip = spanTooltip(node.node);
        item.collapsibleState =
          this.childrenOf(node).length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None;
        const icon = { run: 'play', section: 'symbol-namespace', chain: 'link', round: 'comment-discussion', toolCall: 'tools' }[span.kind.type];
        item.iconPath =
          span.error !== null
            ? new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground'))
            : new vscode.ThemeIcon(icon ?? 'circle-outline');
        item.contextValue = `promptforge.${span.kind.type}`;
        break;
      }
      case 'event':
        item.iconPath = new vscode.ThemeIcon('output');
        item.tooltip = node.text;
        break;
      case 'note':
        item.iconPath = new vscode.ThemeIcon('info');
        item.command = undefined;
        break;
    }
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) return this.runs.list().map((entry) => this.runNode(entry));
    return this.childrenOf(node);
  }

  getParent(node: Node): Node | undefined {
    return node.type === 'run' ? undefined : node.parent;
  }

  /** The text of a round's document. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const where = parseRoundDocumentPath(uri.path);
    const entry = where && this.runs.get(where.run);
    const span = entry?.trace?.spans.find((s) => s.id === where?.spanId);
    if (!where || !span || span.kind.type !== 'round') return 'The view no longer keeps the trace of this run.\n';
    return roundDocumentText(span, where.part);
  }

  private label(node: Node): string {
    switch (node.type) {
      case 'run':
        return runLabel(node.entry);
      case 'span':
        return spanName(node.node.span);
      default:
        return node.text;
    }
  }

  /** The node of a run, the same object until the run's state changes. */
  private runNode(entry: RunEntry): Node & { type: 'run' } {
    const id = `run/${entry.key}/${entry.status}${entry.trace ? '/traced' : entry.noTrace ? '/untraced' : ''}`;
    const known = this.runNodes.get(entry.key);
    if (known?.id === id) return known;
    const node = { type: 'run' as const, entry, id };
    this.runNodes.set(entry.key, node);
    return node;
  }

  private childrenOf(node: Node): Node[] {
    const known = this.children.get(node);
    if (known) return known;
    const made = this.makeChildren(node);
    this.children.set(node, made);
    return made;
  }

  private makeChildren(node: Node): Node[] {
    const entry = node.entry;
    if (node.type === 'run') {
      if (entry.status === 'running') return [];
      const notes: Node[] = [];
      if (entry.failure && entry.status === 'failed') {
        notes.push({ type: 'note', entry, text: `${entry.failure.kind}: ${entry.failure.message}`, parent: node, id: `${node.id}/failure` });
      }
      if (!entry.tree) {
        if (entry.noTrace) notes.push({ type: 'note', entry, text: entry.noTrace, parent: node, id: `${node.id}/note` });
        return notes;
      }
      if ((entry.trace?.droppedSpans ?? 0) > 0) {
        notes.push({ type: 'note', entry, text: `${entry.trace?.droppedSpans} spans left out (the trace reached its size limit)`, parent: node, id: `${node.id}/dropped` });
      }
      // The run span's children stand right under the run.
      return [...notes, ...this.spanChildren(entry, entry.tree, node)];
    }
    if (node.type === 'span') return this.spanChildren(entry, node.node, node);
    return [];
  }

  /** The nodes under a span: its events, then the spans opened inside it, by time. */
  private spanChildren(entry: RunEntry, span: SpanNode, parent: Node): Node[] {
    const timed: { at: number; node: Node }[] = [];
    (span.span.events ?? []).forEach((event, index) =>
      timed.push({ at: event.atNanos, node: { type: 'event', entry, span, text: eventText(event), parent, id: `${parent.id}/e${index}` } }),
    );
    for (const child of span.children) {
      timed.push({ at: child.span.startNanos, node: { type: 'span', entry, node: child, parent, id: `${parent.id}/s${child.span.id}` } });
    }
    // (A stable sort: events and spans of the same moment keep their order.)
    return timed.sort((a, b) => a.at - b.at).map((t) => t.node);
  }

  /**
   * Selecting a node: the prompt at its line (the focus stays in the view); a
   * model round opens its request and response too.
   */
  private async show(node: Node): Promise<void> {
    const entry = node.entry;
    switch (node.type) {
      case 'run':
        await openAt(entry.uri, runLocation(entry));
        if (entry.tree && (entry.status === 'failed' || entry.status === 'cancelled')) await this.revealFailure(node);
        return;
      case 'span': {
        const prompt = await openAt(entry.uri, spanLocation(entry, node.node));
        if (node.node.span.kind.type === 'round') await this.openRound(entry, node.node, (prompt.viewColumn ?? 1) + 1);
        return;
      }
      case 'event':
        await openAt(entry.uri, node.span.line === undefined ? undefined : { line: node.span.line - 1, character: 0 });
        return;
      case 'note':
        return;
    }
  }

  /** Shows the span that failed the run in the view. */
  private async revealFailure(runNode: Node): Promise<void> {
    const failing = runNode.entry.tree && failingNode(runNode.entry.tree);
    if (!failing) return;
    const find = (nodes: Node[]): Node | undefined => {
      for (const n of nodes) {
        if (n.type === 'span' && n.node === failing) return n;
        const below = n.type === 'span' ? find(this.childrenOf(n)) : undefined;
        if (below) return below;
      }
      return undefined;
    };
    const target = find(this.childrenOf(runNode));
    if (target) await this.view.reveal(target, { select: false, focus: false });
  }

  /** Opens a round's response, then its request (in front), in editor group `column`. */
  private async openRound(entry: RunEntry, round: SpanNode, column: vscode.ViewColumn): Promise<void> {
    for (const part of ['response', 'request'] as RoundPart[]) {
      const uri = vscode.Uri.from({ scheme: TRACE_SCHEME, path: roundDocumentPath(entry.key, round.span, part) });
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { viewColumn: column, preview: false, preserveFocus: true });
    }
  }

  /** Forgets the nodes of runs the list dropped. */
  private forgetDropped(): void {
    for (const key of [...this.runNodes.keys()]) {
      if (!this.runs.get(key)) {
        this.runNodes.delete(key);
        this.revealWhenTraced.delete(key);
      }
    }
  }

  private clear(): void {
    this.runs.clearEnded();
    this.forgetDropped();
    this.changed.fire(undefined);
  }
}

/**
 * Shows the prompt `uri` with the cursor at `position` (zero-based), in the
 * editor group that already shows it, else the first; the focus stays where it
 * is. Returns its editor.
 */
async function openAt(uri: string, position: Position | undefined): Promise<vscode.TextEditor> {
  const target = vscode.Uri.parse(uri);
  const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.toString());
  const document = await vscode.workspace.openTextDocument(target);
  const at = position ? new vscode.Position(position.line, position.character) : undefined;
  const editor = await vscode.window.showTextDocument(document, {
    viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One,
    preview: false,
    preserveFocus: true,
    selection: at ? new vscode.Range(at, at) : undefined,
  });
  if (at) editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return editor;
}
