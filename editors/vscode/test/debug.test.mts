import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import {
  adapterArgs,
  CASE_NEEDS_TEST_FILE,
  caseDebugConfiguration,
  DEBUG_TYPE,
  debugConfiguration,
  isPromptDocument,
  mayBePrompt,
  NO_PROMPT,
  resolveConfiguration,
  resolveSubstituted,
  sessionName,
} from '../src/logic/debug.mts';

const PROMPT = '---\nname: demo\npromptforge: 0\n---\n\n# demo\n';
const activePrompt = { fsPath: '/ws/demo.md', languageId: 'promptforge', text: PROMPT };

test('the Debug lens and command start a launch of the prompt named after its file', () => {
  assert.deepEqual(debugConfiguration('/ws/sub/count words.pf.md'), {
    type: 'promptforge',
    request: 'launch',
    name: 'Debug count words.pf.md',
    program: '/ws/sub/count words.pf.md',
  });
  assert.equal(sessionName('C:\\ws\\a.md'), 'Debug a.md');
});

test('the adapter is `promptforge dap`, with --trust only in a trusted workspace', () => {
  assert.deepEqual(adapterArgs(true), ['dap', '--trust']);
  assert.deepEqual(adapterArgs(false), ['dap']);
});

test('F5 with no launch.json debugs the active prompt', () => {
  const resolved = resolveConfiguration({}, activePrompt);
  assert.deepEqual(resolved, {
    ok: true,
    config: { type: DEBUG_TYPE, request: 'launch', name: 'Debug demo.md', program: '/ws/demo.md' },
  });
  // VS Code may pass the chosen type alone, and keeps noDebug (Run Without Debugging).
  const typed = resolveConfiguration({ type: 'promptforge', noDebug: true }, activePrompt);
  assert.ok(typed.ok);
  assert.equal(typed.config.program, '/ws/demo.md');
  assert.equal(typed.config.noDebug, true);
});

test('a launch.json entry keeps its own values and gets a program when it has none', () => {
  const given = { type: 'promptforge', request: 'launch', name: 'Mine', program: '${file}', args: ['a', 'b'], seed: 7, stopOnEntry: true };
  assert.deepEqual(resolveConfiguration(given, undefined), { ok: true, config: given });
  const noProgram = resolveConfiguration({ type: 'promptforge', request: 'launch', name: 'Mine', args: 'x y' }, activePrompt);
  assert.deepEqual(noProgram, {
    ok: true,
    config: { type: 'promptforge', request: 'launch', name: 'Mine', program: '/ws/demo.md', args: 'x y' },
  });
});

test('with no prompt to debug the start is refused with a clear message', () => {
  const notPrompt = { fsPath: '/ws/notes.md', languageId: 'markdown', text: '# notes\n' };
  assert.deepEqual(resolveConfiguration({}, notPrompt), { ok: false, message: NO_PROMPT });
  assert.deepEqual(resolveConfiguration({}, undefined), { ok: false, message: NO_PROMPT });
  assert.deepEqual(resolveConfiguration({ type: 'promptforge', request: 'launch', name: 'x' }, notPrompt), { ok: false, message: NO_PROMPT });
  const untitled = { languageId: 'promptforge', text: PROMPT };
  assert.deepEqual(resolveConfiguration({}, untitled), { ok: false, message: NO_PROMPT });
  assert.match(NO_PROMPT, /open a prompt to debug it/);
});

test('a Markdown prompt the extension has not marked yet is still the active prompt', () => {
  assert.equal(isPromptDocument({ fsPath: '/ws/p.md', languageId: 'markdown', text: PROMPT }), true);
  assert.equal(isPromptDocument({ fsPath: '/ws/p.pf.md', languageId: 'markdown', text: '' }), true);
  assert.equal(isPromptDocument({ fsPath: '/ws/p.lua', languageId: 'lua', text: PROMPT }), false);
});

test('attach and attributes of the wrong type are refused', () => {
  const attach = resolveConfiguration({ type: 'promptforge', request: 'attach', name: 'a', program: '/p.md' }, undefined);
  assert.equal(attach.ok, false);
  assert.match(!attach.ok ? attach.message : '', /only launches prompts/);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ args: 3 }, /"args" must be a string or a list of strings/],
    [{ args: ['a', 1] }, /"args" must be a string or a list of strings/],
    [{ seed: 1.5 }, /"seed" must be a non-negative integer/],
    [{ seed: '3' }, /"seed" must be a non-negative integer/],
    [{ config: 3 }, /"config" must be a string/],
    [{ stopOnEntry: 'yes' }, /"stopOnEntry" must be true or false/],
  ];
  for (const [extra, message] of cases) {
    const resolved = resolveConfiguration({ type: 'promptforge', request: 'launch', name: 'Bad', program: '/p.md', ...extra }, undefined);
    assert.equal(resolved.ok, false, JSON.stringify(extra));
    assert.match(!resolved.ok ? resolved.message : '', message);
    assert.match(!resolved.ok ? resolved.message : '', /"Bad"/);
  }
});

test('after substitution, program and config become absolute and program must be a prompt', () => {
  const files = new Map([
    ['/ws/prompts/a.md', PROMPT],
    ['/ws/notes.md', '# notes\n'],
  ]);
  const access = { folder: '/ws', readText: (file: string) => files.get(file) };
  const base = { type: 'promptforge', request: 'launch', name: 'n' };
  assert.deepEqual(resolveSubstituted({ ...base, program: 'prompts/a.md', config: 'host.toml' }, access), {
    ok: true,
    config: { ...base, program: '/ws/prompts/a.md', config: '/ws/host.toml' },
  });
  assert.deepEqual(resolveSubstituted({ ...base, program: '/ws/prompts/a.md' }, access), {
    ok: true,
    config: { ...base, program: '/ws/prompts/a.md' },
  });
  const missing = resolveSubstituted({ ...base, program: 'nowhere.md' }, access);
  assert.match(!missing.ok ? missing.message : '', /cannot debug \/ws\/nowhere\.md: the file cannot be read/);
  const notes = resolveSubstituted({ ...base, program: '/ws/notes.md' }, access);
  assert.match(!notes.ok ? notes.message : '', /cannot debug notes\.md: it is not a prompt/);
  assert.deepEqual(resolveSubstituted({ ...base, program: '' }, access), { ok: false, message: NO_PROMPT });
});

test('only a text the adapter surely refuses is not a prompt', () => {
  assert.equal(mayBePrompt(PROMPT), true);
  assert.equal(mayBePrompt('\n\n---\r\npromptforge: 0\r\n---\r\n'), true);
  assert.equal(mayBePrompt('---\n{name: x, promptforge: 0}\n---\n'), true);
  assert.equal(mayBePrompt('# notes\n'), false);
  assert.equal(mayBePrompt('---\nname: x\n---\npromptforge: 0\n'), false);
});

test('package.json contributes the debugger, its breakpoints and the Debug command beside Run', () => {
  const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const contributes = manifest.contributes;
  const [debuggerEntry] = contributes.debuggers;
  assert.equal(debuggerEntry.type, DEBUG_TYPE);
  assert.deepEqual(debuggerEntry.languages, ['promptforge']);
  assert.deepEqual(Object.keys(debuggerEntry.configurationAttributes.launch.properties), ['program', 'args', 'seed', 'config', 'stopOnEntry', 'case']);
  assert.deepEqual(debuggerEntry.initialConfigurations[0].program, '${file}');
  assert.deepEqual(
    debuggerEntry.configurationSnippets.map((s: { label: string }) => s.label),
    ['PromptForge: Debug the current prompt', 'PromptForge: Debug the current prompt with arguments'],
  );
  assert.deepEqual(contributes.breakpoints, [{ language: 'promptforge' }]);
  const debug = contributes.commands.find((c: { command: string }) => c.command === 'promptforge.debug');
  assert.equal(debug.title, 'Debug');
  const title = contributes.menus['editor/title'];
  const run = title.find((m: { command: string }) => m.command === 'promptforge.runPrompt');
  const debugButton = title.find((m: { command: string }) => m.command === 'promptforge.debug');
  assert.equal(debugButton.when, run.when);
  assert.ok(contributes.menus.commandPalette.some((m: { command: string }) => m.command === 'promptforge.debug'));
  for (const event of ['onDebugResolve:promptforge', 'onDebugDynamicConfigurations:promptforge', 'onCommand:promptforge.debug']) {
    assert.ok(manifest.activationEvents.includes(event), event);
  }
});

test('the Testing view debugs a case: its test file as program, the case by name', () => {
  assert.deepEqual(caseDebugConfiguration('/ws/word-stats.test.yaml', 'counts four words'), {
    type: 'promptforge',
    request: 'launch',
    name: 'Debug word-stats.test.yaml: counts four words',
    program: '/ws/word-stats.test.yaml',
    case: 'counts four words',
  });
  const access = { folder: '/ws', readText: (_file: string) => undefined };
  const base = { type: 'promptforge', request: 'launch', name: 'n' };
  // The adapter reads the test file and its prompt; the extension only checks the name.
  assert.deepEqual(resolveSubstituted({ ...base, program: 'a.test.yaml', case: 'one' }, access), {
    ok: true,
    config: { ...base, program: '/ws/a.test.yaml', case: 'one' },
  });
  assert.deepEqual(resolveSubstituted({ ...base, program: 'a.md', case: 'one' }, access), {
    ok: false,
    message: CASE_NEEDS_TEST_FILE,
  });
  const wrong = resolveConfiguration({ ...base, program: 'a.test.yaml', case: 3 as unknown as string }, undefined);
  assert.match(!wrong.ok ? wrong.message : '', /"case" must be a string/);
});

