#!/usr/bin/env bash
# The OpenTelemetry round trip against a real backend (issue 27): Arize Phoenix
# from PyPI receives a run's trace over OTLP/HTTP (`promptforge run --otlp`),
# and check.py reads the spans back through Phoenix's REST API and holds them to
# the OTLP/JSON file the same run wrote (`--trace`): the same names, ids and
# nesting, the GenAI attributes, and Phoenix's own reading of them (a `chat`
# span is an LLM span, an `execute_tool` span a TOOL span). The run is offline:
# the prompt in prompt/ is answered by a scripted model and calls a local tool.
#
# Phoenix is installed once per cache into $PF_EDITORS_CACHE/phoenix-venv
# (default target/editors, as the editors' suites do; about 850 MB); the server
# runs on free loopback ports with a scratch working folder and is stopped at
# the end. Fails loudly on any mismatch.
set -euo pipefail

PHOENIX_VERSION=20.26.1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/phoenix
CACHE=${PF_EDITORS_CACHE:-$ROOT/target/editors}
VENV=${PF_PHOENIX_VENV:-$CACHE/phoenix-venv}
BIN=${PROMPTFORGE_BIN:-target/debug/promptforge}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
[ -x "$BIN" ] || { echo "phoenix round trip: no binary at $BIN (set PROMPTFORGE_BIN)" >&2; exit 1; }

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# 1. Phoenix, once per cache.
started=$(now)
if ! compgen -G "$VENV/lib/python3*/site-packages/arize_phoenix-$PHOENIX_VERSION.dist-info" >/dev/null; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "installing python3-venv (Debian)"
    apt-get update -q && apt-get install -y -q python3-venv
  fi
  mkdir -p "$(dirname "$VENV")"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "arize-phoenix==$PHOENIX_VERSION"
fi
echo "step phoenix: arize-phoenix $PHOENIX_VERSION ($(took "$started"))"

# 2. The server, on two free loopback ports (HTTP and gRPC), in a scratch folder.
SCRATCH=$(mktemp -d)
PHOENIX_PID=
cleanup() {
  if [ -n "$PHOENIX_PID" ]; then
    kill "$PHOENIX_PID" 2>/dev/null || true
    wait "$PHOENIX_PID" 2>/dev/null || true
  fi
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
read -r HTTP_PORT GRPC_PORT < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
started=$(now)
PHOENIX_WORKING_DIR=$SCRATCH/phoenix PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=$HTTP_PORT \
  PHOENIX_GRPC_PORT=$GRPC_PORT PHOENIX_TELEMETRY_ENABLED=false \
  "$VENV/bin/phoenix" serve >"$SCRATCH/phoenix.log" 2>&1 &
PHOENIX_PID=$!
URL=http://127.0.0.1:$HTTP_PORT
for _ in $(seq 1 240); do
  if curl -sf "$URL/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$PHOENIX_PID" 2>/dev/null; then
    echo "phoenix round trip: phoenix serve exited:" >&2
    tail -n 30 "$SCRATCH/phoenix.log" >&2
    exit 1
  fi
  sleep 0.5
done
curl -sf "$URL/healthz" >/dev/null || { echo "phoenix round trip: Phoenix did not answer on $URL in 120 s" >&2; tail -n 30 "$SCRATCH/phoenix.log" >&2; exit 1; }
echo "step phoenix serve: $URL ($(took "$started"))"

# 3. The run: the trace to a file and to Phoenix.
started=$(now)
env -u PROMPTFORGE_CONFIG -u PROMPTFORGE_TRUST XDG_CONFIG_HOME="$SCRATCH/config" XDG_STATE_HOME="$SCRATCH/state" \
  "$BIN" run "$HERE/prompt/notes.md" --trace "$SCRATCH/trace.json" --otlp "$URL" "Rust is fast" >"$SCRATCH/out.txt" 2>"$SCRATCH/err.txt" || {
  echo "phoenix round trip: the run failed:" >&2
  cat "$SCRATCH/out.txt" "$SCRATCH/err.txt" >&2
  exit 1
}
if grep -q "cannot export" "$SCRATCH/err.txt"; then
  echo "phoenix round trip: the export failed:" >&2
  cat "$SCRATCH/err.txt" >&2
  exit 1
fi
echo "step run: $(cat "$SCRATCH/out.txt") ($(took "$started"))"

# 4. The spans, read back and compared.
started=$(now)
python3 "$HERE/check.py" "$SCRATCH/trace.json" "$URL"
echo "step check ($(took "$started"))"
