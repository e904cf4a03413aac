#!/usr/bin/env bash
# Fetch the real third-party ACP peers the tests run against (reference/acp.md §12):
#   DEST/acp-python-examples/{echo_agent.py,agent.py}   from the sdist of agent-client-protocol
#   DEST/ts-sdk/node_modules/@agentclientprotocol/sdk/  with dist/examples/agent.js and
#                                                        schema/schema.json (ACP v1 schema)
#   DEST/ts-sdk-2/node_modules/@agentclientprotocol/sdk/  the newest SDK (version in
#       docs/acp-schema-versions.json): schema/v1/schema{,.unstable}.json, which the tests
#       validate every frame the bridge sends against
# Usage: scripts/fetch-test-peers.sh [DEST]   (default: .cache/peers under the repository root)
# Idempotent: what is already in place is not fetched again. Only the package registries
# (PyPI through pip, npm through npm) are contacted.
set -euo pipefail

ACP_PY_VERSION="0.12.1"
ACP_TS_VERSION="1.9.0"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$repo_root/.cache/peers}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

pick_python() {
    if [[ -x "$repo_root/.venv/bin/python" ]]; then
        echo "$repo_root/.venv/bin/python"
    else
        command -v python3
    fi
}

fetch_python_examples() {
    local out="$dest/acp-python-examples"
    local stamp="$out/.version"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$ACP_PY_VERSION" && -f "$out/echo_agent.py" && -f "$out/agent.py" ]]; then
        echo "python examples: already present ($out)"
        return
    fi
    local py work
    py="$(pick_python)"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' RETURN
    "$py" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
        --dest "$work" "agent-client-protocol==$ACP_PY_VERSION"
    local sdist
    sdist="$(find "$work" -maxdepth 1 -name 'agent_client_protocol-*.tar.gz' | head -n 1)"
    if [[ -z "$sdist" ]]; then
        echo "error: sdist of agent-client-protocol==$ACP_PY_VERSION not downloaded" >&2
        return 1
    fi
    tar -xzf "$sdist" -C "$work"
    local src="$work/agent_client_protocol-$ACP_PY_VERSION/examples"
    mkdir -p "$out"
    cp "$src/echo_agent.py" "$src/agent.py" "$out/"
    echo "$ACP_PY_VERSION" >"$stamp"
    echo "python examples: $out"
}

fetch_ts_sdk() {
    local out="$dest/ts-sdk"
    local pkg="$out/node_modules/@agentclientprotocol/sdk"
    if [[ -f "$pkg/package.json" && -f "$pkg/dist/examples/agent.js" && -f "$pkg/schema/schema.json" ]] &&
        grep -q "\"version\": \"$ACP_TS_VERSION\"" "$pkg/package.json"; then
        echo "ts sdk: already present ($pkg)"
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "error: npm not found; install Node.js 20+ to fetch @agentclientprotocol/sdk" >&2
        return 1
    fi
    mkdir -p "$out"
    # A package.json of its own keeps npm from walking up into the repository.
    [[ -f "$out/package.json" ]] || echo '{"name": "acp-lsp-test-peers", "private": true}' >"$out/package.json"
    npm install --prefix "$out" --no-audit --no-fund --loglevel=error \
        "@agentclientprotocol/sdk@$ACP_TS_VERSION"
    for f in dist/examples/agent.js schema/schema.json; do
        if [[ ! -f "$pkg/$f" ]]; then
            echo "error: $pkg/$f missing after npm install" >&2
            return 1
        fi
    done
    echo "ts sdk: $pkg"
}

fetch_schema_sdk() {
    local version out pkg
    version="$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$repo_root/docs/acp-schema-versions.json" | head -n 1)"
    out="$dest/ts-sdk-2"
    pkg="$out/node_modules/@agentclientprotocol/sdk"
    if [[ -f "$pkg/schema/v1/schema.unstable.json" ]] && grep -q "\"version\": \"$version\"" "$pkg/package.json"; then
        echo "schema sdk: already present ($pkg, $version)"
        return
    fi
    mkdir -p "$out"
    [[ -f "$out/package.json" ]] || echo '{"name": "acp-lsp-schema-sdk", "private": true}' >"$out/package.json"
    npm install --prefix "$out" --no-audit --no-fund --loglevel=error "@agentclientprotocol/sdk@$version"
    [[ -f "$pkg/schema/v1/schema.json" ]] || { echo "error: $pkg/schema/v1/schema.json missing" >&2; return 1; }
    echo "schema sdk: $pkg ($version)"
}

fetch_python_examples
fetch_ts_sdk
fetch_schema_sdk
