#!/usr/bin/env bash
# Install the Lua tooling the Neovim plugin is checked with (tests/nvim/test_lua_quality.py):
#   stylua 2.5.2   from npm (@johnnymorganz/stylua-bin, the binary ships in the package)
#                  into .cache/lua-tools/node_modules/.bin/stylua
#   luacheck 1.1.0 from Debian (lua-check), when running as root and it is missing
# Idempotent. Only the npm registry and Debian's archive are contacted.
set -euo pipefail

STYLUA_VERSION="2.5.2"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
dest="$repo_root/.cache/lua-tools"

if [[ "$("$dest/node_modules/.bin/stylua" --version 2>/dev/null)" != "stylua $STYLUA_VERSION" ]]; then
    mkdir -p "$dest"
    npm install --prefix "$dest" --no-audit --no-fund --no-save --silent \
        "@johnnymorganz/stylua-bin@$STYLUA_VERSION"
fi
"$dest/node_modules/.bin/stylua" --version

command -v luacheck >/dev/null 2>&1 ||
    bash "$repo_root/scripts/apt-install.sh" lua-check || echo "luacheck missing: apt-get install lua-check" >&2
command -v luacheck >/dev/null && luacheck --version | head -1
