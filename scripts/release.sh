#!/usr/bin/env bash
# `./run release [--real] [--out DIR]`: build every artifact of this version into one folder
# (artifacts/release/<version>/ unless --out), check each, write SHA256SUMS, and print the
# commands that publish them. It never publishes.
#   - the version: one across all files (scripts/release_versions.py); CHANGELOG.md has its section
#   - wheel + sdist: python -m build; twine check --strict; check-wheel-contents
#   - the .vsix: scripts/build-vsix.sh; the Open VSX checks (scripts/release_ovsx.mjs, ovsx)
#   - the Neovim plugin: its tarball (the rockspec's source), `luarocks lint`, a rock built
#     from that tarball with `luarocks make` and packed with `luarocks pack`
#   - SHA256SUMS over all of them, verified with `sha256sum -c`
# Dry by default (the working tree as it is). --real is for the tagged build (the release
# workflow): it also requires a clean tree whose HEAD carries the tag v<version>.
# (grep reads whole listings: grep -q would end the pipe early, a failure under pipefail)
# Each check prints `ok: <what>`; the last line is `release <version>: N artifacts, all checks passed`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
BIN="$(dirname "$PY")"
real=0
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --real) real=1 ;;
        --out) out="${2:?--out DIR}"; shift ;;
        --out=*) out="${1#--out=}" ;;
        *) echo "usage: ./run release [--real] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
say() { printf '\033[1m[acp-lsp release]\033[0m %s\n' "$*" >&2; }
ok() { echo "ok: $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

version="$("$PY" scripts/release_versions.py)" || fail "the version differs between files (above)"
ok "one version, $version, in every file that carries it"
bash scripts/release-notes.sh "$version" >/dev/null || fail "CHANGELOG.md has no '## $version' section"
ok "CHANGELOG.md has a section for $version"
if ((real)); then
    [[ -z "$(git status --porcelain)" ]] || fail "--real needs a clean working tree"
    git tag --points-at HEAD | grep -x "v$version" >/dev/null || fail "--real needs HEAD tagged v$version"
    ok "clean tree, HEAD tagged v$version"
    # the rock's source is the tarball this release attaches: the rockspec must name this repository
    if [[ -n "${GITHUB_REPOSITORY:-}" ]]; then
        grep -F "github.com/$GITHUB_REPOSITORY/releases/download/v$version/" editors/neovim/*.rockspec \
            >/dev/null || fail "the rockspec's source url is not github.com/$GITHUB_REPOSITORY's release"
        ok "the rockspec's source is this repository's v$version release"
    fi
elif [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then
    say "dry run of a working tree with uncommitted changes"
fi

out="$(realpath -m "${out:-artifacts/release/$version}")"
rm -rf "$out"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tools="$(bash scripts/release-tools.sh | sed -n 's/^ovsx=//p')" || fail "scripts/release-tools.sh (luarocks, ovsx)"

say "wheel and sdist"
"$PY" -m build --sdist --wheel --outdir "$out" . >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; fail "python -m build"; }
wheel="$out/acp_lsp-$version-py3-none-any.whl"
sdist="$out/acp_lsp-$version.tar.gz"
[[ -f "$wheel" && -f "$sdist" ]] || fail "python -m build made $(ls "$out")"
"$BIN/twine" check --strict "$wheel" "$sdist" || fail "twine check --strict"
ok "twine check --strict: wheel and sdist"
"$BIN/check-wheel-contents" "$wheel" || fail "check-wheel-contents"
ok "check-wheel-contents"
unzip -l "$wheel" | grep "acp_lsp-$version.dist-info/licenses/LICENSE" >/dev/null || fail "the wheel has no LICENSE"
tar -tzf "$sdist" | grep -x "acp_lsp-$version/LICENSE" >/dev/null || fail "the sdist has no LICENSE"
ok "LICENSE in the wheel and the sdist"

say "the VS Code extension"
vsix="$out/acp-lsp-$version.vsix"
bash scripts/build-vsix.sh "$vsix" >"$work/vsix.log" 2>&1 ||
    { tail -n 30 "$work/vsix.log" >&2; fail "vsce package"; }
unzip -l "$vsix" | grep "extension/server/acp_lsp-$version-py3-none-any.whl" >/dev/null ||
    fail "the .vsix does not ship the acp-lsp $version wheel"
ok "vsce package: $(basename "$vsix") with the server's wheel"
node scripts/release_ovsx.mjs "$tools" "$vsix" || fail "Open VSX checks"
ok "Open VSX checks"

say "the Neovim plugin as a rock"
spec_src="$(ls editors/neovim/*.rockspec)"
rock_name="acp-lsp.nvim-$version"
luarocks lint "$spec_src" || fail "luarocks lint $spec_src"
ok "luarocks lint $(basename "$spec_src")"
# the plugin folder as committed or not yet ignored (no caches) and the LICENSE, under the name
# the rockspec's source has
{ git ls-files -co --exclude-standard -- editors/neovim | grep -v '\.rockspec$'; echo LICENSE; } |
    tar -czf "$out/$rock_name.tar.gz" --transform "s,^editors/neovim,$rock_name,;s,^LICENSE\$,$rock_name/LICENSE," -T -
cp "$spec_src" "$out/"
mkdir -p "$work/rock"
tar -xzf "$out/$rock_name.tar.gz" -C "$work/rock"
(cd "$work/rock/$rock_name" && luarocks make --tree "$work/tree" "$out/$(basename "$spec_src")") \
    >"$work/rock.log" 2>&1 || { cat "$work/rock.log" >&2; fail "luarocks make"; }
(cd "$out" && luarocks pack --tree "$work/tree" acp-lsp.nvim "$version-1") >>"$work/rock.log" 2>&1 ||
    { cat "$work/rock.log" >&2; fail "luarocks pack"; }
rock="$out/acp-lsp.nvim-$version-1.all.rock"
[[ -f "$rock" ]] || fail "luarocks pack made no $rock"
for f in lua/acp_lsp/init.lua lua/acp_lsp/version.lua plugin/acp_lsp.lua doc/acp_lsp.txt lsp/acp_lsp.lua; do
    unzip -l "$rock" | grep " $f\$" >/dev/null || fail "the rock has no $f"
done
ok "luarocks make + pack: $(basename "$rock")"

say "checksums"
(cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort |
    xargs sha256sum >SHA256SUMS && sha256sum --quiet -c SHA256SUMS) || fail "sha256sum -c"
count="$(wc -l <"$out/SHA256SUMS")"
ok "SHA256SUMS over $count artifacts verifies"

cat <<EOF

Artifacts in $out:
$(cd "$out" && ls -1 | sed 's/^/  /')

Publishing is manual. From $out, after checking the list above:
  git tag -a v$version -m "acp-lsp $version" && git push origin v$version   # the release workflow builds these files again and attaches them
  $BIN/twine upload acp_lsp-$version-py3-none-any.whl acp_lsp-$version.tar.gz
  npx @vscode/vsce publish --packagePath acp-lsp-$version.vsix      # needs VSCE_PAT
  npx ovsx publish acp-lsp-$version.vsix                            # needs OVSX_PAT
  luarocks upload acp-lsp.nvim-$version-1.rockspec --api-key=<key>
EOF
echo "release $version: $count artifacts, all checks passed"
