"""``acp-lsp demo``: the built-in offline agent (``agent``), its sample project
(``workspace``), and the editors it runs in: the terminal (``cli``, drawn by ``render``) and
Neovim (``nvim``). The server never imports any of it (tests/unit/test_import_graph.py)."""
