#!/usr/bin/env bash
# Install the production ACP agents at the versions the presets pin (acp_lsp/presets.py)
# into .cache/agents/<name>/, for tests/e2e/test_production_agents.py. Idempotent. When the
# npm registry cannot be reached the agents are left out and their tests skip, saying why.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/.cache/agents"
py="$repo_root/.venv/bin/python"
[[ -x "$py" ]] || py="$(command -v python3)"
mkdir -p "$dest"
# bubblewrap: acp-lsp's agent sandbox (sandbox = "workspace", tests/*/test_agent_sandbox.py,
# test_production_sandbox.py) and Codex's sandboxed modes (read-only, auto) run agents in it;
# without it those tests skip, saying why. Installed first: they need no npm.
if ! command -v bwrap >/dev/null 2>&1; then
    if bash "$repo_root/scripts/apt-install.sh" bubblewrap >/dev/null; then
        echo "production agents: installed bubblewrap (agent sandbox, Codex's sandbox)"
    else
        echo "production agents: could not install bubblewrap; the sandbox tests skip" >&2
    fi
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "production agents: npm not found; their tests will skip" >&2
    exit 0
fi
PYTHONPATH="$repo_root" "$py" -c '
from acp_lsp.presets import PRODUCTION_AGENTS
for a in PRODUCTION_AGENTS:
    print(a.name, a.spec)
' | while read -r name spec; do
    out="$dest/$name"
    if [[ -f "$out/.spec" && "$(cat "$out/.spec")" == "$spec" ]]; then
        echo "production agents: $spec already present"
        continue
    fi
    rm -rf "$out"
    mkdir -p "$out"
    echo '{"name": "acp-lsp-agent", "private": true}' >"$out/package.json"
    if npm install --prefix "$out" --no-audit --no-fund --loglevel=error "$spec" >"$out/npm.log" 2>&1; then
        echo "$spec" >"$out/.spec"
        echo "production agents: installed $spec"
    else
        echo "production agents: could not install $spec (tests skip): $(tail -n 3 "$out/npm.log")" >&2
    fi
done
exit 0
