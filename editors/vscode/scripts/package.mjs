// Packages the extension (after `npm run build`):
//
//   node scripts/package.mjs
//       the universal package, promptforge-VERSION.vsix: no binary, the
//       extension runs `promptforge` from PATH (or promptforge.server.path);
//   node scripts/package.mjs --target linux-x64 --binary ../../target/dist/promptforge
//       a platform package, promptforge-TARGET-VERSION.vsix: the binary goes
//       into server/promptforge (server/promptforge.exe for win32-*), mode 755,
//       and the extension runs it unless promptforge.server.path is set.
//
// The binary must be one built for TARGET (its header is checked: ELF x86-64
// or aarch64, Mach-O x86-64 or arm64, PE x64 or arm64). server/ is removed
// again afterwards, so the working tree never holds a stale binary.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(here, 'server');

/** The targets vsce knows that we can fill, and the binary format each needs. */
const TARGETS = {
  'linux-x64': { format: 'elf', machine: 0x3e, rust: 'x86_64-unknown-linux-gnu' },
  'linux-arm64': { format: 'elf', machine: 0xb7, rust: 'aarch64-unknown-linux-gnu' },
  'darwin-x64': { format: 'macho', machine: 0x01000007, rust: 'x86_64-apple-darwin' },
  'darwin-arm64': { format: 'macho', machine: 0x0100000c, rust: 'aarch64-apple-darwin' },
  'win32-x64': { format: 'pe', machine: 0x8664, rust: 'x86_64-pc-windows-msvc' },
  'win32-arm64': { format: 'pe', machine: 0xaa64, rust: 'aarch64-pc-windows-msvc' },
};

function usage(message) {
  console.error(`${message}
usage: node scripts/package.mjs                                   (the universal package)
       node scripts/package.mjs --target TARGET --binary FILE     (a platform package)
options: --out FILE.vsix, --base-images-url URL (where images/ is published)
TARGET: ${Object.keys(TARGETS).join(', ')}`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (['--target', '--binary', '--out', '--base-images-url'].includes(flag)) {
      if (value === undefined) usage(`${flag} needs a value`);
      options[flag.slice(2).replace(/-(\w)/g, (_, c) => c.toUpperCase())] = value;
      i++;
    } else {
      usage(`unknown argument ${flag}`);
    }
  }
  if (options.target && !TARGETS[options.target]) usage(`unknown target ${options.target}`);
  if (options.target && !options.binary) usage('--target needs --binary');
  if (options.binary && !options.target) usage('--binary needs --target');
  if (options.baseImagesUrl && !/^https:\/\//.test(options.baseImagesUrl)) usage('--base-images-url must be an https: URL');
  return options;
}

/** What kind of executable `file` is: `{ format, machine }`, or undefined. */
function executableKind(file) {
  const header = Buffer.alloc(4096);
  const fd = fs.openSync(file, 'r');
  const length = fs.readSync(fd, header, 0, header.length, 0);
  fs.closeSync(fd);
  const bytes = header.subarray(0, length);
  if (bytes.length >= 20 && bytes.readUInt32BE(0) === 0x7f454c46) {
    const little = bytes[5] === 1;
    return { format: 'elf', machine: little ? bytes.readUInt16LE(18) : bytes.readUInt16BE(18) };
  }
  if (bytes.length >= 8 && bytes.readUInt32LE(0) === 0xfeedfacf) {
    return { format: 'macho', machine: bytes.readUInt32LE(4) };
  }
  if (bytes.length >= 64 && bytes.toString('latin1', 0, 2) === 'MZ') {
    const pe = bytes.readUInt32LE(60);
    if (pe + 6 <= bytes.length && bytes.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      return { format: 'pe', machine: bytes.readUInt16LE(pe + 4) };
    }
  }
  return undefined;
}

/**
 * The README as packaged. VS Code shows an extension's README in a webview
 * that loads only https: images (data: and relative ones show as broken
 * pictures), so each picture of `images/` gets the absolute URL
 * `BASE/images/NAME` when --base-images-url BASE is given, and is left out
 * otherwise (the repository has no public URL yet: see "Publishing" in
 * README.md).
 */
function packagedReadme(baseImagesUrl) {
  const text = fs.readFileSync(path.join(here, 'README.md'), 'utf8');
  let pictures = 0;
  const picture = /!\[([^\]]*)\]\((images\/[\w.-]+\.png)\)\n?\n?/g;
  const result = text.replace(picture, (all, alt, link) => {
    pictures++;
    if (!fs.existsSync(path.join(here, link))) usage(`README.md shows ${link}, which is not there`);
    if (!baseImagesUrl) return '';
    return all.replace(link, new URL(link, baseImagesUrl.endsWith('/') ? baseImagesUrl : baseImagesUrl + '/').href);
  });
  // (vsce takes the README from the extension's folder; dist/ is built output.)
  const file = 'dist/README.md';
  fs.writeFileSync(path.join(here, file), result);
  console.log(`README.md: ${pictures} picture(s) ${baseImagesUrl ? `linked from ${baseImagesUrl}` : 'left out (no --base-images-url)'}`);
  return file;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const { version } = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
  if (!fs.existsSync(path.join(here, 'dist/extension.js'))) usage('no dist/extension.js: run `npm run build` first');
  const out = path.resolve(
    options.out ?? path.join(here, options.target ? `promptforge-${options.target}-${version}.vsix` : `promptforge-${version}.vsix`),
  );
  fs.rmSync(serverDir, { recursive: true, force: true });
  const readme = packagedReadme(options.baseImagesUrl);
  const vsceArgs = [
    'package',
    '--readme-path',
    readme,
    '--no-dependencies',
    '--skip-license',
    // No public repository URL yet: see "Publishing" in README.md.
    '--allow-missing-repository',
    // packagedReadme made the README's picture links absolute, or left the
    // pictures out.
    '--no-rewrite-relative-links',
    '--out',
    out,
  ];
  try {
    if (options.target) {
      const wanted = TARGETS[options.target];
      const binary = path.resolve(options.binary);
      if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) usage(`no binary at ${binary}`);
      const kind = executableKind(binary);
      if (kind?.format !== wanted.format || kind.machine !== wanted.machine) {
        usage(`${binary} is not a ${options.target} executable (build it with --target ${wanted.rust})`);
      }
      const name = options.target.startsWith('win32-') ? 'promptforge.exe' : 'promptforge';
      fs.mkdirSync(serverDir);
      fs.copyFileSync(binary, path.join(serverDir, name));
      fs.chmodSync(path.join(serverDir, name), 0o755);
      vsceArgs.push('--target', options.target);
    }
    execFileSync(process.execPath, [path.join(here, 'node_modules/@vscode/vsce/vsce'), ...vsceArgs], { cwd: here, stdio: 'inherit' });
  } finally {
    fs.rmSync(serverDir, { recursive: true, force: true });
    fs.rmSync(path.join(here, readme), { force: true });
  }
  const size = fs.statSync(out).size;
  console.log(`${path.relative(process.cwd(), out) || out}: ${size} bytes (${(size / 2 ** 20).toFixed(1)} MiB)`);
}

main();
