#!/usr/bin/env bash
# Print CHANGELOG.md's section for a version (its `## <version>` heading up to the next `## `):
# the GitHub release's notes (.github/workflows/release.yml). Exits 1 when there is none, which
# is how `./run release` refuses a version the changelog does not describe.
# Usage: scripts/release-notes.sh VERSION [CHANGELOG]
set -euo pipefail
version="${1:?usage: scripts/release-notes.sh VERSION [CHANGELOG]}"
changelog="${2:-$(dirname "${BASH_SOURCE[0]}")/../CHANGELOG.md}"
awk -v v="$version" '
    /^## / { on = index($0, "## " v " ") == 1 || $0 == "## " v || index($0, "## [" v "]") == 1 }
    on { print; found = 1 }
    END { exit found ? 0 : 1 }' "$changelog"
