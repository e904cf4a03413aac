-- :Acp — the only thing loaded at startup; every module is required on first use.
if vim.g.loaded_acp_lsp then
  return
end
vim.g.loaded_acp_lsp = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.cmd([[command! -nargs=* Acp echohl ErrorMsg | echomsg 'acp_lsp requires Neovim >= 0.11' | echohl None]])
  return
end

vim.api.nvim_create_user_command('Acp', function(cmd)
  require('acp_lsp.commands').run(cmd)
end, {
  nargs = '*',
  range = true,
  desc = 'acp_lsp: coding agents (:Acp new|prompt|cancel|sessions|follow|mode|review|log|...)',
  complete = function(lead, line)
    return require('acp_lsp.commands').complete(lead, line)
  end,
})
