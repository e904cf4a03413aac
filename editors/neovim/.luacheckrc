std = 'luajit'
globals = { 'vim' }
max_line_length = 120
exclude_files = { 'lua/acp_lsp/types.lua' }
