#!/usr/bin/env bash
# The real Claude Code CLI, pinned, from the npm registry (its native binary ships inside the package).
# Installed under /opt/nightshift-claude with `claude` linked into /usr/local/bin. Idempotent.
VERSION=2.1.330
PREFIX=/opt/nightshift-claude
BIN="$PREFIX/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
if [ ! -x "$BIN" ] || ! "$BIN" --version 2>/dev/null | grep -q "^$VERSION"; then
  if ! command -v npm >/dev/null; then
    . "$(dirname "$0")/apt.sh"; apt_install nodejs npm || exit 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "install-tools: Claude Code $VERSION missing; run: npm install --prefix $PREFIX @anthropic-ai/claude-code@$VERSION" >&2
    exit 1
  fi
  # The pinned version: a plain install picks an older one whose engines match this Node (see shared notes).
  npm install --silent --no-fund --no-audit --prefix "$PREFIX" "@anthropic-ai/claude-code@$VERSION" >/dev/null 2>&1 \
    || { echo "install-tools: npm install @anthropic-ai/claude-code@$VERSION failed" >&2; exit 1; }
fi
[ "$(id -u)" = 0 ] && ln -sf "$BIN" /usr/local/bin/claude
echo "tools: claude $("$BIN" --version 2>/dev/null | cut -d' ' -f1)"
