#!/usr/bin/env bash
# The whole test suite (called by `./run tests` and by CI): installs the test peers and the
# real editors, then lint, types, and every test. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
PY="$ROOT/.venv/bin/python"
say() { printf '\033[1m[acp-lsp tests]\033[0m %s\n' "$*" >&2; }

say "fetching the third-party ACP peers (Python SDK examples, TypeScript SDK)"
bash scripts/fetch-test-peers.sh
say "installing the production agents at their pinned versions (Claude, Codex, Gemini CLI, Qwen Code)"
bash scripts/fetch-agents.sh

if [[ -z "${ACP_LSP_SKIP_VSCODE:-}" ]]; then
    say "installing code-server, Node 24, chromium and the extension's dependencies"
    bash scripts/setup-vscode.sh
fi
say "installing Emacs 28 + eglot (Debian emacs-nox, elpa-eglot) for the plain-LSP tests"
bash scripts/install-emacs.sh
say "installing stylua and luacheck (Neovim plugin lint)"
bash editors/neovim/scripts/install-lua-tools.sh
say "fetching lazy.nvim from PyPI (the plugin's lazy.nvim install test)"
bash editors/neovim/scripts/fetch-lazy-nvim.sh >/dev/null
say "installing tmux, chromium and an emoji font (Neovim TUI screenshots, bench/nvim_bench.py)"
bash editors/neovim/scripts/install-tui-tools.sh

say "ruff"
"$PY" -m ruff check acp_lsp tests bench
"$PY" -m ruff format --check acp_lsp tests bench
say "mypy --strict"
"$PY" -m mypy acp_lsp

say "pytest"
"$PY" -m pytest -p no:cacheprovider -rs "$@"  # -rs: every skip says why
