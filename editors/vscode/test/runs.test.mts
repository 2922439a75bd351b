import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_RUNS, RunList, runDetails, runLabel, runLocation, spanLocation, traceIdOf } from '../src/logic/runs.mts';
import { allNodes, type Trace } from '../src/logic/trace.mts';

const ms = 1e6;
const started = (list: RunList, runId: string, offline = false) =>
  list.started({ runId, uri: `file:///w/${runId}.md`, file: `${runId}.md`, offline });

/** A run that failed in its `## Go` section (line 9), in a tool call on line 12. */
function failedTrace(): Trace {
  return {
    runId: 'run-00000000000000aa',
    startUnixNanos: 0,
    droppedSpans: 0,
    spans: [
      { id: 1, parent: null, startNanos: 0, endNanos: 5 * ms, line: null, error: 'Tool: boom', kind: { type: 'run', title: 'T', result: null } },
      { id: 2, parent: 1, startNanos: 1, endNanos: 5 * ms, line: 9, error: 'Tool: boom', kind: { type: 'section', heading: 'Go', outcome: 'error' } },
      {
        id: 3, parent: 2, startNanos: 2, endNanos: 3 * ms, line: 12, error: 'boom',
        kind: { type: 'toolCall', alias: 'grab', tool: null, callId: 'call-1', caller: 'script', arguments: '{}', output: null, trust: null },
      },
    ],
  };
}

test('the runs are listed newest first, at most MAX_RUNS', () => {
  const list = new RunList();
  for (let n = 1; n <= MAX_RUNS + 2; n++) started(list, `run-${n}`);
  const ids = list.list().map((e) => e.runId);
  assert.equal(ids.length, MAX_RUNS);
  assert.equal(ids[0], `run-${MAX_RUNS + 2}`);
  assert.equal(ids.at(-1), 'run-3');
  assert.equal(list.get(1), undefined);
  assert.equal(list.get(3)?.runId, 'run-3');
});

test("a run's status, duration and id; offline runs say so", () => {
  const list = new RunList();
  const entry = started(list, 'run-1', true);
  assert.equal(runLabel(entry), 'run-1.md');
  assert.equal(runDetails(entry), 'offline · running… · run-1');
  assert.equal(list.ended('run-1', { type: 'finished', result: 'ok', durationMs: 12, traceId: 'run-00000000000000ab' }), entry);
  assert.equal(runDetails(entry), 'offline · ✔ 12 ms · run-1');
  // Once traced: the run span's duration and the rounds' tokens.
  list.traced(entry, {
    runId: 'run-00000000000000ab',
    startUnixNanos: 0,
    droppedSpans: 0,
    spans: [
      { id: 1, parent: null, startNanos: 0, endNanos: 11.6 * ms, line: null, error: null, kind: { type: 'run', title: 'T', result: 'ok' } },
      {
        id: 2, parent: 1, startNanos: 0, endNanos: 2 * ms, line: 5, error: null,
        kind: { type: 'round', label: 'w', hostModel: 'echo', provider: 'echo', model: 'echo', index: 1, request: {}, wire: null, reply: null, usage: { inputTokens: 7, outputTokens: 3, estimated: true } },
      },
    ],
  });
  assert.equal(runDetails(entry), 'offline · ✔ 12 ms · ≈7→3 tok · run-1');
  const other = started(list, 'run-2');
  list.ended('run-2', { type: 'failed', kind: 'Binding', message: 'no key' });
  assert.equal(runDetails(other), '✘ Binding · run-2');
  const stopped = started(list, 'run-3');
  list.ended('run-3', { type: 'failed', kind: 'Cancelled', message: 'the run was cancelled' });
  assert.equal(stopped.status, 'cancelled');
  assert.equal(runDetails(stopped), 'cancelled · run-3');
});

test('an event ends the newest running run of its id (a new server numbers its runs again)', () => {
  const list = new RunList();
  const old = started(list, 'run-1');
  list.ended('run-1', { type: 'finished', result: null, durationMs: 1 });
  const again = started(list, 'run-1');
  assert.equal(list.ended('run-1', { type: 'finished', result: null, durationMs: 2 }), again);
  assert.equal(old.durationMs, 1);
  assert.equal(list.ended('run-1', { type: 'finished', result: null, durationMs: 3 }), undefined);
  assert.equal(list.ended('run-9', { type: 'finished', result: null, durationMs: 3 }), undefined);
});

test('the trace id comes from the last event', () => {
  assert.equal(traceIdOf({ type: 'finished', result: null, durationMs: 1, traceId: 'run-1234' }), 'run-1234');
  assert.equal(traceIdOf({ type: 'failed', kind: 'Lua', message: 'x' }), undefined);
});

test("a failed run opens at the failed event's range, else at the span that failed", () => {
  const list = new RunList();
  const range = { start: { line: 5, character: 2 }, end: { line: 5, character: 10 } };
  const binding = started(list, 'run-1');
  list.ended('run-1', { type: 'failed', kind: 'Binding', message: 'no key', range });
  assert.deepEqual(runLocation(binding), { line: 5, character: 2 });
  // No range: the innermost failed span's line (1-based in the trace).
  const tool = started(list, 'run-2');
  list.ended('run-2', { type: 'failed', kind: 'Tool', message: 'boom', traceId: 'run-00000000000000aa' });
  list.traced(tool, failedTrace());
  assert.deepEqual(runLocation(tool), { line: 11, character: 0 });
  // With a range, the failing span opens there; the others at their lines.
  const lua = started(list, 'run-3');
  list.ended('run-3', { type: 'failed', kind: 'Tool', message: 'boom', range });
  list.traced(lua, failedTrace());
  const nodes = allNodes(lua.tree!);
  assert.deepEqual(spanLocation(lua, nodes[2]!), { line: 5, character: 2 });
  assert.deepEqual(spanLocation(lua, nodes[1]!), { line: 8, character: 0 });
  assert.equal(spanLocation(lua, nodes[0]!), undefined);
});

test('a finished run opens at its run span line, or nowhere when it has none', () => {
  const list = new RunList();
  const entry = started(list, 'run-1');
  list.ended('run-1', { type: 'finished', result: null, durationMs: 1 });
  assert.equal(runLocation(entry), undefined);
  const trace = failedTrace();
  trace.spans = trace.spans.map((s) => ({ ...s, error: null, line: s.id === 1 ? 7 : s.line }));
  list.traced(entry, trace);
  assert.deepEqual(runLocation(entry), { line: 6, character: 0 });
});

test('a run without a trace says why; clearing keeps the running ones', () => {
  const list = new RunList();
  const done = started(list, 'run-1');
  list.ended('run-1', { type: 'finished', result: null, durationMs: 1 });
  list.untraced(done, 'the server kept no trace of this run');
  assert.equal(done.noTrace, 'the server kept no trace of this run');
  list.traced(done, { ...failedTrace(), spans: [] });
  assert.equal(done.noTrace, 'the trace has no span');
  started(list, 'run-2');
  list.clearEnded();
  assert.deepEqual(list.list().map((e) => e.runId), ['run-2']);
});
