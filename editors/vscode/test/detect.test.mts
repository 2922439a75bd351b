import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baseName, isPromptFileName, isPromptText, isTestFileName } from '../src/logic/detect.mts';

test('a Markdown file is a prompt when its frontmatter has a top-level promptforge key', () => {
  assert.equal(isPromptText('---\nname: x\npromptforge: 0\n---\n# T\n'), true);
  assert.equal(isPromptText('---\r\npromptforge: 0\r\n---\r\n'), true);
  assert.equal(isPromptText('\uFEFF---\npromptforge: 0\n---\n'), true);
  assert.equal(isPromptText('---\npromptforge:\n'), true, 'an unclosed frontmatter is read to the end');
});

test('other Markdown files are not prompts', () => {
  assert.equal(isPromptText('# Title\n\npromptforge: 0\n'), false, 'no frontmatter');
  assert.equal(isPromptText('---\nname: x\n---\npromptforge: 0\n'), false, 'the key after the frontmatter');
  assert.equal(isPromptText('---\nmeta:\n  promptforge: 0\n---\n'), false, 'a nested key');
  assert.equal(isPromptText('---\npromptforgeX: 0\n---\n'), false, 'another key');
  assert.equal(isPromptText(' ---\npromptforge: 0\n---\n'), false, 'not the first line');
  assert.equal(isPromptText(''), false);
});

test('file names', () => {
  assert.equal(isPromptFileName('/a/b/loop.pf.md'), true);
  assert.equal(isPromptFileName('/a/b/loop.md'), false);
  assert.equal(isTestFileName('/a/word-stats.test.yaml'), true);
  assert.equal(isTestFileName('/a/word-stats.yaml'), false);
  assert.equal(baseName('file:///a/b/word%20stats.md'), 'word stats.md');
});
