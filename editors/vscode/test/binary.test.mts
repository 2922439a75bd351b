import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundledPath, resolveServer, serverArgs } from '../src/logic/binary.mts';

const bundled = '/ext/promptforge.promptforge-0.1.0-linux-x64/server/promptforge';
const files = new Set([
  '/usr/local/bin/promptforge',
  '/ws/target/release/promptforge',
  'C:\\pf\\promptforge.exe',
  bundled,
]);
const isExecutable = (file: string) => files.has(file);

test('the bundled binary is under server/, with .exe on Windows', () => {
  assert.equal(bundledPath('/ext/promptforge.promptforge-0.1.0-linux-x64', 'linux'), bundled);
  assert.equal(bundledPath('/ext/pf-darwin-arm64', 'darwin'), '/ext/pf-darwin-arm64/server/promptforge');
  assert.equal(bundledPath('C:\\ext\\pf-win32-x64', 'win32'), 'C:\\ext\\pf-win32-x64\\server\\promptforge.exe');
});

test('with no setting the bundled binary comes before PATH', () => {
  const found = resolveServer({ setting: '', bundled, envPath: '/usr/bin:/usr/local/bin', platform: 'linux', isExecutable });
  assert.deepEqual(found, { ok: true, path: bundled, source: 'bundled' });
  const blank = resolveServer({ setting: '  ', bundled, envPath: '/usr/local/bin', platform: 'linux', isExecutable });
  assert.deepEqual(blank, { ok: true, path: bundled, source: 'bundled' });
});

test('the universal package (no bundled binary) looks on PATH', () => {
  const found = resolveServer({ setting: '', envPath: '/usr/bin:/usr/local/bin', platform: 'linux', isExecutable });
  assert.deepEqual(found, { ok: true, path: '/usr/local/bin/promptforge', source: 'path' });
});

test('a bundled binary that cannot be run falls back to PATH', () => {
  const found = resolveServer({
    setting: '',
    bundled: '/ext/other/server/promptforge',
    envPath: '/usr/local/bin',
    platform: 'linux',
    isExecutable,
  });
  assert.deepEqual(found, { ok: true, path: '/usr/local/bin/promptforge', source: 'path' });
});

test('the setting comes before the bundled binary', () => {
  const byName = resolveServer({ setting: 'promptforge', bundled, envPath: '/usr/local/bin', platform: 'linux', isExecutable });
  assert.deepEqual(byName, { ok: true, path: '/usr/local/bin/promptforge', source: 'setting' });
  const missing = resolveServer({ setting: '/nowhere/pf', bundled, envPath: '/usr/local/bin', platform: 'linux', isExecutable });
  assert.equal(missing.ok, false, 'a setting naming a missing binary is an error, not a fallback');
});

test('a path is taken relative to the workspace folder', () => {
  const found = resolveServer({
    setting: 'target/release/promptforge',
    envPath: '',
    workspaceFolder: '/ws',
    platform: 'linux',
    isExecutable,
  });
  assert.deepEqual(found, { ok: true, path: '/ws/target/release/promptforge', source: 'setting' });
});

test('a missing binary gives a message naming it and the setting', () => {
  const missing = resolveServer({ setting: 'promptforge', envPath: '/usr/bin', platform: 'linux', isExecutable });
  assert.equal(missing.ok, false);
  assert.match(!missing.ok ? missing.message : '', /"promptforge" was not found \(not on PATH\).*promptforge\.server\.path/);
  const badPath = resolveServer({ setting: '/nowhere/pf', envPath: '', platform: 'linux', isExecutable });
  assert.match(!badPath.ok ? badPath.message : '', /"\/nowhere\/pf" was not found/);
  const none = resolveServer({ setting: '', bundled: '/ext/x/server/promptforge', envPath: '/usr/bin', platform: 'linux', isExecutable });
  assert.match(!none.ok ? none.message : '', /"promptforge" was not found \(not in the extension, not on PATH\)/);
});

test('the server arguments start with lsp and keep the extra strings', () => {
  assert.deepEqual(serverArgs(undefined), ['lsp']);
  assert.deepEqual(serverArgs(['--log', 'debug', 3]), ['lsp', '--log', 'debug']);
});
