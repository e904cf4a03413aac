"""Independent review of the acp-lsp server: each test demonstrates one bug (xfail strict)."""
