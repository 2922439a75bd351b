import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runArgument, runKindOf, testArgument, uriOfArgument } from '../src/logic/args.mts';

test('the run and test arguments carry only what is given', () => {
  assert.deepEqual(runArgument('file:///p.md'), { uri: 'file:///p.md' });
  assert.deepEqual(runArgument('file:///p.md', ''), { uri: 'file:///p.md', args: '' });
  assert.deepEqual(runArgument('file:///p.md', 'a b', 7), { uri: 'file:///p.md', args: 'a b', seed: 7 });
  assert.deepEqual(runArgument('file:///p.md', undefined, undefined, true), { uri: 'file:///p.md', offline: true });
  assert.deepEqual(runArgument('file:///p.md', undefined, undefined, false), { uri: 'file:///p.md' });
  assert.deepEqual(testArgument('file:///p.md'), { uri: 'file:///p.md' });
  assert.deepEqual(testArgument('file:///p.test.yaml', 'one'), { uri: 'file:///p.test.yaml', case: 'one' });
});

test('a command finds its document in a lens argument, a string or a Uri', () => {
  assert.equal(uriOfArgument({ uri: 'file:///a.md' }), 'file:///a.md');
  assert.equal(uriOfArgument('file:///b.md'), 'file:///b.md');
  const uri = { scheme: 'file', toString: () => 'file:///c.md' };
  assert.equal(uriOfArgument(uri), 'file:///c.md');
  assert.equal(uriOfArgument(undefined), undefined);
  assert.equal(uriOfArgument(''), undefined);
  assert.equal(uriOfArgument({ other: 1 }), undefined);
});

test('the server commands that start runs', () => {
  assert.equal(runKindOf('promptforge.run'), 'run');
  assert.equal(runKindOf('promptforge.test'), 'test');
  assert.equal(runKindOf('promptforge.cancel'), undefined);
});
