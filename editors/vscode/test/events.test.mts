import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatEvent, header, type RunEvent, RunLog, type RunStart, summary } from '../src/logic/events.mts';

test('each event reads as a line of the run block', () => {
  assert.equal(formatEvent({ type: 'log', text: 'measured 4 words' }), '  log: measured 4 words');
  assert.equal(formatEvent({ type: 'section', heading: '' }), '  § (title)');
  assert.equal(formatEvent({ type: 'section', heading: 'Measure' }), '  § Measure');
  assert.equal(formatEvent({ type: 'modelRound', label: 'default', round: 2 }), '  model default, round 2');
  assert.equal(
    formatEvent({ type: 'toolCall', alias: 'fetch', path: 'promptforge/web/fetch', callId: 'c1' }),
    '  tool fetch (promptforge/web/fetch) called',
  );
  assert.equal(
    formatEvent({ type: 'toolResult', alias: 'fetch', callId: 'c1', ok: false, durationMs: 3 }),
    '  tool fetch failed in 3 ms',
  );
  assert.equal(
    formatEvent({ type: 'caseFinished', name: 'one', ok: false, failures: ['result: expected a\ngot b'] }),
    '  ✗ one\n      result: expected a\n      got b',
  );
  assert.equal(formatEvent({ type: 'finished', result: '4 words', durationMs: 5 }), '✔ Result (5 ms):\n4 words');
  assert.equal(formatEvent({ type: 'finished', result: null, durationMs: 5 }), '✔ Finished with no result (5 ms)');
  const range = { start: { line: 9, character: 0 }, end: { line: 9, character: 4 } };
  assert.equal(
    formatEvent({ type: 'failed', kind: 'Lua', message: 'boom', range }),
    '✘ Failed: Lua (line 10): boom',
  );
});

test('the header and the notification name the file', () => {
  const start: RunStart = { kind: 'run', file: 'word-stats.md', args: 'The fox' };
  assert.equal(header('run-1', start), '▶ Run word-stats.md with arguments "The fox"  [run-1]');
  assert.equal(
    header('run-2', { kind: 'test', file: 'a.test.yaml', caseName: 'one' }),
    '▶ Test a.test.yaml (case "one")  [run-2]',
  );
  assert.equal(header('run-3', { kind: 'run', file: 'p.md', offline: true }), '▶ Run p.md offline  [run-3]');
  assert.equal(summary(start, { type: 'finished', result: '4 words', durationMs: 1 }), 'PromptForge: Run word-stats.md: 4 words');
  assert.equal(
    summary(start, { type: 'failed', kind: 'Cancelled', message: 'the run was cancelled' }),
    'PromptForge: word-stats.md failed: Cancelled: the run was cancelled',
  );
});

function recorder() {
  const lines: string[] = [];
  const ends: string[] = [];
  const log = new RunLog({
    append: (t) => lines.push(t),
    ended: (id) => ends.push(id),
  });
  return { lines, ends, log };
}

test('a run block: header, events in order, the end, and the run is no longer active', () => {
  const { lines, ends, log } = recorder();
  log.started('r1', { kind: 'run', file: 'p.md' });
  assert.deepEqual(log.active(), ['r1']);
  log.event('r1', { type: 'section', heading: 'Go' });
  log.event('r1', { type: 'log', text: 'hi' });
  log.event('r1', { type: 'finished', result: 'ok', durationMs: 2 });
  assert.deepEqual(lines, ['▶ Run p.md  [r1]', '  § Go', '  log: hi', '✔ Result (2 ms):\nok', '']);
  assert.deepEqual(ends, ['r1']);
  assert.deepEqual(log.active(), []);
});

test('events that arrive before the run id is known wait for the header', () => {
  const { lines, log } = recorder();
  const early: RunEvent[] = [
    { type: 'section', heading: '' },
    { type: 'log', text: 'early' },
  ];
  early.forEach((e) => log.event('r2', e));
  assert.deepEqual(lines, []);
  log.started('r2', { kind: 'run', file: 'p.md' });
  assert.deepEqual(lines, ['▶ Run p.md  [r2]', '  § (title)', '  log: early']);
});

test('a server that stops ends the runs going on', () => {
  const { lines, ends, log } = recorder();
  log.started('r3', { kind: 'test', file: 't.test.yaml' });
  log.abandon('the language server stopped');
  assert.equal(lines[1], '✘ Failed: ServerStopped: the language server stopped');
  assert.deepEqual(ends, ['r3']);
  assert.deepEqual(log.active(), []);
});
