"""Which part of a workspace/didChangeConfiguration payload is acp-lsp's."""

from __future__ import annotations

from acp_lsp.features.lifecycle import _section


def test_empty_settings_are_no_settings() -> None:
    # eglot 1.9 sends {settings: {}} right after initialized: it must not wipe the
    # initializationOptions (the agents configured there)
    assert _section({}) is None
    assert _section(None) is None
    assert _section({"acp": {}}) == {}  # an explicit, empty acp section is the user's word


def test_bare_or_under_acp() -> None:
    assert _section({"defaultAgent": "x"}) == {"defaultAgent": "x"}
    assert _section({"acp": {"defaultAgent": "y"}, "other": 1}) == {"defaultAgent": "y"}
