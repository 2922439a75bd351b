// The trace of a run as `promptforge/trace` gives it (the engine's
// `trace::Trace` as JSON, camelCase): its spans as a tree, what each node of
// the PromptForge Runs view says (name, duration, tokens), the prompt line each
// span jumps to, and the text of a model round's request and response
// documents.

/** Token counts of a round: the provider's report, or an estimate. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Counted here with a tokenizer, not reported by the provider. */
  estimated: boolean;
}

/** A model round's reply. */
export interface Reply {
  content: string;
  toolCalls: unknown[];
  finishReason: string | null;
}

/** What a span is (`kind`, tagged by `type`). */
export type SpanKind =
  | { type: 'run'; title: string; result: string | null }
  | { type: 'section'; heading: string; outcome: string | null }
  | { type: 'chain'; kind: string }
  | {
      type: 'round';
      label: string;
      hostModel: string;
      provider: string;
      model: string;
      index: number;
      /** The request in the engine's terms. */
      request: unknown;
      /** The exact HTTP request of an HTTP provider (null for echo and script). */
      wire: { url: string; body: unknown } | null;
      reply: Reply | null;
      usage: Usage | null;
    }
  | {
      type: 'toolCall';
      alias: string;
      tool: string | null;
      callId: string;
      caller: string;
      arguments: string;
      output: string | null;
      trust: string | null;
    };

/** Something that happened inside a span (a log line, a notice, a jump, an answer). */
export type SpanEvent = {
  atNanos: number;
  kind:
    | { type: 'log'; line: string }
    | { type: 'notice'; text: string }
    | { type: 'jump'; target: string }
    | { type: 'ask'; question: string; answer: string | null };
};

/** One span of a trace. */
export interface Span {
  id: number;
  parent: number | null;
  startNanos: number;
  endNanos: number | null;
  /** The 1-based prompt line that made it, when known. */
  line: number | null;
  error: string | null;
  kind: SpanKind;
  events?: SpanEvent[];
}

/** A run's trace. */
export interface Trace {
  runId: string;
  startUnixNanos: number;
  spans: Span[];
  droppedSpans: number;
}

/** A round span's kind. */
export type RoundKind = Extract<SpanKind, { type: 'round' }>;

/** A span in the tree: its resolved line and the spans opened inside it. */
export interface SpanNode {
  span: Span;
  /** Its 1-based line, or the nearest enclosing span's when it has none. */
  line: number | undefined;
  children: SpanNode[];
}

/** True when `value` has the shape of a trace (the parts this module reads). */
export function isTrace(value: unknown): value is Trace {
  const trace = value as Trace | null;
  return (
    typeof trace === 'object' &&
    trace !== null &&
    typeof trace.runId === 'string' &&
    Array.isArray(trace.spans) &&
    trace.spans.every((s) => typeof s?.id === 'number' && typeof s.kind?.type === 'string')
  );
}

/**
 * The trace's spans as a tree under its run span (the first span with no
 * parent), in the order they opened. A span whose parent is not in the trace
 * (left out past the size limit) hangs under the run. Undefined for a trace
 * with no span.
 */
export function spanTree(trace: Trace): SpanNode | undefined {
  const byId = new Map<number, SpanNode>();
  for (const span of trace.spans) byId.set(span.id, { span, line: undefined, children: [] });
  const root = trace.spans.find((s) => s.parent === null) ?? trace.spans[0];
  if (root === undefined) return undefined;
  const rootNode = byId.get(root.id)!;
  for (const span of trace.spans) {
    if (span.id === root.id) continue;
    const parent = (span.parent !== null && byId.get(span.parent)) || rootNode;
    parent.children.push(byId.get(span.id)!);
  }
  const resolve = (node: SpanNode, inherited: number | undefined): void => {
    node.line = node.span.line ?? inherited;
    node.children.forEach((child) => resolve(child, node.line));
  };
  resolve(rootNode, undefined);
  return rootNode;
}

/** Every node of a tree, depth first (a node before its children). */
export function allNodes(root: SpanNode): SpanNode[] {
  return [root, ...root.children.flatMap(allNodes)];
}

/** The span's name in the Runs view. */
export function spanName(span: Span): string {
  const kind = span.kind;
  switch (kind.type) {
    case 'run':
      return kind.title === '' ? 'run' : kind.title;
    case 'section':
      return kind.heading === '' ? '§ (title)' : `§ ${kind.heading}`;
    case 'chain':
      return kind.kind;
    case 'round':
      return `chat ${kind.label}`;
    case 'toolCall':
      return `tool ${kind.alias}`;
    default:
      return String((kind as { type: unknown }).type);
  }
}

/** A duration in nanoseconds as the view shows it: `0.4 ms`, `120 ms`, `2.5 s`. */
export function formatDuration(nanos: number): string {
  const ms = nanos / 1e6;
  if (ms < 10) return `${Number(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** Token counts as the view shows them: `31→12 tok`, `≈31→12 tok` for an estimate. */
export function formatTokens(usage: Usage): string {
  return `${usage.estimated ? '≈' : ''}${usage.inputTokens}→${usage.outputTokens} tok`;
}

/** The sum of some counts (an estimate when any is), undefined for none. */
export function sumUsage(usages: Usage[]): Usage | undefined {
  if (usages.length === 0) return undefined;
  return usages.reduce((total, u) => ({
    inputTokens: total.inputTokens + u.inputTokens,
    outputTokens: total.outputTokens + u.outputTokens,
    estimated: total.estimated || u.estimated,
  }));
}

/** The tokens of the rounds in a subtree (the node's own when it is a round). */
export function nodeUsage(node: SpanNode): Usage | undefined {
  const usages = allNodes(node).flatMap((n) => (n.span.kind.type === 'round' && n.span.kind.usage ? [n.span.kind.usage] : []));
  return sumUsage(usages);
}

/**
 * What the view says after a span's name: its duration (`unfinished` when it
 * never ended), the tokens of its rounds, and `failed` when it failed. Joined
 * with ` · `.
 */
export function spanDetails(node: SpanNode): string {
  const span = node.span;
  const parts = [span.endNanos === null ? 'unfinished' : formatDuration(Math.max(0, span.endNanos - span.startNanos))];
  const usage = nodeUsage(node);
  if (usage) parts.push(formatTokens(usage));
  if (span.error !== null) parts.push('failed');
  return parts.join(' · ');
}

/** The whole line of a node: `chat w · 120 ms · 31→12 tok`. */
export function nodeText(node: SpanNode): string {
  return `${spanName(node.span)} · ${spanDetails(node)}`;
}

/** A span event as one line of the view: `log: asking`, `jump → ## Done`. */
export function eventText(event: SpanEvent): string {
  const kind = event.kind;
  switch (kind.type) {
    case 'log':
      return `log: ${kind.line}`;
    case 'notice':
      return `notice: ${kind.text}`;
    case 'jump':
      return `jump → ${kind.target}`;
    case 'ask':
      return `ask: ${kind.question} → ${kind.answer ?? '(no answer)'}`;
    default:
      return JSON.stringify(kind);
  }
}

/**
 * The innermost failed span (the failure that ended the run, not the spans it
 * ended on its way out), or undefined when none failed.
 */
export function failingNode(root: SpanNode): SpanNode | undefined {
  const failed = allNodes(root).filter((n) => n.span.error !== null);
  return failed.find((n) => !n.children.some((c) => allNodes(c).some((d) => d.span.error !== null)));
}

/** The two documents of a model round. */
export type RoundPart = 'request' | 'response';

/** The scheme of the read-only trace documents. */
export const TRACE_SCHEME = 'promptforge-trace';

/**
 * The path of a round's document: `/RUN/SPAN/NAME`, RUN the view's number of
 * the run, SPAN the round's span id and NAME what the editor tab shows
 * (`chat w 1 request.json`).
 */
export function roundDocumentPath(run: number, span: Span, part: RoundPart): string {
  const kind = span.kind as RoundKind;
  const extension = part === 'response' && kind.reply === null ? 'txt' : 'json';
  const name = `chat ${kind.label} ${kind.index} ${part}.${extension}`.replace(/\//g, '∕');
  return `/${run}/${span.id}/${name}`;
}

/** The run, span and part a round document's path names, or undefined. */
export function parseRoundDocumentPath(path: string): { run: number; spanId: number; part: RoundPart } | undefined {
  const match = /^\/(\d+)\/(\d+)\/[^/]* (request|response)\.(json|txt)$/.exec(path);
  if (!match) return undefined;
  return { run: Number(match[1]), spanId: Number(match[2]), part: match[3] as RoundPart };
}

/**
 * The text of a round's document: the request as it went out (the HTTP body
 * of an HTTP provider, else the engine's request), or the reply; JSON,
 * indented by two spaces. A round with no reply says why.
 */
export function roundDocumentText(span: Span, part: RoundPart): string {
  const kind = span.kind as RoundKind;
  if (part === 'request') return JSON.stringify(kind.wire ? kind.wire.body : kind.request, null, 2) + '\n';
  if (kind.reply === null) return `No reply${span.error ? `: ${span.error}` : ''}\n`;
  return JSON.stringify(kind.reply, null, 2) + '\n';
}

/** At most `max` characters of `text`, with `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + '…';
}

/** The tooltip of a span: what it is, where it ran, its failure. */
export function spanTooltip(node: SpanNode): string {
  const span = node.span;
  const kind = span.kind;
  const lines = [nodeText(node)];
  if (kind.type === 'round') {
    lines.push(`model ${kind.hostModel} (${kind.provider}${kind.model ? ` ${kind.model}` : ''}), round ${kind.index}`);
    if (kind.wire) lines.push(`sent to ${kind.wire.url}`);
    if (kind.usage) lines.push(kind.usage.estimated ? 'tokens estimated here' : 'tokens as the provider reported them');
    if (kind.reply?.finishReason) lines.push(`stopped: ${kind.reply.finishReason}`);
  } else if (kind.type === 'toolCall') {
    lines.push(`${kind.tool ?? kind.alias}, called by the ${kind.caller}`);
    lines.push(`arguments: ${clip(kind.arguments, 300)}`);
    if (kind.output !== null) lines.push(`output${kind.trust ? ` (${kind.trust})` : ''}: ${clip(kind.output, 300)}`);
  } else if (kind.type === 'section' && kind.outcome) {
    lines.push(`ended with: ${kind.outcome}`);
  } else if (kind.type === 'run' && kind.result !== null) {
    lines.push(`result: ${clip(kind.result, 300)}`);
  }
  if (node.line !== undefined) lines.push(`line ${node.line}${span.line === null ? ' (the enclosing span’s)' : ''}`);
  if (span.error !== null) lines.push(`failed: ${span.error}`);
  return lines.join('\n');
}
