--- The plugin's version: the same as the server's (pyproject.toml, `acp-lsp --version`).
--- It is the one place the Lua side says it; require('acp_lsp').version reads it.
return '0.1.0'
