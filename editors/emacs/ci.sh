#!/usr/bin/env bash
# The Eglot snippet against the real server in emacs --batch. From the
# repository root:   bash editors/emacs/ci.sh
# Installs Debian's emacs-nox and elpa-eglot when Emacs or Eglot is missing,
# then runs test-detect.el (the prompt check on the shared corpus) and test.el
# (bounded by a timeout). The server is $PROMPTFORGE_BIN
# (default target/release/promptforge). Prints each step's time; exits 1 on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${PF_EDITORS_CACHE:-$ROOT/target/editors}
BIN=${PROMPTFORGE_BIN:-target/release/promptforge}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
export PROMPTFORGE_BIN=$BIN

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
all_started=$(now)

[ -x "$BIN" ] || { echo "emacs ci: no server binary at $BIN (set PROMPTFORGE_BIN)" >&2; exit 1; }

# 1. Emacs and Eglot (built in from Emacs 29; the elpa-eglot package on 28).
started=$(now)
has_eglot() { command -v emacs >/dev/null && emacs --batch --eval '(require (quote eglot))' >/dev/null 2>&1; }
if ! has_eglot; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq emacs-nox elpa-eglot >/dev/null
fi
echo "step emacs: $(emacs --version | head -1) ($(took "$started"))"

# 2. The snippet's prompt check against the shared corpus tests/detection (no server).
started=$(now)
emacs --batch -l "$ROOT/editors/emacs/test-detect.el" </dev/null
echo "step test-detect.el: ($(took "$started"))"

# 3. The test, with the server's user configuration and the records of
# `promptforge trust` out of reach.
started=$(now)
HOME_DIR=$CACHE/emacs-home
rm -rf "$HOME_DIR"; mkdir -p "$HOME_DIR"
set +e
(cd "$ROOT" && XDG_CONFIG_HOME=$HOME_DIR/config XDG_STATE_HOME=$HOME_DIR/state timeout 120 \
  emacs --batch -l "$ROOT/editors/emacs/test.el") </dev/null 2>"$HOME_DIR/stderr"
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "test.el exited $status; its stderr:"; sed 's/^/  /' "$HOME_DIR/stderr"
fi
echo "step test.el: exit $status ($(took "$started"))"
echo "emacs total: $(took "$all_started")"
exit $status
