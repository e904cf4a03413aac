#!/usr/bin/env bash
# tmux (the Neovim TUI of tests/nvim/test_screenshots.py and bench/nvim_bench.py), Chromium
# (when .cache has none) and an emoji font (the chat's 📎 and ⚠ in screenshots), from Debian.
# Idempotent; when apt cannot install them the screenshot tests skip, saying why.
set -uo pipefail
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
cache="$(dirname "$0")/../../../.cache"
if [[ -z "$(find -L "$cache" -path '*chrome-linux*/chrome' -type f -print -quit 2>/dev/null)" ]] \
    && ! command -v chromium >/dev/null 2>&1; then
    need+=(chromium)
fi
fc-list 2>/dev/null | grep -qi emoji || need+=(fonts-noto-color-emoji)
if [[ ${#need[@]} -eq 0 ]]; then
    echo "tmux, chromium, emoji font: already present"
    exit 0
fi
bash "$(dirname "$0")/../../../scripts/apt-install.sh" "${need[@]}" ||
    echo "could not install ${need[*]}; the Neovim screenshot tests will skip" >&2
exit 0
