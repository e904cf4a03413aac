#!/usr/bin/env bash
# The test suite (called by `./run tests` and by CI). Extra arguments go to pytest.
#   ./run tests           everything: installs the test peers, production agents and real
#                         editors (side by side), lint and types, then every test on parallel
#                         workers with coverage
#   ./run tests --quick   the inner loop: lint, types, unit tests and the end-to-end tests with
#                         the scripted agents (pytest -m quick), no editor or agent installs
# ACP_LSP_TEST_WORKERS sets the pytest-xdist workers (default 4; 0 runs in this process).
# Each phase's time is printed as it ends, and again in a table at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
PY="$ROOT/.venv/bin/python"
say() { printf '\033[1m[acp-lsp tests]\033[0m %s\n' "$*" >&2; }

quick=0
args=()
for arg in "$@"; do
    if [[ "$arg" == "--quick" ]]; then quick=1; else args+=("$arg"); fi
done

# The tests write bytecode, whatever the shell says (some CI images set this): otherwise
# every server and agent a test starts compiles acp_lsp from source again (0.1 s of CPU
# each), and every pytest process rewrites the asserts of every test module it collects
# (half of its collection time)
unset PYTHONDONTWRITEBYTECODE

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/acp-lsp-tests.XXXXXX")"
trap 'rm -rf "$LOGS"' EXIT
declare -A JOBS=()
PHASES=()
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# A step run in the background, its output kept in $LOGS/<name>.log.
start() {
    local name="$1"
    shift
    (
        t0="$(now)"
        rc=0
        "$@" >"$LOGS/$name.log" 2>&1 || rc=$?
        echo "$rc $(since "$t0")" >"$LOGS/$name.done"
        exit "$rc"
    ) &
    JOBS[$name]=$!
}

# Wait for steps; print each one's output and time. Fails (after all are done) when a
# step named in $MUST failed.
finish() {
    local name rc secs failed=()
    for name in "$@"; do
        wait "${JOBS[$name]}" || true
        read -r rc secs <"$LOGS/$name.done"
        say "$name: ${secs} s$([[ "$rc" == 0 ]] || echo " (exit $rc)")"
        sed 's/^/    /' "$LOGS/$name.log" >&2
        PHASES+=("$name|$secs")
        [[ "$rc" == 0 ]] || failed+=("$name")
    done
    if ((${#failed[@]})); then
        say "failed: ${failed[*]}"
        return 1
    fi
}

lint() {
    "$PY" -m ruff check acp_lsp tests bench
    "$PY" -m ruff format --check acp_lsp tests bench
}

types() {
    # the cache beside the installs: a fresh clone on a machine that checked before re-checks
    # only what differs (mypy compares file hashes), 0.3 s instead of 9 s
    "$PY" -m mypy --cache-dir .cache/mypy acp_lsp
    # the macOS and Windows sides of each sys.platform check (acp_lsp/platform); a cache each
    "$PY" -m mypy --cache-dir .cache/mypy-darwin --platform darwin acp_lsp
    "$PY" -m mypy --cache-dir .cache/mypy-win32 --platform win32 acp_lsp
}

debian() {
    # Every Debian package of the suite in one place (the scripts below still install their
    # own when run alone): the agent sandbox, chromium and code-server's build headers first.
    bash scripts/apt-install.sh --no-recommends bubblewrap chromium libkrb5-dev
    bash scripts/apt-install.sh emacs-nox elpa-eglot lua-check luarocks tmux fonts-noto-color-emoji
}

vscode() {
    bash scripts/setup-vscode.sh
    # One .vsix for every code-server test of the run (tests/vscode/tools.py package_vsix);
    # the packaging and release tests still build their own.
    bash scripts/build-vsix.sh "$LOGS/acp-lsp.vsix"
}

neovim_tools() {
    bash editors/neovim/scripts/install-lua-tools.sh
    bash editors/neovim/scripts/fetch-lazy-nvim.sh
    bash editors/neovim/scripts/install-tui-tools.sh
}

t_setup="$(now)"
start lint lint
start types types
start peers bash scripts/fetch-test-peers.sh
if ((quick)); then
    finish peers lint types
else
    start debian debian
    start agents bash scripts/fetch-agents.sh
    if [[ -z "${ACP_LSP_SKIP_VSCODE:-}" ]]; then
        start vscode vscode
    fi
    start neovim-tools neovim_tools
    start emacs bash scripts/install-emacs.sh
    steps=(peers debian agents neovim-tools emacs lint types)
    [[ -n "${JOBS[vscode]:-}" ]] && steps+=(vscode)
    finish "${steps[@]}"
    [[ -f "$LOGS/acp-lsp.vsix" ]] && export ACP_LSP_TEST_VSIX="$LOGS/acp-lsp.vsix"
fi
PHASES+=("setup, lint and types (side by side)|$(since "$t_setup")")

pytest_args=(-p no:cacheprovider -rs)  # -rs: every skip says why
workers="${ACP_LSP_TEST_WORKERS:-4}"
if [[ "$workers" != 0 ]] && [[ " ${args[*]-} " != *" -n "* ]]; then
    pytest_args+=(-n "$workers" --dist loadgroup)
fi
if ((quick)); then
    pytest_args+=(-m quick)
else
    # coverage of acp_lsp in the tests and in every server and agent they start
    pytest_args+=(--cov --cov-report=)
fi
say "pytest ${pytest_args[*]} ${args[*]-}"
t_pytest="$(now)"
rc=0
"$PY" -m pytest "${pytest_args[@]}" ${args[@]+"${args[@]}"} || rc=$?
PHASES+=("pytest|$(since "$t_pytest")")
if ((!quick)) && [[ -f .coverage ]]; then
    "$PY" scripts/coverage_summary.py || true
fi
say "times"
for phase in "${PHASES[@]}"; do
    printf '    %-42s %8s s\n' "${phase%%|*}" "${phase##*|}" >&2
done
exit "$rc"
