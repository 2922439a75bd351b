import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveServer, serverArgs } from '../src/logic/binary.mts';

const files = new Set(['/usr/local/bin/promptforge', '/ws/target/release/promptforge', 'C:\\pf\\promptforge.exe']);
const isExecutable = (file: string) => files.has(file);

test('a bare name is looked up on PATH', () => {
  const found = resolveServer({ setting: '', envPath: '/usr/bin:/usr/local/bin', platform: 'linux', isExecutable });
  assert.deepEqual(found, { ok: true, path: '/usr/local/bin/promptforge' });
});

test('a path is taken relative to the workspace folder', () => {
  const found = resolveServer({
    setting: 'target/release/promptforge',
    envPath: '',
    workspaceFolder: '/ws',
    platform: 'linux',
    isExecutable,
  });
  assert.deepEqual(found, { ok: true, path: '/ws/target/release/promptforge' });
});

test('a missing binary gives a message naming it and the setting', () => {
  const missing = resolveServer({ setting: 'promptforge', envPath: '/usr/bin', platform: 'linux', isExecutable });
  assert.equal(missing.ok, false);
  assert.match(!missing.ok ? missing.message : '', /"promptforge" was not found \(not on PATH\).*promptforge\.server\.path/);
  const badPath = resolveServer({ setting: '/nowhere/pf', envPath: '', platform: 'linux', isExecutable });
  assert.match(!badPath.ok ? badPath.message : '', /"\/nowhere\/pf" was not found/);
});

test('the server arguments start with lsp and keep the extra strings', () => {
  assert.deepEqual(serverArgs(undefined), ['lsp']);
  assert.deepEqual(serverArgs(['--log', 'debug', 3]), ['lsp', '--log', 'debug']);
});
