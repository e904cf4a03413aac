-- Neovim init of the demo (scripts/nvim-demo.sh, `acp-lsp demo --editor nvim`): the plugin from
-- this checkout, the server from $ACP_LSP_CMD (a JSON list; default acp-lsp), a session with
-- the demo agent (or $ACP_LSP_AGENT), src/app.py open and a prompt ready to send.
local here = debug.getinfo(1, 'S').source:sub(2)
local plugin = vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(here, ':p'))))
vim.opt.rtp:prepend(plugin)
vim.cmd('runtime plugin/acp_lsp.lua')
-- Probing for a Python provider (the python ftplugin asks) can take seconds: not needed here.
vim.g.loaded_python3_provider = 0

local cmd = { 'acp-lsp' }
if vim.env.ACP_LSP_CMD and vim.env.ACP_LSP_CMD ~= '' then
  cmd = vim.json.decode(vim.env.ACP_LSP_CMD)
end
local agent = vim.env.ACP_LSP_AGENT ~= '' and vim.env.ACP_LSP_AGENT or nil
require('acp_lsp').setup({ cmd = cmd })

if vim.fn.filereadable('src/app.py') == 1 then
  vim.cmd.edit('src/app.py')
end

local PROMPT = 'Look at @src/app.py and add a review note; then run a quick check.'
require('acp_lsp').new_session(agent, { focus = true }, function(session)
  require('acp_lsp.sessions').add_notice(
    session,
    'demo: <C-s> (or <Esc><CR>) sends the prompt below · "slow" + :Acp cancel · :Acp review reject · :help acp_lsp'
  )
  local view = require('acp_lsp.chat').views[session.id]
  vim.api.nvim_buf_set_lines(view.input, 0, -1, false, { PROMPT })
  vim.cmd('startinsert!')
end)
