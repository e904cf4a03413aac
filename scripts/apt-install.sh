#!/usr/bin/env bash
# Install the Debian packages of the arguments that are missing, one apt-get at a time on this
# machine (a lock: the test setup runs its installs side by side). Exits 1, naming them, when
# some cannot be installed; callers that can do without decide what that means.
# Usage: scripts/apt-install.sh [--no-recommends] PACKAGE...
set -uo pipefail
opts=()
if [[ "${1:-}" == "--no-recommends" ]]; then
    opts+=(--no-install-recommends)
    shift
fi
missing() {
    local pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || echo "$pkg"
    done
}
[[ -z "$(missing "$@")" ]] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-install: no apt-get for: $(missing "$@" | tr '\n' ' ')" >&2
    exit 1
fi
SUDO=()
[[ "$(id -u)" == "0" ]] || SUDO=(sudo -n)
exec 9>"${TMPDIR:-/tmp}/acp-lsp-apt.lock"
flock 9
mapfile -t need < <(missing "$@")
((${#need[@]} == 0)) && exit 0
export DEBIAN_FRONTEND=noninteractive
# The package lists may be stale (a new container): update once when the install fails.
if ! "${SUDO[@]}" apt-get install -y -qq "${opts[@]}" "${need[@]}" >/dev/null 2>&1; then
    "${SUDO[@]}" apt-get update -qq >/dev/null 2>&1
    if ! "${SUDO[@]}" apt-get install -y -qq "${opts[@]}" "${need[@]}" >/dev/null; then
        echo "apt-install: could not install ${need[*]}" >&2
        exit 1
    fi
fi
echo "apt-install: installed ${need[*]}"
