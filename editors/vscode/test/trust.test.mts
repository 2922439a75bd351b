import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import {
  initializationOptions,
  refusal,
  restrictedMessage,
  RESTRICTED_SETTINGS,
  TRUSTED_COMMANDS,
  type TrustedCommand,
} from '../src/logic/trust.mts';

const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const trustedCommands = Object.keys(TRUSTED_COMMANDS) as TrustedCommand[];

test('the server is told whether the workspace is trusted', () => {
  assert.deepEqual(initializationOptions(true), { trusted: true });
  assert.deepEqual(initializationOptions(false), { trusted: false });
  assert.deepEqual(initializationOptions(true, ' '), { trusted: true });
  assert.deepEqual(initializationOptions(false, 'https://example.org/pf/'), {
    trusted: false,
    bookUrl: 'https://example.org/pf/',
  });
});

test('in Restricted Mode the run and debug commands are refused with a message that says why', () => {
  for (const command of trustedCommands) {
    assert.equal(refusal(true, command), undefined, command);
    const message = refusal(false, command);
    assert.equal(message, restrictedMessage(command));
    assert.match(message ?? '', /Restricted Mode/);
    assert.match(message ?? '', /promptforge\.toml/);
    assert.match(message ?? '', /Trust the workspace/);
  }
  assert.match(restrictedMessage('promptforge.runPrompt'), /cannot run a prompt/);
  assert.match(restrictedMessage('promptforge.runTests'), /cannot run prompt tests/);
  assert.match(restrictedMessage('promptforge.debug'), /cannot debug a prompt/);
});

test('package.json declares limited support and keeps the server settings from an untrusted workspace', () => {
  const untrusted = manifest.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  assert.match(untrusted.description, /Restricted Mode/);
  assert.deepEqual(untrusted.restrictedConfigurations, RESTRICTED_SETTINGS);
  assert.ok(RESTRICTED_SETTINGS.includes('promptforge.bookUrl'), 'the links of every diagnostic');
  for (const setting of RESTRICTED_SETTINGS) {
    assert.ok(manifest.contributes.configuration.properties[setting], `${setting} is a setting`);
  }
});

/** `text` split at `separator` where it is outside parentheses, trimmed. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i).trim());
      start = i + separator.length;
      i += separator.length - 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** True when the `when` clause is false whenever `isWorkspaceTrusted` is. */
function requiresTrust(when: string | undefined): boolean {
  if (!when) return false;
  return splitTopLevel(when, '||').every((alternative) => splitTopLevel(alternative, '&&').includes('isWorkspaceTrusted'));
}

test('the when-clause check reads precedence right', () => {
  assert.equal(requiresTrust('isWorkspaceTrusted && (a || b)'), true);
  assert.equal(requiresTrust('isWorkspaceTrusted && a || b'), false);
  assert.equal(requiresTrust('a && isWorkspaceTrusted'), true);
  assert.equal(requiresTrust('!isWorkspaceTrusted && a'), false);
  assert.equal(requiresTrust('editorLangId == promptforge'), false);
  assert.equal(requiresTrust(undefined), false);
});

test('every menu entry of a run or debug command is hidden in Restricted Mode', () => {
  const declared = manifest.contributes.commands.map((c: { command: string }) => c.command);
  for (const command of trustedCommands) {
    assert.ok(declared.includes(command), `${command} is declared`);
    const menus: string[] = [];
    for (const [menu, items] of Object.entries(manifest.contributes.menus) as [string, { command: string; when?: string }[]][]) {
      for (const item of items.filter((i) => i.command === command)) {
        menus.push(menu);
        assert.ok(requiresTrust(item.when), `${menu} ${command}: "${item.when}" shows it in Restricted Mode`);
      }
    }
    // Each is in the editor title and the command palette (Run Offline also in
    // the editor's context menu and the Runs view's title).
    assert.ok(menus.includes('editor/title') && menus.includes('commandPalette'), `${command}: ${menus.join(', ')}`);
  }
  const offline = Object.values(manifest.contributes.menus as Record<string, { command: string }[]>)
    .flat()
    .filter((i) => i.command === 'promptforge.runOffline').length;
  assert.equal(offline, 4);
});

test('the Runs view welcome offers Run Offline only where it may run', () => {
  const welcome = (manifest.contributes.viewsWelcome as { view: string; contents: string; when?: string }[]).filter(
    (w) => w.view === 'promptforge.runs',
  );
  assert.ok(welcome.length > 0);
  for (const entry of welcome.filter((w) => w.contents.includes('command:promptforge.runOffline'))) {
    assert.ok(requiresTrust(entry.when), `"${entry.when}" offers Run Offline in Restricted Mode`);
  }
});
