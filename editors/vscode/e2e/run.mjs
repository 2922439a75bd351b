// The end-to-end test: the platform .vsix (the extension with its own
// `promptforge` binary) in real VS Code (code-server in headless Chromium,
// driven by playwright-core), with no `promptforge.server.path` set and no
// `promptforge` on PATH: the server and the debugger must run from the
// binary the package carries. It reads the editor's state through requests
// the extension answers when PROMPTFORGE_E2E_DIR is set (see src/e2e.ts) and
// takes screenshots into $PROMPTFORGE_ARTIFACTS. A last session installs the
// universal .vsix (no binary) and finds the server on PATH.
//
// Env: PROMPTFORGE_VSIX (default editors/vscode/promptforge-TARGET-VERSION.vsix,
// TARGET this machine's, e.g. linux-x64), PROMPTFORGE_UNIVERSAL_VSIX (default
// editors/vscode/promptforge-VERSION.vsix), PROMPTFORGE_ARTIFACTS (default
// target/editor-artifacts/vscode), PF_EDITORS_CACHE (where ci.sh installed
// code-server and playwright-core).

import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionDir = path.resolve(here, '..');
const root = path.resolve(extensionDir, '../..');
const artifacts = path.resolve(process.env.PROMPTFORGE_ARTIFACTS ?? path.join(root, 'target/editor-artifacts/vscode'));
const cache = path.resolve(process.env.PF_EDITORS_CACHE ?? path.join(root, 'target/editors'));
const { version } = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
const target = `${process.platform}-${process.arch}`;
const vsix = path.resolve(process.env.PROMPTFORGE_VSIX ?? path.join(extensionDir, `promptforge-${target}-${version}.vsix`));
const universalVsix = path.resolve(process.env.PROMPTFORGE_UNIVERSAL_VSIX ?? path.join(extensionDir, `promptforge-${version}.vsix`));
const tools = path.join(cache, 'e2e-tools');
const { chromium } = createRequire(path.join(tools, 'package.json'))('playwright-core');
const codeServer = path.join(tools, 'node_modules/code-server/out/node/entry.js');

const work = path.join(cache, 'e2e-run');
const dirs = {
  user: path.join(work, 'user-data'),
  extensions: path.join(work, 'extensions'),
  workspace: path.join(work, 'workspace'),
  rpc: path.join(work, 'rpc'),
  // The Workspace Trust session: its own user data (no folder trusted yet) and folder.
  restrictedUser: path.join(work, 'user-data-restricted'),
  restricted: path.join(work, 'restricted'),
  // The universal package's session: its own extensions, user data, and a
  // folder on PATH that holds the binary.
  universalExtensions: path.join(work, 'extensions-universal'),
  universalUser: path.join(work, 'user-data-universal'),
  pathBin: path.join(work, 'path-bin'),
};
// The binary the platform package carries, once installed (main sets it).
let bin;
// The extension host's PATH: this one without any folder that holds a
// `promptforge` (the test must find the server without it).
const { path: cleanPath, dropped: droppedFromPath } = pathWithoutPromptforge(process.env.PATH ?? '');
// Files left by programs that must not start while the restricted folder is
// not trusted: the server binary its .vscode/settings.json names, and the
// program of the Plugin its promptforge.toml declares.
const marks = {
  wrapper: path.join(work, 'workspace-server-path-used'),
  plugin: path.join(work, 'workspace-plugin-started'),
};
// The folder the running code-server opened (openPrompt and lineOf read it).
let folder = dirs.workspace;
const config = path.join(work, 'config.yaml');
// code-server, VS Code and Chromium write logs and ids under these, and the
// server reads its user configuration and the records of `promptforge trust`
// there: keep them in the run's folder, out of ~/.config, ~/.local and ~/.cache.
for (const [name, dir] of [['XDG_CONFIG_HOME', 'xdg/config'], ['XDG_DATA_HOME', 'xdg/data'], ['XDG_CACHE_HOME', 'xdg/cache'],
  ['XDG_STATE_HOME', 'xdg/state']]) {
  process.env[name] = path.join(work, dir);
}
const started = Date.now();

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function pathWithoutPromptforge(value) {
  const folders = value.split(':').filter((f) => f !== '');
  const dropped = folders.filter((f) => isExecutableFile(path.join(f, 'promptforge')));
  return { path: folders.filter((f) => !dropped.includes(f)).join(':'), dropped };
}

function log(message) {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

/** Polls `check` until it returns a truthy value; fails after `timeoutMs`. */
async function waitFor(what, check, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(last?.stack ?? JSON.stringify(last))}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const prompt = (name, frontmatter, body) =>
  `---\nname: ${name}\ndescription: ${name} for the e2e test\npromptforge: 0\n${frontmatter}---\n\n# ${name}\n\n${body}`;

/** The workspace: two examples, the tools' Host config and three prompts of its own. */
function makeWorkspace() {
  fs.rmSync(work, { recursive: true, force: true });
  Object.values(dirs).forEach((dir) => fs.mkdirSync(dir, { recursive: true }));
  fs.mkdirSync(path.join(dirs.user, 'User'), { recursive: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const ws = dirs.workspace;
  for (const file of ['word-stats.md', 'word-stats.test.yaml']) fs.copyFileSync(path.join(root, 'examples', file), path.join(ws, file));
  for (const file of ['promptforge.toml', 'page-fetcher.md']) fs.copyFileSync(path.join(root, 'examples/tools', file), path.join(ws, file));
  // The Testing view's failure: a case of word-stats that expects a wrong result
  // (a fixture of this test, not an example).
  fs.writeFileSync(
    path.join(ws, 'word-stats-wrong.test.yaml'),
    'prompt: word-stats.md\ncases:\n  - name: expects a wrong count\n    args: "one two"\n    expect:\n      result: "3 words"\n',
  );
  fs.writeFileSync(
    path.join(ws, 'broken.md'),
    prompt('broken', 'plugins:\n  - promptforge/web\ntools:\n  grab: promptforge/web/fetchh\n', "```lua\nreturn tools.call('grab', { url = args })\n```\n"),
  );
  // The loop runs in a folder whose Host config lifts the instruction budget,
  // so only the Stop ends it.
  fs.mkdirSync(path.join(ws, 'spin'));
  fs.writeFileSync(path.join(ws, 'spin/promptforge.toml'), '[limits]\nlua_instructions = 1000000000000000\n');
  fs.writeFileSync(path.join(ws, 'spin/loop.pf.md'), prompt('loop', '', '## Go\n\n```lua\nwhile true do end\n```\n'));
  // The Runs view's prompt: examples/ticket-triage.md, whose labels resolve
  // to a Host model that needs a key nobody set, so only Run Offline runs it.
  fs.mkdirSync(path.join(ws, 'triage'));
  fs.copyFileSync(path.join(root, 'examples/ticket-triage.md'), path.join(ws, 'triage/ticket-triage.md'));
  fs.writeFileSync(path.join(ws, 'triage/promptforge.toml'),
    'default_model = "cloud"\n\n[model.cloud]\nprovider = "anthropic"\nmodel = "claude-sonnet-4-5"\napi_key_env = "PF_E2E_KEY_NOBODY_SET"\n');
  fs.writeFileSync(path.join(ws, 'ask.pf.md'), prompt('ask', '', "```lua\nreturn 'answer: ' .. input.ask('Your name?')\n```\n"));
  // The prompt the debugger stops in (a folder of its own whose Host config
  // lifts the instruction budget, so a slow machine never ends the run early).
  fs.mkdirSync(path.join(ws, 'debug'));
  fs.writeFileSync(path.join(ws, 'debug/promptforge.toml'), '[limits]\nlua_instructions = 100000000000\n');
  fs.writeFileSync(path.join(ws, 'debug/words.pf.md'), prompt('words', '', [
    '## Count', '', '```lua',
    'local words = {}',
    "for word in string.gmatch('the quick brown fox', '%a+') do",
    '  words[#words + 1] = word',
    'end',
    'var.count = #words',
    'var.first = words[1]',
    "return var.count .. ' words, the first: ' .. var.first",
    '```', ''].join('\n')));
  fs.writeFileSync(config, 'auth: none\ncert: false\n');
  const settings = {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'editor.hover.delay': 200,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    // Every message to and from the server goes to its output channel, which
    // VS Code keeps as a log file: a failure prints the end of it.
    'promptforge.trace.server': 'verbose',
    // No promptforge.server.path: the extension finds its own binary.
  };
  fs.writeFileSync(path.join(dirs.user, 'User/settings.json'), JSON.stringify(settings, null, 2));
  // The Workspace Trust session: trust on, no question at start (the folder
  // opens in Restricted Mode).
  fs.mkdirSync(path.join(dirs.restrictedUser, 'User'), { recursive: true });
  const restrictedSettings = {
    ...settings,
    'security.workspace.trust.enabled': true,
    'security.workspace.trust.startupPrompt': 'never',
  };
  fs.writeFileSync(path.join(dirs.restrictedUser, 'User/settings.json'), JSON.stringify(restrictedSettings, null, 2));
  fs.mkdirSync(path.join(dirs.universalUser, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.universalUser, 'User/settings.json'), JSON.stringify(settings, null, 2));
}

/**
 * The folder opened in Restricted Mode: a promptforge.toml whose Plugin's
 * program leaves a file, a .vscode/settings.json whose server binary (a
 * wrapper of the extension's own) leaves a file too, a prompt with an error,
 * a prompt to run and a prompt that declares the Plugin.
 */
function makeRestrictedWorkspace() {
  const ws = dirs.restricted;
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'promptforge.toml'),
    `# Starts a program: only when this file is trusted.\n[plugin."acme/marker"]\ncommand = "sh"\nargs = ["-c", "touch '${marks.plugin}'"]\n`);
  const wrapper = path.join(ws, 'server-wrapper.sh');
  fs.writeFileSync(wrapper, `#!/bin/sh\ntouch '${marks.wrapper}'\nexec '${bin}' "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(ws, '.vscode/settings.json'), JSON.stringify({ 'promptforge.server.path': wrapper }, null, 2));
  fs.writeFileSync(
    path.join(ws, 'broken.md'),
    prompt('broken', 'plugins:\n  - promptforge/web\ntools:\n  grab: promptforge/web/fetchh\n', "```lua\nreturn tools.call('grab', { url = args })\n```\n"),
  );
  fs.writeFileSync(path.join(ws, 'hello.pf.md'), prompt('hello', '', "```lua\nreturn 'hello from a trusted folder'\n```\n"));
  fs.writeFileSync(path.join(ws, 'marker.md'), prompt('marker', 'plugins:\n  - acme/marker\n', "```lua\nreturn 'marker'\n```\n"));
}

const commonArgs = (userData = dirs.user, extensions = dirs.extensions) =>
  ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];

/** Installs a .vsix into `extensions`; returns the extension's installed folder. */
function install(file, extensions) {
  execFileSync(process.execPath, [codeServer, ...commonArgs(dirs.user, extensions), '--install-extension', file], { stdio: 'inherit' });
  const installed = fs.readdirSync(extensions).filter((name) => name.startsWith('promptforge.promptforge-'));
  if (installed.length !== 1) throw new Error(`installed in ${extensions}: ${JSON.stringify(fs.readdirSync(extensions))}`);
  return path.join(extensions, installed[0]);
}

async function main() {
  for (const file of [vsix, universalVsix]) if (!fs.existsSync(file)) throw new Error(`no .vsix at ${file}`);
  makeWorkspace();
  if (droppedFromPath.length > 0) log(`left off PATH (they hold a promptforge): ${droppedFromPath.join(', ')}`);
  const installed = install(vsix, dirs.extensions);
  bin = path.join(installed, 'server/promptforge');
  if (!isExecutableFile(bin)) throw new Error(`the installed platform package has no executable ${bin}`);
  log(`extension installed: ${path.basename(installed)}, with ${path.relative(installed, bin)}`);
  makeRestrictedWorkspace();
  // Workspace Trust off (every folder trusted): the editor's features.
  await inCodeServer({ name: 'trusted', userData: dirs.user, open: dirs.workspace, trust: false }, checks);
  // Workspace Trust on, the folder not trusted, then trusted.
  await inCodeServer({ name: 'restricted', userData: dirs.restrictedUser, open: dirs.restricted, trust: true }, restrictedMode);
  // The universal package: no binary of its own, the server from PATH.
  const universal = install(universalVsix, dirs.universalExtensions);
  if (fs.existsSync(path.join(universal, 'server'))) throw new Error(`the universal package has a server folder: ${universal}`);
  fs.symlinkSync(bin, path.join(dirs.pathBin, 'promptforge'));
  await inCodeServer({
    name: 'universal', userData: dirs.universalUser, extensions: dirs.universalExtensions, open: dirs.workspace, trust: false,
    envPath: `${dirs.pathBin}:${cleanPath}`,
  }, universalPackage);
  log('all checks passed');
}

/**
 * Runs `body(page)` in a code-server of its own that opens the folder `open`
 * (with Workspace Trust when `trust`), in headless Chromium.
 */
async function inCodeServer({ name, userData, extensions = dirs.extensions, open, trust, envPath = cleanPath }, body) {
  folder = open;
  // Each session answers in a folder of its own.
  rpcDir = path.join(dirs.rpc, name);
  fs.mkdirSync(rpcDir, { recursive: true });
  const port = await freePort();
  const server = spawn(
    process.execPath,
    [codeServer, ...commonArgs(userData, extensions), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
      '--disable-update-check', ...(trust ? [] : ['--disable-workspace-trust']), '--disable-getting-started-override', open],
    {
      // VSCODE_CLI=1: VS Code's server hands the extension host this
      // environment as it is, not a login shell's (whose profile would set
      // PATH again).
      env: { ...process.env, PATH: envPath, VSCODE_CLI: '1', PROMPTFORGE_E2E_DIR: rpcDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const serverLog = fs.createWriteStream(path.join(work, `code-server-${name}.log`));
  server.stdout.pipe(serverLog);
  server.stderr.pipe(serverLog);
  let browser;
  try {
    await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    log(`code-server up on port ${port}`);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(open)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    log(`workbench up (${name})`);
    try {
      await body(page);
    } catch (error) {
      await page.screenshot({ path: path.join(artifacts, `failure-${name}.png`) }).catch(() => undefined);
      throw error;
    }
    log(`${name}: all checks passed`);
  } finally {
    await browser?.close().catch(() => undefined);
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {}
  }
}

/**
 * Runs a command from the command palette by its exact title (or, with
 * `run` false, only waits until the palette offers it). Keys go to whatever
 * has the focus, so each key is pressed only while the palette's input has it;
 * when something takes the focus away (a debug session that stops focuses its
 * editor), the palette is opened again.
 */
async function palette(page, title, { timeout = 15000, run = true } = {}) {
  const input = page.locator('.quick-input-widget input');
  const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const label = (row) => row.locator('.label-name').first().innerText({ timeout: 1000 }).catch(() => '');
  const inputFocused = () => input.evaluate((element) => element === document.activeElement).catch(() => false);
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Shift+P');
      await input.waitFor({ state: 'visible' });
      await input.fill('>' + title, { timeout: 5000 });
      await page.locator('.quick-input-list .monaco-list-row .label-name', { hasText: exact }).first().waitFor({ state: 'visible', timeout });
      if (!run) {
        await page.keyboard.press('Escape');
        return;
      }
      for (let tries = 0; tries < 20 && (await inputFocused()); tries++) {
        const focused = page.locator('.quick-input-list .monaco-list-row.focused');
        const selected = exact.test((await label(focused)).trim());
        if (!(await inputFocused())) break;
        if (selected) {
          await page.keyboard.press('Enter');
          return;
        }
        await page.keyboard.press('ArrowDown');
      }
      throw new Error(`the palette did not select ${title}`);
    } catch (error) {
      if (!run || attempt >= 3) throw error;
    }
    log(`the palette lost the focus before running ${title}: opening it again`);
  }
}

let rpcId = 0;
// The folder of the running session's requests (PROMPTFORGE_E2E_DIR).
let rpcDir;
/**
 * Asks the extension (src/e2e.ts) for something: writes the request file the
 * extension watches, and waits for its answer.
 */
async function rpc(page, request, timeoutMs = 15000) {
  const id = ++rpcId;
  const response = path.join(rpcDir, 'response.json');
  fs.rmSync(response, { force: true });
  const temporary = path.join(rpcDir, 'request.json.tmp');
  fs.writeFileSync(temporary, JSON.stringify({ id, ...request }));
  fs.renameSync(temporary, path.join(rpcDir, 'request.json'));
  const answer = await waitFor(`the answer to ${JSON.stringify(request)}`, () => {
    if (!fs.existsSync(response)) return undefined;
    const parsed = JSON.parse(fs.readFileSync(response, 'utf8'));
    return parsed.id === id ? parsed : undefined;
  }, timeoutMs);
  if (answer.error) throw new Error(`${request.op}: ${answer.error}`);
  return answer.result;
}

/**
 * Waits for the extension to activate (it answers requests), then for its
 * server to run; returns the server's state (src/e2e.ts `trust`). Fails when
 * the extension host's PATH holds a `promptforge`, unless `pathAllowed`.
 */
async function serverStarted(page, { pathAllowed = false } = {}) {
  const hostPath = (await rpc(page, { op: 'env' }, 90000)).PATH ?? '';
  log(`extension active; its host's PATH: ${hostPath}`);
  const onPath = pathWithoutPromptforge(hostPath).dropped;
  if (!pathAllowed && onPath.length > 0) throw new Error(`the extension host's PATH holds a promptforge: ${onPath.join(', ')}`);
  return waitFor('the server to start', async () => {
    const state = await rpc(page, { op: 'trust' });
    return state.serverRunning ? state : undefined;
  });
}

const samePath = (a, b) => typeof a === 'string' && typeof b === 'string' && fs.realpathSync(a) === fs.realpathSync(b);

/** Fails unless the server runs from the binary the platform package carries. */
function expectBundled(state) {
  if (state.serverSource !== 'bundled' || !samePath(state.serverBinary, bin)) {
    throw new Error(`the server does not run from the extension's own binary ${bin}: ${JSON.stringify(state)}`);
  }
}

async function output(page) {
  return rpc(page, { op: 'output' });
}

async function shot(page, name) {
  const file = path.join(artifacts, name);
  await page.screenshot({ path: file });
  log(`screenshot ${file}`);
  return file;
}

/** The titles of the code lenses on one line of a workspace file. */
async function lensTitles(page, full, line) {
  return (await rpc(page, { op: 'codeLenses', path: full, line })).map((lens) => lens.title);
}

/** The `promptforge` debug sessions the extension saw, and the active one. */
async function debugState(page) {
  return rpc(page, { op: 'debugState' });
}

async function openPrompt(page, file, line = 0, character = 0) {
  const full = path.join(folder, file);
  await rpc(page, { op: 'open', path: full, line, character });
  await waitFor(`${file} to get the promptforge language`, async () => {
    const state = await rpc(page, { op: 'state' });
    return state.uri?.endsWith('/' + file) && state.languageId === 'promptforge';
  });
  return full;
}

/** The zero-based line of a workspace file that matches `pattern`. */
function lineOf(file, pattern) {
  const line = fs.readFileSync(path.join(folder, file), 'utf8').split('\n').findIndex((l) => pattern.test(l));
  if (line < 0) throw new Error(`no line of ${file} matches ${pattern}`);
  return line;
}

async function checks(page) {
  // No setting, nothing on PATH: the server runs from the extension's binary.
  const trust = await serverStarted(page);
  expectBundled(trust);
  log(`the server runs from the extension's own binary (${trust.serverBinary}), with nothing on PATH and no setting`);
  // Workspace Trust is off: every folder counts as trusted, and the server was told so.
  if (trust.workspaceTrusted !== true || trust.serverTrusted !== true) throw new Error(`trust: ${JSON.stringify(trust)}`);
  log('trust off: the server was told trusted = true');

  // 1. A prompt with errors: its diagnostics in the Problems data and panel.
  const broken = await openPrompt(page, 'broken.md', 7, 8);
  const diagnostics = await waitFor('the diagnostics of broken.md', async () => {
    const list = await rpc(page, { op: 'diagnostics', path: broken });
    return list.some((d) => d.code === 'RequirementsUnmet') ? list : undefined;
  });
  const unmet = diagnostics.find((d) => d.code === 'RequirementsUnmet');
  if (unmet.range.start.line !== 7 || !unmet.message.includes('promptforge/web/fetchh')) {
    throw new Error(`unexpected diagnostic ${JSON.stringify(unmet)}`);
  }
  log(`diagnostic at line ${unmet.range.start.line + 1}: ${unmet.message}`);
  await rpc(page, { op: 'command', command: 'workbench.actions.view.problems' });
  await page.locator('.markers-panel', { hasText: 'promptforge/web/fetchh' }).first().waitFor({ state: 'visible' });
  await shot(page, 'problems.png');

  // 2. Hover on an alias: the web Plugin's fetch tool and its catalog description.
  const aliasLine = lineOf('page-fetcher.md', /^  fetch:/);
  const fetcher = await openPrompt(page, 'page-fetcher.md', aliasLine, 3);
  const hover = await waitFor('a hover on the alias fetch', async () => {
    const texts = await rpc(page, { op: 'hover', path: fetcher, line: aliasLine, character: 3 });
    return texts.find((t) => t.includes('Fetch one web page by its http or https URL'));
  });
  log(`hover: ${hover.split('\n')[0]}`);
  await rpc(page, { op: 'command', command: 'editor.action.showHover' });
  await page.locator('.monaco-hover', { hasText: 'Fetch one web page' }).first().waitFor({ state: 'visible' });
  await shot(page, 'hover.png');
  await page.keyboard.press('Escape');

  // 3. Run with arguments (the input box), the result in the output channel.
  await openPrompt(page, 'word-stats.md');
  await palette(page, 'PromptForge: Run with Arguments…');
  const input = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'The argument string of the run' }).waitFor({ state: 'visible' });
  await input.fill('The quick brown fox');
  await input.press('Enter');
  await waitFor('the run result in the output channel', async () =>
    (await output(page)).includes('4 words, 16 letters, 4.0 letters per word'));
  await page.locator('.output-view, .monaco-editor', { hasText: '4 words, 16 letters' }).first().waitFor({ state: 'visible' });
  await shot(page, 'run-output.png');
  log('run result in the output channel');

  // 4. Run the tests: the summary.
  await openPrompt(page, 'word-stats.md');
  await palette(page, 'PromptForge: Run Tests');
  await waitFor('the test summary', async () => (await output(page)).includes('5 passed, 0 failed'), 60000);
  log('test summary in the output channel');

  // 4b. A test file is served too: Run Tests from it, and a `Run test` lens's
  // command (promptforge.test with a case) through the client.
  const tests = path.join(dirs.workspace, 'word-stats.test.yaml');
  await rpc(page, { op: 'open', path: tests });
  await waitFor('the test file to be active', async () => (await rpc(page, { op: 'state' })).uri?.endsWith('/word-stats.test.yaml'));
  await palette(page, 'PromptForge: Run Tests');
  await waitFor('the test file run', async () => (await output(page)).includes('▶ Test word-stats.test.yaml'), 60000);
  const uri = (await rpc(page, { op: 'state' })).uri;
  await rpc(page, { op: 'command', command: 'promptforge.test', args: [{ uri, case: 'counts four words' }] });
  await waitFor('the one-case run', async () =>
    /▶ Test word-stats.test.yaml \(case "counts four words"\)[^▶]*1 passed, 0 failed/.test(await output(page)), 60000);
  log('test file runs: all cases and one case');

  // 5. promptforge/ask answered with an input box.
  await openPrompt(page, 'ask.pf.md');
  await palette(page, 'PromptForge: Run');
  await page.locator('.quick-input-widget', { hasText: 'Your name?' }).waitFor({ state: 'visible' });
  await input.fill('Ada');
  await input.press('Enter');
  await waitFor('the answer in the result', async () => (await output(page)).includes('answer: Ada'));
  log('input.ask answered');

  // 6. Stop a run that loops forever: the Cancelled failure. Its progress
  // notification is the server's work-done progress: the title `Running loop`
  // (the prompt's name; the extension itself would name the file) and the
  // report `section: Go`, and no status-bar progress of the client for it.
  const progressToast = page.locator('.notification-toast', { hasText: 'Running loop' }).filter({ hasText: 'section: Go' }).first();
  await openPrompt(page, 'spin/loop.pf.md');
  await palette(page, 'PromptForge: Run');
  await waitFor('the loop run to start', async () => (await output(page)).includes('▶ Run loop.pf.md'));
  await page.locator('.statusbar-item', { hasText: 'PromptForge: 1 run' }).first().waitFor({ state: 'visible' });
  await progressToast.waitFor({ state: 'visible' });
  const toastText = (await progressToast.innerText()).replace(/\s+/g, ' ');
  if (toastText.includes('loop.pf.md')) throw new Error(`the progress notification is not the server's: ${toastText}`);
  if ((await page.locator('.statusbar-item', { hasText: 'Running loop' }).count()) !== 0) {
    throw new Error('the server progress shows in the status bar too');
  }
  log(`the server's progress notification: ${toastText}`);
  await shot(page, 'run-progress.png');
  await palette(page, 'PromptForge: Stop');
  await waitFor('the Cancelled failure', async () => /✘ Failed: Cancelled/.test(await output(page)));
  await progressToast.waitFor({ state: 'hidden' });
  log('the loop run was stopped, its progress notification closed');

  // 7. The Cancel button of the server's progress notification cancels a run
  // too (window/workDoneProgress/cancel).
  await palette(page, 'PromptForge: Run');
  await progressToast.waitFor({ state: 'visible' });
  await progressToast.getByRole('button', { name: 'Cancel' }).click();
  await waitFor('a second Cancelled failure', async () =>
    ((await output(page)).match(/✘ Failed: Cancelled/g) ?? []).length === 2);
  log('the progress notification cancelled the run');

  // 8. The PromptForge Runs view and Run Offline (preview).
  await runsView(page);
  await testingView(page);

  // 9. The debugger (promptforge dap).
  await debugging(page);

  // 10. The settings: a binary that is not there gives the error with the
  // install instructions (the server's start, and a debug start too); removing
  // the setting brings back the extension's own binary, and Restart Server
  // restarts it.
  const unmetIn = async (file) =>
    (await rpc(page, { op: 'diagnostics', path: file })).some((d) => d.code === 'RequirementsUnmet');
  await rpc(page, { op: 'setting', key: 'promptforge.server.path', value: '/nowhere/promptforge' });
  const missing = page.locator('.notification-toast', { hasText: '"/nowhere/promptforge" was not found' }).first();
  await missing.waitFor({ state: 'visible' });
  await waitFor('the stopped server to take its diagnostics away', async () => !(await unmetIn(broken)));
  // Its Install Instructions open the packaged README (readme.md) in the preview.
  await missing.getByRole('button', { name: 'Install Instructions' }).click();
  const readmeTab = page.locator('.tabs-container .tab', { hasText: /Preview readme\.md/i }).first();
  await readmeTab.waitFor({ state: 'visible' });
  await rpc(page, { op: 'command', command: 'workbench.action.closeActiveEditor' });
  await readmeTab.waitFor({ state: 'hidden' });
  log('a missing binary is reported; Install Instructions open the README');
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await missing.waitFor({ state: 'hidden' });
  const sessionsBefore = (await debugState(page)).sessions.length;
  const started = await rpc(page, { op: 'command', command: 'promptforge.debug', args: [{ uri: vscodeUri(path.join(dirs.workspace, 'debug/words.pf.md')) }] });
  await missing.waitFor({ state: 'visible' });
  const after = await debugState(page);
  if (started !== false || after.sessions.length !== sessionsBefore || after.active) {
    throw new Error(`a debug start with no binary went on: ${started} ${JSON.stringify(after)}`);
  }
  log('a debug start with a missing binary is reported the same way and starts nothing');
  await rpc(page, { op: 'setting', key: 'promptforge.server.path', value: null });
  // The server starts again from the extension's binary; broken.md, brought
  // back to the front (a tab left long ago may have let its document go), gets
  // its diagnostics from it. A failure says what the extension saw.
  const serverBack = async (what) => {
    await waitFor(`${what}: the server running`, async () => (await rpc(page, { op: 'trust' })).serverRunning, 60000);
    await openPrompt(page, 'broken.md', 7, 8);
    await waitFor(`${what}: the diagnostics of broken.md`, () => unmetIn(broken), 60000).catch(async (error) => {
      const state = await rpc(page, { op: 'trust' });
      const list = await rpc(page, { op: 'diagnostics', path: broken });
      throw new Error(`${error.message}; the extension: ${JSON.stringify(state)}; broken.md: ${JSON.stringify(list)}`);
    });
    expectBundled(await rpc(page, { op: 'trust' }));
  };
  await serverBack('the setting removed');
  await palette(page, 'PromptForge: Restart Server');
  await serverBack('Restart Server');
  expectBundled(await rpc(page, { op: 'trust' }));
  log('the server restarts on a settings change (the setting removed: the extension\'s binary again) and on Restart Server');
  fs.writeFileSync(path.join(artifacts, 'output.txt'), await output(page));
}

/**
 * Workspace Trust on and the folder not trusted (Restricted Mode): the server
 * is told trusted = false and started from the user's binary, not the one the
 * folder's settings name; a prompt's diagnostics show; no Run lens, no Run
 * button or palette entry; the run commands are refused by the extension and
 * by the server; a debug start meets VS Code's trust question and, cancelled,
 * starts nothing; the Plugin of the folder's promptforge.toml is not started
 * (an Information diagnostic says so). Then trust is granted in the Workspace
 * Trust editor: the server restarts trusted (from the folder's binary now),
 * the Plugin's program is started, and the Run lens and button are there and
 * a run works.
 */
async function restrictedMode(page) {
  const state = await serverStarted(page);
  if (state.workspaceTrusted !== false || state.serverTrusted !== false) throw new Error(`trust: ${JSON.stringify(state)}`);
  if (fs.existsSync(marks.wrapper)) throw new Error("the folder's promptforge.server.path was run in Restricted Mode");
  expectBundled(state);
  log('Restricted Mode: the server was told trusted = false, and started from the extension\'s binary, not the folder\'s setting');

  // The diagnostics of a prompt with an error.
  const broken = await openPrompt(page, 'broken.md');
  await waitFor('the diagnostics of broken.md', async () =>
    (await rpc(page, { op: 'diagnostics', path: broken })).some((d) => d.code === 'RequirementsUnmet'));
  log('Restricted Mode: the diagnostics of broken.md');

  // The Plugin of the untrusted promptforge.toml: one Information diagnostic
  // on its plugins: entry, and its program not started.
  const marker = await openPrompt(page, 'marker.md');
  const entry = lineOf('marker.md', /^  - acme\/marker/);
  const info = await waitFor('the diagnostic on the untrusted Plugin', async () => {
    const found = (await rpc(page, { op: 'diagnostics', path: marker })).filter((d) => d.message.includes('not trusted'));
    return found.length > 0 ? found : undefined;
  });
  if (info.length !== 1 || info[0].severity !== 'Information' || info[0].range.start.line !== entry) {
    throw new Error(`the untrusted Plugin's diagnostics: ${JSON.stringify(info)}`);
  }
  if (fs.existsSync(marks.plugin)) throw new Error("the untrusted promptforge.toml's Plugin was started");
  log(`Restricted Mode: the Plugin is not started: ${info[0].message}`);

  // No Run lens (the server offers none), no Run button, no palette entry.
  const hello = await openPrompt(page, 'hello.pf.md');
  const helloTitle = lineOf('hello.pf.md', /^# /);
  const restrictedLenses = await lensTitles(page, hello, helloTitle);
  if (restrictedLenses.some((t) => ['Run', 'Debug', 'Run with arguments…', 'Run tests'].includes(t))) {
    throw new Error(`run lenses in Restricted Mode: ${JSON.stringify(restrictedLenses)}`);
  }
  const runButton = page.locator('.editor-actions .action-label[aria-label="Run"]');
  if ((await runButton.count()) !== 0) throw new Error('the Run button shows in Restricted Mode');
  const offered = await paletteTitles(page, 'PromptForge: ', 'PromptForge: Restart Server');
  const hidden = offered.filter((t) => /^PromptForge: (Run|Debug|Run with Arguments…|Run Offline \(Preview\)|Run Tests)$/.test(t));
  if (hidden.length > 0) throw new Error(`the palette offers ${hidden.join(', ')} in Restricted Mode`);
  log(`Restricted Mode: no run lens (${JSON.stringify(restrictedLenses)}), no Run button; the palette offers ${offered.join(', ')}`);
  await shot(page, 'restricted-mode.png');

  // The commands, invoked anyway: the extension refuses its own, the server
  // refuses promptforge.run; nothing runs.
  const refused = await rpc(page, { op: 'command', command: 'promptforge.runPrompt', args: [{ uri: vscodeUri(hello) }] });
  const toast = page.locator('.notification-toast', { hasText: 'cannot run a prompt in Restricted Mode' }).first();
  await toast.waitFor({ state: 'visible' });
  await toast.getByRole('button', { name: 'Manage Workspace Trust' }).waitFor({ state: 'visible' });
  if (refused !== null) throw new Error(`PromptForge: Run in Restricted Mode answered ${JSON.stringify(refused)}`);
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await toast.waitFor({ state: 'hidden' });
  const offlineRefused = await rpc(page, { op: 'command', command: 'promptforge.runOffline', args: [{ uri: vscodeUri(hello) }] });
  await toast.waitFor({ state: 'visible' });
  if (offlineRefused !== null) throw new Error(`PromptForge: Run Offline in Restricted Mode answered ${JSON.stringify(offlineRefused)}`);
  const serverRefusal = await rpc(page, { op: 'command', command: 'promptforge.run', args: [{ uri: vscodeUri(hello) }] })
    .then((answer) => `answered ${JSON.stringify(answer)}`, (error) => String(error.message));
  if (!serverRefusal.includes('not trusted')) throw new Error(`the server's promptforge.run in Restricted Mode: ${serverRefusal}`);
  log(`Restricted Mode: the server refuses promptforge.run: ${serverRefusal}`);
  if ((await output(page)).includes('hello from a trusted folder')) throw new Error('a run happened in Restricted Mode');

  // Debugging: the extension's command refuses; F5 meets VS Code's own trust
  // question, and Cancel starts nothing.
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  const debugRefused = await rpc(page, { op: 'command', command: 'promptforge.debug', args: [{ uri: vscodeUri(hello) }] });
  await page.locator('.notification-toast', { hasText: 'cannot debug a prompt in Restricted Mode' }).first().waitFor({ state: 'visible' });
  if (debugRefused !== false) throw new Error(`PromptForge: Debug in Restricted Mode answered ${JSON.stringify(debugRefused)}`);
  const f5 = rpc(page, { op: 'command', command: 'workbench.action.debug.start' });
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'Debugging executes' });
  await dialog.waitFor({ state: 'visible' });
  await shot(page, 'restricted-debug.png');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await f5;
  const debugged = await debugState(page);
  if (debugged.sessions.length !== 0 || debugged.active) throw new Error(`a debug session in Restricted Mode: ${JSON.stringify(debugged)}`);
  log('Restricted Mode: PromptForge: Debug is refused; F5 asks for trust and, cancelled, starts nothing');
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });

  // Trust the folder in the Workspace Trust editor.
  await palette(page, 'Workspaces: Manage Workspace Trust');
  const trustButton = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
  await trustButton.waitFor({ state: 'visible' });
  await trustButton.click();
  const trusted = await waitFor('the server to restart trusted', async () => {
    const t = await rpc(page, { op: 'trust' });
    return t.workspaceTrusted && t.serverRunning && t.serverTrusted ? t : undefined;
  });
  log(`trusted: ${JSON.stringify(trusted)}`);
  await waitFor("the folder's promptforge.server.path to be used", () => fs.existsSync(marks.wrapper));
  const wrapper = path.join(dirs.restricted, 'server-wrapper.sh');
  const fromFolder = await rpc(page, { op: 'trust' });
  if (fromFolder.serverSource !== 'setting' || fromFolder.serverBinary !== wrapper) {
    throw new Error(`trusted: the server does not run from the folder's setting: ${JSON.stringify(fromFolder)}`);
  }
  log("trusted: the server restarted trusted, from the folder's promptforge.server.path");

  // The lenses and the button are there, the lens runs the prompt.
  await openPrompt(page, 'hello.pf.md');
  await waitFor('the Run lens', async () => (await lensTitles(page, hello, helloTitle)).includes('Run'));
  await runButton.first().waitFor({ state: 'visible' });
  const lens = page.locator('.codelens-decoration a', { hasText: /^Run$/ }).first();
  await lens.waitFor({ state: 'visible' });
  const results = async () => (await output(page)).split('hello from a trusted folder').length - 1;
  const before = await results();
  await lens.click();
  await waitFor('the run result', async () => (await results()) === before + 1);
  log('trusted: the Run lens and button are there, and the lens ran the prompt');
  await shot(page, 'trusted.png');

  // The Plugin of the now trusted promptforge.toml is started.
  await openPrompt(page, 'marker.md');
  await waitFor("the trusted promptforge.toml's Plugin to start", () => fs.existsSync(marks.plugin), 30000);
  log("trusted: the promptforge.toml's Plugin was started");
}

/**
 * The universal package (no binary of its own), with no setting and a
 * `promptforge` on PATH: the server starts from PATH, a prompt gets its
 * diagnostics and runs.
 */
async function universalPackage(page) {
  const state = await serverStarted(page, { pathAllowed: true });
  const onPath = path.join(dirs.pathBin, 'promptforge');
  if (state.serverSource !== 'path' || state.serverBinary !== onPath) {
    throw new Error(`universal: the server does not run from PATH (${onPath}): ${JSON.stringify(state)}`);
  }
  log(`universal: the server runs from PATH (${state.serverBinary})`);
  const broken = await openPrompt(page, 'broken.md');
  await waitFor('the diagnostics of broken.md', async () =>
    (await rpc(page, { op: 'diagnostics', path: broken })).some((d) => d.code === 'RequirementsUnmet'));
  const stats = await openPrompt(page, 'word-stats.md');
  await rpc(page, { op: 'command', command: 'promptforge.run', args: [{ uri: vscodeUri(stats), args: 'a bb ccc' }] });
  await waitFor('the run result in the output channel', async () =>
    (await output(page)).includes('3 words, 6 letters, 2.0 letters per word'));
  log('universal: the diagnostics of broken.md, and word-stats.md ran');
}

/** The titles the command palette lists for `text` (once it lists `expected`). */
async function paletteTitles(page, text, expected) {
  const input = page.locator('.quick-input-widget input');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Shift+P');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + text);
  const rows = page.locator('.quick-input-list .monaco-list-row .label-name');
  await rows.filter({ hasText: expected }).first().waitFor({ state: 'visible' });
  const titles = (await rows.allInnerTexts()).map((t) => t.trim());
  await page.keyboard.press('Escape');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  return titles;
}

function vscodeUri(file) {
  return 'file://' + file.split('/').map(encodeURIComponent).join('/');
}

/**
 * The PromptForge Runs view: Run fails (the prompt's model needs a key that is
 * not set) and is listed failed; Run Offline (preview) runs it with every
 * label answered by echo and reveals the run in the view, expanded into its
 * trace (sections, the call chain, model rounds with duration and tokens).
 * Clicking a round opens its request and response documents (the request's
 * messages) and puts the prompt's cursor on the round's line (the enclosing
 * section's: the round has none); clicking a section goes to its heading, and
 * clicking the failed run to its failure. The screenshot for the book.
 */
async function runsView(page) {
  const file = 'triage/ticket-triage.md';
  const full = await openPrompt(page, file);
  const uri = vscodeUri(full);
  const runs = async () => (await rpc(page, { op: 'runs' })).runs;
  const selection = () => rpc(page, { op: 'selection', path: full });

  // Run: refused for the missing key, listed failed.
  await palette(page, 'PromptForge: Run');
  const failed = await waitFor('the failed run in the Runs view', async () =>
    (await runs()).find((r) => r.file === 'ticket-triage.md' && r.status === 'failed'));
  if (!failed.details.startsWith('✘ Binding') || failed.offline) throw new Error(`the failed run: ${JSON.stringify(failed)}`);
  const keyLine = lineOf(file, /^ {2}triager:/);
  log(`Run failed and is listed: ${failed.label} ${failed.details}`);

  // Run Offline: no key needed; the run is revealed in the view, then traced.
  await rpc(page, { op: 'command', command: 'workbench.action.closePanel' });
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await palette(page, 'PromptForge: Run Offline (Preview)');
  const offline = await waitFor('the offline run, traced', async () => {
    const [newest] = await runs();
    return newest?.offline && newest.status === 'finished' && newest.spans > 0 ? newest : undefined;
  }, 60000);
  if (!/^offline · ✔ \d+(\.\d)? m?s · ≈\d+→\d+ tok · run-\d+$/.test(offline.details)) throw new Error(`the offline run reads ${offline.details}`);
  log(`Run Offline: ${offline.label} ${offline.details}`);
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'PromptForge Runs' }) });
  const row = (text) => pane.locator('.monaco-list-row', { hasText: text }).first();
  const runRow = pane.locator('.monaco-list-row', { hasText: offline.runId }).first();
  await runRow.waitFor({ state: 'visible' });
  // Room for the view: the folder's section collapsed, the side bar wider
  // (both put back at the end).
  const folderHeader = page.locator('.pane-header[aria-expanded="true"]', { has: page.locator('.title', { hasText: /^workspace$/i }) });
  const folderOpen = (await folderHeader.count()) > 0;
  if (folderOpen) await folderHeader.first().click();
  const sideBarWidth = await dragSideBarEdge(page, 470);
  if ((await runRow.getAttribute('aria-expanded')) !== 'true') await runRow.click();
  for (const text of ['§ (title)', 'chat triager', '§ Route', 'call', '§ General', 'chat writer']) await row(text).waitFor({ state: 'visible' });
  const writerRow = row('chat writer');
  // (The label and its description, apart.)
  const writerText = [
    await writerRow.locator('.label-name').first().innerText(),
    await writerRow.locator('.label-description').first().innerText(),
  ].join(' · ');
  if (!/^chat writer · \d+(\.\d)? m?s · ≈\d+→\d+ tok$/.test(writerText)) throw new Error(`the round's row reads ${writerText}`);
  log(`the run expanded into its trace; a round: ${writerText}`);

  // A round: its request and response documents, and the prompt at its line.
  await writerRow.click();
  const documents = await waitFor('the round documents', async () => {
    const open = await rpc(page, { op: 'documents', key: 'promptforge-trace' });
    return open.some((d) => d.path.endsWith('request.json')) && open.some((d) => d.path.endsWith('response.json')) ? open : undefined;
  });
  const request = documents.find((d) => d.path.endsWith('chat writer 2 request.json'));
  const messages = JSON.parse(request?.text ?? 'null')?.messages;
  if (!Array.isArray(messages) || messages[0]?.role !== 'user' || !messages[0].content.startsWith('Draft a short, friendly reply to:')) {
    throw new Error(`the request document: ${JSON.stringify(documents)}`);
  }
  const response = documents.find((d) => d.path.endsWith('chat writer 2 response.json'));
  if (JSON.parse(response.text).content !== messages[0].content) throw new Error(`the response document: ${response.text}`);
  await page.locator('.tabs-container .tab', { hasText: 'chat writer 2 request.json' }).first().waitFor({ state: 'visible' });
  const generalLine = lineOf(file, /^## General/);
  await waitFor(`the cursor on line ${generalLine + 1}`, async () => (await selection())?.line === generalLine);
  log(`the round opened its request (${messages.length} message) and response; the prompt's cursor is on line ${generalLine + 1}`);
  // The H1 pass's round, whose request offers the route tool, for the book.
  await row('chat triager').click();
  await page.locator('.tabs-container .tab', { hasText: 'chat triager 1 request.json' }).first().waitFor({ state: 'visible' });
  const loopLine = lineOf(file, /^models\.loop/);
  await waitFor(`the cursor on line ${loopLine + 1}`, async () => (await selection())?.line === loopLine);
  const triager = (await rpc(page, { op: 'documents', key: 'promptforge-trace' })).find((d) => d.path.endsWith('chat triager 1 request.json'));
  if (JSON.parse(triager.text).tools?.[0]?.name !== 'route') throw new Error(`the triager's request: ${triager.text}`);
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await page.mouse.move(700, 850);
  await shot(page, 'runs-view.png');

  // A section: its heading's line.
  await row('§ Route').click();
  const routeLine = lineOf(file, /^## Route/);
  await waitFor(`the cursor on line ${routeLine + 1}`, async () => (await selection())?.line === routeLine);
  // The failed run: its failure (the label whose model needs the key).
  await pane.locator('.monaco-list-row', { hasText: failed.runId }).filter({ hasText: 'Binding' }).first().click();
  await waitFor(`the cursor at the failure, line ${keyLine + 1}`, async () => {
    const at = await selection();
    return at?.line === keyLine && at.character === 2;
  });
  log(`clicking a section goes to line ${routeLine + 1}, the failed run to its failure on line ${keyLine + 1}`);
  await dragSideBarEdge(page, sideBarWidth);
  if (folderOpen) await page.locator('.pane-header[aria-expanded="false"]', { has: page.locator('.title', { hasText: /^workspace$/i }) }).first().click();
  await rpc(page, { op: 'command', command: 'workbench.action.closeAllEditors' });
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
}

/**
 * The Testing view: it lists the workspace's test files and their cases (from
 * `promptforge/tests`), Run All runs them, the wrong case fails with its
 * message at its `result:` line, a diff and a link to its trace.
 */
async function testingView(page) {
  const testing = () => rpc(page, { op: 'testing' });
  const listed = await waitFor('the Testing view to list the test files', async () => {
    const files = await testing();
    return files?.length >= 2 ? files : undefined;
  });
  const examples = listed.find((f) => f.label === 'word-stats.test.yaml');
  const expectedCases = fs.readFileSync(path.join(folder, 'word-stats.test.yaml'), 'utf8').match(/^ {2}- name: .*$/gm).length;
  if (examples?.cases.length !== expectedCases) throw new Error(`the listed cases: ${JSON.stringify(listed)}`);
  const nameLine = lineOf('word-stats.test.yaml', /^ {2}- name: counts four words/);
  if (examples.cases.find((c) => c.label === 'counts four words')?.line !== nameLine) throw new Error(`the case's line: ${JSON.stringify(examples)}`);
  log(`the Testing view lists ${listed.length} test files, word-stats.test.yaml with ${expectedCases} cases`);

  await rpc(page, { op: 'command', command: 'workbench.view.testing.focus' });
  await rpc(page, { op: 'command', command: 'testing.runAll' });
  const ran = await waitFor('every case to have a result', async () => {
    const files = await testing();
    return files.every((f) => f.cases.every((c) => c.outcome)) ? files : undefined;
  }, 90000);
  const failed = ran.flatMap((f) => f.cases).filter((c) => !c.outcome.passed);
  if (failed.length !== 1 || failed[0].label !== 'expects a wrong count') throw new Error(`the failed cases: ${JSON.stringify(failed)}`);
  const [message] = failed[0].outcome.messages;
  const resultLine = lineOf('word-stats-wrong.test.yaml', /^ {6}result:/);
  if (message.message !== 'expect.result: the result differs' || message.range?.start.line !== resultLine
    || message.expected !== '3 words' || !message.actual?.startsWith('2 words')) {
    throw new Error(`the failure's message: ${JSON.stringify(failed[0].outcome)}`);
  }
  if (!failed[0].outcome.traceLink?.startsWith('[Open trace](command:promptforge.showTrace?')) throw new Error(`no trace link: ${JSON.stringify(failed[0].outcome)}`);
  log(`Run All: one failure, "${message.message}" at line ${resultLine + 1} with a diff and a trace link`);
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await rpc(page, { op: 'command', command: 'testing.expandAll' }).catch(() => undefined);
  await rpc(page, { op: 'command', command: 'testing.showMostRecentOutput' }).catch(() => undefined);
  // The failure in the Test Results panel: its expected and actual texts side by side.
  await page.locator('.monaco-list-row', { hasText: 'expect.result: the result differs' }).first().click();
  await page.locator('.monaco-diff-editor .view-line', { hasText: '3 words' }).first().waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .view-line', { hasText: message.actual }).first().waitFor({ state: 'visible' });
  log('the Test Results panel shows the failure as a diff');
  await page.mouse.move(700, 850);
  await shot(page, 'testing-view.png');
  await rpc(page, { op: 'command', command: 'workbench.action.closePanel' });

  // The Debug profile: each case in its own `promptforge dap` session (launch
  // with `case`), its exit code its result, the failed one with its verdict.
  await rpc(page, { op: 'command', command: 'testing.debugAll' });
  const debugged = await waitFor('every case to have a result of the Debug profile', async () => {
    const files = await testing();
    return files.every((f) => f.cases.every((c) => c.outcome?.profile === 'debug')) ? files : undefined;
  }, 120000);
  const debugFailed = debugged.flatMap((f) => f.cases).filter((c) => !c.outcome.passed);
  const verdict = debugFailed[0]?.outcome.messages[0]?.message ?? '';
  if (debugFailed.length !== 1 || debugFailed[0].label !== 'expects a wrong count'
    || !verdict.includes('FAILED') || !verdict.includes('expect.result: the result differs')) {
    throw new Error(`the Debug profile's results: ${JSON.stringify(debugFailed)}`);
  }
  await waitFor('the debug sessions to end', async () => { const state = await debugState(page); return !state.active && state.sessions.every((s) => s.ended); });
  log(`the Debug profile debugged every case, one session each; the failed one: ${verdict.split('\n')[0]}`);
  await rpc(page, { op: 'command', command: 'workbench.view.explorer' });
}

/** Drags the side bar's right edge to `x`; returns where it was. */
async function dragSideBarEdge(page, x) {
  const sideBar = await page.locator('.part.sidebar').boundingBox();
  const edge = sideBar.x + sideBar.width;
  const y = sideBar.y + sideBar.height / 2;
  await page.mouse.move(edge, y);
  await page.mouse.down();
  await page.mouse.move((edge + x) / 2, y);
  await page.mouse.move(x, y);
  await page.mouse.up();
  const after = await page.locator('.part.sidebar').boundingBox();
  if (Math.abs(after.x + after.width - x) > 8) throw new Error(`the side bar's edge went to ${after.x + after.width}, not ${x}`);
  return edge;
}

/**
 * The debugger: the `Debug` lens beside `Run`; a breakpoint on a Lua line; the
 * lens starts `promptforge dap`, the run stops on that line (the session's top
 * frame, the editor's stopped line, the Call Stack view); the Run scope in the
 * Variables view shows `var`; the Debug Console evaluates in the paused frame;
 * the screenshot; Continue ends the run (its result in the Debug Console, exit
 * code 0, no request refused). Then F5 with no launch.json debugs the active
 * prompt, and a start with no prompt is refused with a message.
 */
async function debugging(page) {
  // The H1 lenses: Run, Debug, Run with arguments…, and Run tests when a test
  // file is beside the prompt.
  const stats = path.join(dirs.workspace, 'word-stats.md');
  await openPrompt(page, 'word-stats.md');
  const statsTitle = lineOf('word-stats.md', /^# /);
  await waitFor('the lenses of word-stats.md', async () =>
    JSON.stringify(await lensTitles(page, stats, statsTitle)) === JSON.stringify(['Run', 'Debug', 'Run with arguments…', 'Run tests']));
  const file = 'debug/words.pf.md';
  const full = path.join(dirs.workspace, file);
  const title = lineOf(file, /^# /);
  const stopLine = lineOf(file, /^return var\.count/);
  await openPrompt(page, file, stopLine, 0);
  await waitFor('the lenses of words.pf.md', async () =>
    JSON.stringify(await lensTitles(page, full, title)) === JSON.stringify(['Run', 'Debug', 'Run with arguments…']));
  const [debugLens] = await rpc(page, { op: 'codeLenses', path: full, line: title }).then((all) => all.filter((l) => l.title === 'Debug'));
  if (debugLens.command !== 'promptforge.debug' || debugLens.arguments?.[0]?.uri !== vscodeUri(full)) {
    throw new Error(`unexpected Debug lens ${JSON.stringify(debugLens)}`);
  }
  log('the Debug lens sits beside Run (promptforge.debug {uri})');

  // A breakpoint on the `return` line, then the lens in the editor is clicked.
  await rpc(page, { op: 'clearBreakpoints' });
  const breakpoints = await rpc(page, { op: 'breakpoint', path: full, line: stopLine });
  if (breakpoints.length !== 1 || breakpoints[0].line !== stopLine) throw new Error(`breakpoints: ${JSON.stringify(breakpoints)}`);
  const lens = page.locator('.codelens-decoration a', { hasText: /^Debug$/ }).first();
  await lens.waitFor({ state: 'visible' });
  await lens.click();
  // The stopped line shows in the editor (the stop focuses the editor: the
  // state is asked for once it happened).
  const stoppedLine = page.locator('.monaco-editor .debug-top-stack-frame-line').first();
  await stoppedLine.waitFor({ state: 'attached', timeout: 60000 });
  const stopped = await waitFor(`the session to stop on line ${stopLine + 1}`, async () => {
    const { active } = await debugState(page);
    return active?.paused && active.frames[0]?.line === stopLine + 1 ? active : undefined;
  }, 60000);
  const expected = { type: 'promptforge', request: 'launch', name: 'Debug words.pf.md', program: full };
  for (const [key, value] of Object.entries(expected)) {
    if (stopped.configuration[key] !== value) throw new Error(`the session's ${key}: ${JSON.stringify(stopped.configuration)}`);
  }
  // (code-server hands the extension a remote URI as the source path.)
  const framePath = (p) => (/^[a-z-]+:\/\//.test(p) ? decodeURIComponent(new URL(p).pathname) : p);
  if (framePath(stopped.frames[0].path) !== full || stopped.name !== 'Debug words.pf.md') throw new Error(`stopped in ${JSON.stringify(stopped)}`);
  log(`stopped at ${file}:${stopped.frames[0].line} (${stopped.frames.map((f) => f.name).join(' < ')})`);

  // The workbench shows it: the stopped line in the editor, the frame in the
  // Call Stack view, and the Run scope's `var` in the Variables view.
  const callStack = page.locator('.debug-call-stack');
  await callStack.locator('.monaco-list-row', { hasText: 'lua block 1' }).filter({ hasText: `${stopLine + 1}:1` }).first()
    .waitFor({ state: 'visible' });
  const variables = page.locator('.debug-variables');
  const runScope = variables.locator('.monaco-list-row', { hasText: /^\s*Run\s*$/ }).first();
  await runScope.waitFor({ state: 'visible' });
  if ((await runScope.getAttribute('aria-expanded')) !== 'true') await runScope.click();
  const varRow = variables.locator('.monaco-list-row', { hasText: /^\s*var\s*[:=]/ }).first();
  await varRow.waitFor({ state: 'visible' });
  if ((await varRow.getAttribute('aria-expanded')) !== 'true') await varRow.click();
  await variables.locator('.monaco-list-row', { hasText: /^\s*count\s*[:=]\s*4\s*$/ }).first().waitFor({ state: 'visible' });
  const variablesText = (await variables.innerText()).replace(/\s+/g, ' ');
  // (A variable reads `name = value`, `name: value` in older releases.)
  if (!/var ?[:=] ?\{.*count = 4/.test(variablesText) || !/first ?[:=] ?"the"/.test(variablesText)) {
    throw new Error(`the Variables view does not show var: ${variablesText}`);
  }
  log(`the Variables view: ${variablesText}`);
  const locals = variables.locator('.monaco-list-row', { hasText: /^\s*Locals\s*$/ }).first();
  if ((await locals.getAttribute('aria-expanded')) !== 'true') await locals.click();
  await variables.locator('.monaco-list-row', { hasText: /^\s*words\s*[:=]\s*\{"the", "quick"/ }).first().waitFor({ state: 'visible' });
  // An expression typed in the Debug Console runs in the paused frame.
  // (Typed only once the console's input has the focus, never into the prompt.)
  await rpc(page, { op: 'command', command: 'workbench.panel.repl.view.focus' });
  await page.locator('.repl-input-wrapper .monaco-editor.focused').waitFor({ state: 'attached' });
  await page.keyboard.type('#words * 10 + var.count');
  await page.keyboard.press('Enter');
  await page.locator('.repl .monaco-list-row', { hasText: /^\s*44\s*$/ }).first().waitFor({ state: 'visible' });
  log('the Debug Console evaluated #words * 10 + var.count = 44 in the paused frame');
  await page.mouse.move(200, 450);
  // images/debugging.png (the READMEs' picture) is a copy of this shot, made by hand.
  await shot(page, 'debugging.png');

  // Continue: the run ends with its result in the Debug Console.
  await rpc(page, { op: 'command', command: 'workbench.action.debug.continue' });
  const ended = await waitFor('the debug session to end', async () => {
    const record = (await debugState(page)).sessions.find((s) => s.id === stopped.id);
    return record?.ended ? record : undefined;
  });
  if (ended.exitCode !== 0 || !ended.terminated || !ended.output.includes('4 words, the first: the') || ended.errors.length > 0) {
    throw new Error(`the debugged run ended so: ${JSON.stringify(ended)}`);
  }
  await rpc(page, { op: 'command', command: 'workbench.panel.repl.view.focus' });
  await page.locator('.repl', { hasText: '4 words, the first: the' }).first().waitFor({ state: 'visible' });
  log(`continued: the result in the Debug Console, exit code 0, the session ended, no request refused (${ended.requests.join(' ')})`);
  await shot(page, 'debug-console.png');

  // F5 with no launch.json: the configuration provider debugs the active prompt.
  await openPrompt(page, file, stopLine, 0);
  await stoppedLine.waitFor({ state: 'detached' });
  await rpc(page, { op: 'command', command: 'workbench.action.debug.start' });
  await stoppedLine.waitFor({ state: 'attached', timeout: 60000 });
  const again = await waitFor('the F5 session to stop at the breakpoint', async () => {
    const { active } = await debugState(page);
    return active && active.id !== stopped.id && active.paused && active.frames[0]?.line === stopLine + 1 ? active : undefined;
  }, 60000);
  if (again.configuration.program !== full || again.name !== 'Debug words.pf.md') throw new Error(`F5 started ${JSON.stringify(again)}`);
  await rpc(page, { op: 'command', command: 'workbench.action.debug.stop' });
  await waitFor('the F5 session to end', async () => (await debugState(page)).sessions.find((s) => s.id === again.id)?.ended);
  log('F5 with no launch.json debugged the active prompt; Stop ended it');

  // No prompt to debug: a clear message, and no session.
  await rpc(page, { op: 'open', path: path.join(dirs.workspace, 'word-stats.test.yaml') });
  await waitFor('the test file to be active', async () => (await rpc(page, { op: 'state' })).uri?.endsWith('/word-stats.test.yaml'));
  const count = (await debugState(page)).sessions.length;
  const refused = await rpc(page, { op: 'startDebugging', value: { type: 'promptforge', request: 'launch', name: 'no prompt' } });
  await page.locator('.notification-toast', { hasText: 'open a prompt to debug it' }).first().waitFor({ state: 'visible' });
  if (refused !== false || (await debugState(page)).sessions.length !== count) throw new Error('a debug start with no prompt went on');
  await rpc(page, { op: 'command', command: 'notifications.clearAll' });
  await rpc(page, { op: 'clearBreakpoints' });
  log('a debug start with no prompt is refused with a message');
}

/** The newest log of the server's output channel (its messages, traced) under `dir`. */
function newestServerLog(dir) {
  let newest;
  const walk = (at) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('PromptForge Language Server.log')) {
        const mtime = fs.statSync(full).mtimeMs;
        if (!newest || mtime > newest.mtime) newest = { full, mtime };
      }
    }
  };
  walk(dir);
  return newest?.full;
}

main().catch((error) => {
  console.error(`[e2e] FAILED: ${error.stack ?? error}`);
  console.error(`[e2e] code-server logs: ${path.join(work, 'code-server-*.log')}`);
  const serverLog = fs.existsSync(work) ? newestServerLog(work) : undefined;
  if (serverLog) {
    const lines = fs.readFileSync(serverLog, 'utf8').split('\n');
    console.error(`[e2e] the end of the server's traced messages (${serverLog}):`);
    console.error(lines.slice(-120).join('\n'));
  }
  process.exit(1);
});
