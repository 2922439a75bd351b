// The shipped package.json and sources: no test-only command.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';

const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const internal = /promptforge\.internal\./;

test('package.json contributes no promptforge.internal.* command, menu entry, key or activation', () => {
  const contributes = manifest.contributes ?? {};
  const commands: string[] = (contributes.commands ?? []).map((c: { command: string }) => c.command);
  assert.deepEqual(commands.filter((c) => internal.test(c)), []);
  for (const [menu, entries] of Object.entries(contributes.menus ?? {})) {
    const named = (entries as { command?: string }[]).map((e) => e.command ?? '').filter((c) => internal.test(c));
    assert.deepEqual(named, [], `menu ${menu}`);
  }
  const keys = (contributes.keybindings ?? []).map((k: { command: string }) => k.command).filter((c: string) => internal.test(c));
  assert.deepEqual(keys, []);
  assert.deepEqual((manifest.activationEvents ?? []).filter((e: string) => internal.test(e)), []);
  // Nothing else in the file names one either.
  assert.doesNotMatch(JSON.stringify(manifest), internal);
});

test('every contributed command is one the extension registers for users', () => {
  const commands: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
  assert.deepEqual(commands.sort(), [
    'promptforge.clearRuns',
    'promptforge.debug',
    'promptforge.restartServer',
    'promptforge.runOffline',
    'promptforge.runPrompt',
    'promptforge.runTests',
    'promptforge.runWithArguments',
    'promptforge.stop',
  ]);
});

test('the PromptForge Runs view is in the Explorer, and its title actions are commands the extension contributes', () => {
  const views = manifest.contributes.views.explorer as { id: string; name: string }[];
  assert.deepEqual(views.map((v) => [v.id, v.name]), [['promptforge.runs', 'PromptForge Runs']]);
  const commands: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
  const actions = (manifest.contributes.menus['view/title'] as { command: string; when: string }[]).filter((m) =>
    m.when.includes('view == promptforge.runs'),
  );
  assert.deepEqual(actions.map((a) => a.command).sort(), ['promptforge.clearRuns', 'promptforge.runOffline']);
  for (const action of actions) assert.ok(commands.includes(action.command), action.command);
});

test('the sources register no promptforge.internal.* command', () => {
  const sources = fs.readdirSync(new URL('../src/', import.meta.url), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.m?ts$/.test(f));
  assert.ok(sources.length > 5);
  for (const file of sources) {
    const text = fs.readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8');
    assert.doesNotMatch(text, internal, file);
  }
});

test('the server path setting is empty by default (the bundled binary, then PATH)', () => {
  const setting = manifest.contributes.configuration.properties['promptforge.server.path'];
  assert.equal(setting.default, '');
  assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('promptforge.server.path'));
});
