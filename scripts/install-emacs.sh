#!/usr/bin/env bash
# Emacs 28 + eglot 1.9 from Debian (emacs-nox, elpa-eglot) for tests/emacs/. Idempotent; when
# apt cannot install them the Emacs tests skip, saying why.
set -uo pipefail
if command -v emacs >/dev/null 2>&1 && [[ -d /usr/share/emacs/site-lisp/elpa/eglot-1.9 || -n "$(ls -d /usr/share/emacs/site-lisp/elpa/eglot-* 2>/dev/null)" ]]; then
    echo "emacs: already present ($(emacs --version | head -n 1))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "emacs: apt-get not available; the Emacs tests will skip" >&2
    exit 0
fi
SUDO=""
[[ "$(id -u)" == "0" ]] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq emacs-nox elpa-eglot >/dev/null; }; then
    echo "emacs: could not install emacs-nox elpa-eglot; the Emacs tests will skip" >&2
fi
exit 0
