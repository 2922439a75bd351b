import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  allNodes,
  eventText,
  failingNode,
  formatDuration,
  formatTokens,
  isTrace,
  nodeText,
  parseRoundDocumentPath,
  roundDocumentPath,
  roundDocumentText,
  type Span,
  spanName,
  spanTooltip,
  spanTree,
  sumUsage,
  type Trace,
} from '../src/logic/trace.mts';

const ms = 1e6;

/** A round span (echo unless `wire` is given). */
function round(id: number, parent: number, label: string, index: number, extra: Partial<Span> = {}, wire: unknown = null): Span {
  return {
    id,
    parent,
    startNanos: 10 * ms,
    endNanos: 130 * ms,
    line: null,
    error: null,
    kind: {
      type: 'round',
      label,
      hostModel: 'echo',
      provider: wire ? 'openai' : 'echo',
      model: 'echo',
      index,
      request: { messages: [{ role: 'user', content: 'hi world' }], tools: [] },
      wire: wire as { url: string; body: unknown } | null,
      reply: { content: 'hi world', toolCalls: [], finishReason: null },
      usage: { inputTokens: 31, outputTokens: 12, estimated: !wire },
    },
    ...extra,
  };
}

/** The trace of `ticket-triage.md` run offline (its shape as the server gives it), with a tool call and a log line. */
function triage(): Trace {
  return {
    runId: 'run-8fef0f03d9907799',
    startUnixNanos: 1,
    droppedSpans: 0,
    spans: [
      { id: 1, parent: null, startNanos: 0, endNanos: 769 * ms, line: null, error: null, kind: { type: 'run', title: 'Ticket triage', result: 'ok' } },
      {
        id: 2, parent: 1, startNanos: 0.1 * ms, endNanos: 767 * ms, line: 11, error: null,
        kind: { type: 'section', heading: '', outcome: 'done' },
        events: [{ atNanos: 1 * ms, kind: { type: 'log', line: 'asking' } }],
      },
      {
        id: 3, parent: 2, startNanos: 2 * ms, endNanos: 2.4 * ms, line: 20, error: null,
        kind: { type: 'toolCall', alias: 'route', tool: null, callId: 'call-1', caller: 'script', arguments: '{"team":"billing"}', output: 'recorded', trust: 'trusted' },
      },
      round(4, 2, 'triager', 1, { line: 25 }),
      { id: 5, parent: 1, startNanos: 767 * ms, endNanos: 768.8 * ms, line: 28, error: null, kind: { type: 'section', heading: 'Route', outcome: 'result' } },
      { id: 6, parent: 5, startNanos: 767.5 * ms, endNanos: 768.7 * ms, line: null, error: null, kind: { type: 'chain', kind: 'call' } },
      { id: 7, parent: 6, startNanos: 767.6 * ms, endNanos: 768.7 * ms, line: 52, error: null, kind: { type: 'section', heading: 'General', outcome: 'result' } },
      round(8, 7, 'writer', 2, { startNanos: 768 * ms, endNanos: 768.5 * ms }),
    ],
  };
}

test('the spans become a tree under the run, in the order they opened', () => {
  const root = spanTree(triage())!;
  assert.equal(root.span.id, 1);
  const shape = (n: ReturnType<typeof spanTree>): unknown => [spanName(n!.span), ...n!.children.map(shape)];
  assert.deepEqual(shape(root), [
    'Ticket triage',
    ['§ (title)', ['tool route'], ['chat triager']],
    ['§ Route', ['call', ['§ General', ['chat writer']]]],
  ]);
  assert.equal(spanTree({ ...triage(), spans: [] }), undefined);
});

test('a span with no line jumps to the nearest enclosing span with one', () => {
  const nodes = allNodes(spanTree(triage())!);
  const lineOf = (id: number) => nodes.find((n) => n.span.id === id)!.line;
  assert.equal(lineOf(1), undefined); // the run has none, nor anything above it
  assert.equal(lineOf(4), 25); // its own
  assert.equal(lineOf(6), 28); // the call chain: its section's
  assert.equal(lineOf(8), 52); // the round: General's
});

test('a span whose parent was left out hangs under the run', () => {
  const trace = triage();
  trace.spans = trace.spans.filter((s) => s.id !== 6);
  trace.droppedSpans = 1;
  const root = spanTree(trace)!;
  assert.deepEqual(root.children.map((c) => c.span.id), [2, 5, 7]);
  assert.equal(root.children[2]!.line, 52);
});

test('node text: name, duration, tokens; estimates marked ≈', () => {
  const nodes = allNodes(spanTree(triage())!);
  const text = (id: number) => nodeText(nodes.find((n) => n.span.id === id)!);
  assert.equal(text(4), 'chat triager · 120 ms · ≈31→12 tok');
  assert.equal(text(3), 'tool route · 0.4 ms');
  // A section and the run add up the rounds under them.
  assert.equal(text(5), '§ Route · 1.8 ms · ≈31→12 tok');
  assert.equal(text(1), 'Ticket triage · 769 ms · ≈62→24 tok');
  const wired = spanTree({ ...triage(), spans: [triage().spans[0]!, round(2, 1, 'w', 1, {}, { url: 'http://x/v1', body: {} })] })!;
  assert.equal(nodeText(wired.children[0]!), 'chat w · 120 ms · 31→12 tok');
  const open = spanTree({ ...triage(), spans: [{ ...triage().spans[0]!, endNanos: null, error: 'Cancelled: stop' }] })!;
  assert.equal(nodeText(open), 'Ticket triage · unfinished · failed');
});

test('durations and tokens read short', () => {
  assert.equal(formatDuration(0), '0 ms');
  assert.equal(formatDuration(420_000), '0.4 ms');
  assert.equal(formatDuration(9.96 * ms), '10 ms');
  assert.equal(formatDuration(120.4 * ms), '120 ms');
  assert.equal(formatDuration(2500 * ms), '2.5 s');
  assert.equal(formatTokens({ inputTokens: 31, outputTokens: 12, estimated: false }), '31→12 tok');
  assert.equal(formatTokens({ inputTokens: 31, outputTokens: 12, estimated: true }), '≈31→12 tok');
  assert.equal(sumUsage([]), undefined);
  assert.deepEqual(
    sumUsage([
      { inputTokens: 1, outputTokens: 2, estimated: false },
      { inputTokens: 3, outputTokens: 4, estimated: true },
    ]),
    { inputTokens: 4, outputTokens: 6, estimated: true },
  );
});

test('span events read as lines', () => {
  assert.equal(eventText({ atNanos: 0, kind: { type: 'log', line: 'asking' } }), 'log: asking');
  assert.equal(eventText({ atNanos: 0, kind: { type: 'notice', text: 'n' } }), 'notice: n');
  assert.equal(eventText({ atNanos: 0, kind: { type: 'jump', target: '### Bug' } }), 'jump → ### Bug');
  assert.equal(eventText({ atNanos: 0, kind: { type: 'ask', question: 'Name?', answer: null } }), 'ask: Name? → (no answer)');
});

test('the failing span is the innermost one that failed', () => {
  const trace = triage();
  for (const span of trace.spans) if ([1, 5, 6, 7, 8].includes(span.id)) span.error = 'Model: refused';
  const root = spanTree(trace)!;
  assert.equal(failingNode(root)!.span.id, 8);
  assert.equal(failingNode(spanTree(triage())!), undefined);
});

test("a round's documents: the engine's request or the wire body, and the reply, as JSON", () => {
  const echo = triage().spans[3]!;
  const path = roundDocumentPath(3, echo, 'request');
  assert.equal(path, '/3/4/chat triager 1 request.json');
  assert.deepEqual(parseRoundDocumentPath(path), { run: 3, spanId: 4, part: 'request' });
  assert.deepEqual(JSON.parse(roundDocumentText(echo, 'request')), { messages: [{ role: 'user', content: 'hi world' }], tools: [] });
  assert.match(roundDocumentText(echo, 'request'), /^\{\n {2}"messages": \[/);
  assert.deepEqual(JSON.parse(roundDocumentText(echo, 'response')), { content: 'hi world', toolCalls: [], finishReason: null });
  const body = { model: 'gpt', messages: [{ role: 'user', content: 'hi world' }], stream: true };
  const wired = round(9, 1, 'a/b', 3, {}, { url: 'https://api.example.com/v1/chat/completions', body });
  assert.deepEqual(JSON.parse(roundDocumentText(wired, 'request')), body);
  // A slash of a label does not make a folder.
  assert.deepEqual(parseRoundDocumentPath(roundDocumentPath(1, wired, 'response')), { run: 1, spanId: 9, part: 'response' });
  const failed = round(10, 1, 'w', 1, { error: 'Model: the server answered 500' });
  (failed.kind as { reply: unknown }).reply = null;
  assert.equal(roundDocumentPath(1, failed, 'response'), '/1/10/chat w 1 response.txt');
  assert.equal(roundDocumentText(failed, 'response'), 'No reply: Model: the server answered 500\n');
  assert.equal(parseRoundDocumentPath('/x/1/chat w 1 request.json'), undefined);
  assert.equal(parseRoundDocumentPath('/1/2/chat w 1 other.json'), undefined);
});

test('tooltips say what a span did and where', () => {
  const nodes = allNodes(spanTree(triage())!);
  const tip = (id: number) => spanTooltip(nodes.find((n) => n.span.id === id)!);
  assert.equal(tip(3), 'tool route · 0.4 ms\nroute, called by the script\narguments: {"team":"billing"}\noutput (trusted): recorded\nline 20');
  assert.equal(tip(8), 'chat writer · 0.5 ms · ≈31→12 tok\nmodel echo (echo echo), round 2\ntokens estimated here\nline 52 (the enclosing span’s)');
});

test('only a trace-shaped answer is taken for a trace', () => {
  assert.equal(isTrace(triage()), true);
  assert.equal(isTrace(null), false);
  assert.equal(isTrace({ runId: 'r', spans: [{ id: 1 }] }), false);
  assert.equal(isTrace({ code: -32602, message: 'no trace' }), false);
});
