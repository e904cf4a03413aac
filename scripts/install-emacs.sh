#!/usr/bin/env bash
# Emacs 28 + eglot 1.9 from Debian (emacs-nox, elpa-eglot) for tests/emacs/. Idempotent; when
# apt cannot install them the Emacs tests skip, saying why.
set -uo pipefail
if command -v emacs >/dev/null 2>&1 && [[ -d /usr/share/emacs/site-lisp/elpa/eglot-1.9 || -n "$(ls -d /usr/share/emacs/site-lisp/elpa/eglot-* 2>/dev/null)" ]]; then
    echo "emacs: already present ($(emacs --version | head -n 1))"
    exit 0
fi
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" emacs-nox elpa-eglot ||
    echo "emacs: could not install emacs-nox elpa-eglot; the Emacs tests will skip" >&2
exit 0
