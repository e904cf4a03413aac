-- vim.lsp.Config of the acp-lsp server, so `vim.lsp.enable('acp_lsp')` works on its own.
-- Options from require('acp_lsp').setup() are layered on top by vim.lsp.config().
return require('acp_lsp.config').lsp_config()
