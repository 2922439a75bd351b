import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  affectedFiles,
  type CaseFinished,
  caseOutcome,
  type ListedFile,
  listingNote,
  SHOW_TRACE_COMMAND,
  testCommands,
  traceLink,
} from '../src/logic/testing.mts';

const at = (line: number) => ({ start: { line, character: 4 }, end: { line, character: 30 } });

test('a whole file runs in one command, its selected cases with it; other cases one by one', () => {
  assert.deepEqual(
    testCommands([
      { fileUri: 'file:///w/a.test.yaml', caseName: 'one' },
      { fileUri: 'file:///w/a.test.yaml' },
      { fileUri: 'file:///w/b.test.yaml', caseName: 'two' },
      { fileUri: 'file:///w/b.test.yaml', caseName: 'two' },
      { fileUri: 'file:///w/b.test.yaml', caseName: 'three' },
    ]),
    [{ uri: 'file:///w/a.test.yaml' }, { uri: 'file:///w/b.test.yaml', case: 'two' }, { uri: 'file:///w/b.test.yaml', case: 'three' }],
  );
});

const failed: CaseFinished = {
  type: 'caseFinished',
  name: 'fails',
  ok: false,
  failures: ['expect.result: the result differs\n  expected: "a"\n  actual:   "b"', 'tools: unscripted call'],
  durationMs: 12,
  details: [
    { what: 'expect.result', message: 'the result differs', range: at(11), expected: 'a', actual: 'b', exact: true },
    { what: 'tools', message: 'unscripted call', exact: false },
  ],
};

test('a failed case gives one message per expectation, at its line, with a diff when both texts are there', () => {
  const outcome = caseOutcome(failed, at(7));
  assert.equal(outcome.passed, false);
  assert.equal(outcome.durationMs, 12);
  assert.deepEqual(outcome.messages, [
    { message: 'expect.result: the result differs', range: at(11), expected: 'a', actual: 'b' },
    { message: 'tools: unscripted call', range: at(7) },
  ]);
});

test('without details, the rendered failures go at the case; a passed case has no message', () => {
  const outcome = caseOutcome({ ...failed, details: [] }, at(7));
  assert.deepEqual(
    outcome.messages.map((m) => [m.message, m.range?.start.line]),
    [
      [failed.failures[0], 7],
      [failed.failures[1], 7],
    ],
  );
  assert.deepEqual(caseOutcome({ ...failed, ok: true, failures: [], details: [] }), {
    passed: true,
    durationMs: 12,
    messages: [],
  });
});

test('a save affects the test file itself and the files testing the saved prompt', () => {
  const files: ListedFile[] = [
    { uri: 'file:///w/p.test.yaml', promptUri: 'file:///w/p.md', cases: [] },
    { uri: 'file:///w/q.test.yaml', promptUri: 'file:///w/p.md', cases: [] },
    { uri: 'file:///w/r.test.yaml', promptUri: 'file:///w/r.md', cases: [] },
  ];
  assert.deepEqual(
    affectedFiles('file:///w/p.md', files).map((f) => f.uri),
    ['file:///w/p.test.yaml', 'file:///w/q.test.yaml'],
  );
  assert.deepEqual(
    affectedFiles('file:///w/r.test.yaml', files).map((f) => f.uri),
    ['file:///w/r.test.yaml'],
  );
});

test('a kept trace gives a command link naming it; none without one', () => {
  const link = traceLink({ ...failed, traceRunId: 'run-4.2', promptUri: 'file:///w/p.md' });
  const prefix = `[Open trace](command:${SHOW_TRACE_COMMAND}?`;
  assert.ok(link !== undefined && link.startsWith(prefix), link);
  const argument = JSON.parse(decodeURIComponent(link.slice(prefix.length, -1)));
  assert.deepEqual(argument, [{ runId: 'run-4.2', promptUri: 'file:///w/p.md', caseName: 'fails' }]);
  assert.equal(traceLink(failed), undefined);
});

test('a file listed without all its cases says so beside its name', () => {
  const listed: ListedFile = { uri: 'file:///w/a.test.yaml', promptUri: 'file:///w/a.md', cases: [{ name: 'one', range: at(2), live: false }] };
  assert.equal(listingNote(listed), undefined);
  assert.equal(listingNote({ ...listed, truncated: true }), 'not all cases listed');
  assert.equal(listingNote({ ...listed, promptUri: null, cases: [], truncated: true }), 'cases not listed: past what the listing reads');
});
