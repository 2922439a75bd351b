import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { baseName, isPromptFileName, isPromptText, isTestFileName } from '../src/logic/detect.mts';

/** The shared detection corpus (tests/detection at the repository's root). */
const CORPUS = join(import.meta.dirname, '..', '..', '..', 'tests', 'detection');

/** The corpus index: each file, whether the server takes it for a prompt, and whether the editors do. */
function corpus(): { file: string; prompt: boolean; editors: boolean }[] {
  return readFileSync(join(CORPUS, 'index.txt'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [file = '', answer, editors] = line.split(/\s+/);
      assert.ok(answer === 'prompt' || answer === 'not-a-prompt', `${file}: answer ${answer}`);
      return { file, prompt: answer === 'prompt', editors: answer === 'prompt' || editors === 'editors:prompt' };
    });
}

test('the shared corpus: every prompt is one here, and of the others those marked editors:prompt', () => {
  const entries = corpus();
  assert.ok(entries.length >= 50, `${entries.length} entries`);
  assert.equal(readdirSync(CORPUS).filter((f) => f !== 'index.txt' && f !== '.gitattributes').length, entries.length);
  const wrong: string[] = [];
  for (const { file, prompt, editors } of entries) {
    const said = isPromptText(readFileSync(join(CORPUS, file), 'utf8'));
    if (prompt && !said) wrong.push(`${file}: the server takes it for a prompt, this check does not`);
    else if (said !== editors) wrong.push(`${file}: ${said ? 'called a prompt, not marked editors:prompt' : 'marked editors:prompt, rejected'}`);
  }
  assert.deepEqual(wrong, []);
});

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
  assert.equal(isPromptText('---\n  meta:\n    promptforge: 0\n---\n'), false, 'a nested key, all indented');
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
