#!/usr/bin/env bash
# The tools `./run release` checks artifacts with, beyond the test extras (twine,
# check-wheel-contents) and the extension's own node_modules:
#   luarocks 3  from Debian (luarocks lint, make, pack), when missing; needs root for apt-get
#   ovsx 1.1.1  from npm into .cache/ovsx (the Open VSX checks of scripts/release_ovsx.mjs)
# Idempotent: a second run takes a second. Prints `ovsx=<dir>` at the end.
set -euo pipefail
OVSX_VERSION="1.1.1"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/.cache/ovsx"
log() { echo "release-tools: $*" >&2; }

if ! command -v luarocks >/dev/null 2>&1; then
    log "apt-get install luarocks"
    bash "$repo_root/scripts/apt-install.sh" luarocks >&2
fi
luarocks --version | head -n 1 >&2

installed="$(node -p "require('$dest/node_modules/ovsx/package.json').version" 2>/dev/null || true)"
if [[ "$installed" != "$OVSX_VERSION" ]]; then
    mkdir -p "$dest"
    # a package.json of its own keeps npm from walking up into the repository
    [[ -f "$dest/package.json" ]] ||
        echo '{"name": "acp-lsp-release-tools", "private": true}' >"$dest/package.json"
    log "npm install ovsx@$OVSX_VERSION"
    (cd "$dest" && npm --no-audit --no-fund --loglevel=error install --no-save "ovsx@$OVSX_VERSION")
fi
log "ovsx $OVSX_VERSION"
echo "ovsx=$dest"
