#!/usr/bin/env bash
# Installs the reference MCP server `@modelcontextprotocol/server-everything`
# into target/mcp, where the engine's MCP Plugin tests look for it
# (server/mcp/tests/mcp_everything.rs; override with PROMPTFORGE_MCP_EVERYTHING
# pointing at the package's dist/index.js). Needs node and npm.
set -euo pipefail

cd "$(dirname "$0")/.."

VERSION="${MCP_EVERYTHING_VERSION:-2026.8.31}"
PREFIX="target/mcp"
ENTRY="$PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

if [ -f "$ENTRY" ] && grep -q "\"version\": \"$VERSION\"" \
    "$PREFIX/node_modules/@modelcontextprotocol/server-everything/package.json"; then
    echo "server-everything $VERSION already installed at $ENTRY"
    exit 0
fi

mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$VERSION"
test -f "$ENTRY"
echo "server-everything $VERSION installed at $ENTRY"
