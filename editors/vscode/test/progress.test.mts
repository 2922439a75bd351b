import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProgress, type Token } from '../src/logic/progress.mts';

function host() {
  const seen: string[] = [];
  const cancels: Token[] = [];
  const cancelButtons = new Map<string, () => void>();
  const progress = new ServerProgress({
    show(title, message, cancellable, cancel) {
      seen.push(`show ${title} (${message ?? '-'})${cancellable ? ' cancellable' : ''}`);
      cancelButtons.set(title, cancel);
      return {
        report: (m) => seen.push(`${title}: ${m}`),
        done: () => seen.push(`${title} done`),
      };
    },
    cancel: (token) => cancels.push(token),
  });
  return { seen, cancels, cancelButtons, progress };
}

test("the server's begin shows the notification, its reports follow, its end closes it", () => {
  const { seen, progress } = host();
  progress.handle('run-1', { kind: 'begin', title: 'Running loop', cancellable: true, message: 'section: H1 pass' });
  assert.deepEqual(progress.active(), ['run-1']);
  progress.handle('run-1', { kind: 'report', cancellable: true, message: 'section: Go' });
  progress.handle('run-1', { kind: 'report', cancellable: true });
  progress.handle('run-1', { kind: 'end' });
  assert.deepEqual(seen, [
    'show Running loop (section: H1 pass) cancellable',
    'Running loop: section: Go',
    'Running loop done',
  ]);
  assert.deepEqual(progress.active(), []);
});

test('Cancel sends the cancel for the token, once', () => {
  const { cancels, cancelButtons, progress } = host();
  progress.handle('run-2', { kind: 'begin', title: 'Running a', cancellable: true });
  progress.handle(7, { kind: 'begin', title: 'Running b', cancellable: true });
  cancelButtons.get('Running a')!();
  cancelButtons.get('Running a')!();
  assert.deepEqual(cancels, ['run-2']);
  progress.handle(7, { kind: 'end' });
  cancelButtons.get('Running b')!();
  assert.deepEqual(cancels, ['run-2'], 'a progress that ended cancels nothing');
});

test('values for unknown tokens, a second begin and a stopped server', () => {
  const { seen, progress } = host();
  progress.handle('x', { kind: 'report', message: 'early' });
  progress.handle('x', { kind: 'end' });
  assert.deepEqual(seen, []);
  progress.handle('r', { kind: 'begin', title: 'Running r' });
  progress.handle('r', { kind: 'begin', title: 'Running r again' });
  progress.handle('s', { kind: 'begin', title: 'Running s' });
  progress.clear();
  assert.deepEqual(seen, ['show Running r (-)', 'show Running s (-)', 'Running r done', 'Running s done']);
  assert.deepEqual(progress.active(), []);
});
