"""Text primitives for agent writes: LSP lines and positions, line diffs, minimal
TextEdits and 3-way merges. The public entry point is :mod:`acp_lsp.textedits`."""
