--- acp_lsp: coding agents (ACP / AAP) in Neovim through the acp-lsp language server.
---
---   require('acp_lsp').setup({
---     cmd = { 'acp-lsp' },   -- the server (default: the one :Acp install put in stdpath('data'), else PATH)
---     settings = { defaultAgent = 'claude', ... },  -- DESIGN §2, sent as initializationOptions
---   })
local M = {}

M.MIN_VERSION = '0.11'

--- The plugin's version (lua/acp_lsp/version.lua); the server it installs is the same version.
M.version = require('acp_lsp.version')

--- Whether this Neovim can run the plugin; reports why not once.
---@return boolean
function M.supported()
  if vim.fn.has('nvim-' .. M.MIN_VERSION) == 1 then
    return true
  end
  local v = vim.version and vim.version() or { major = 0, minor = 0, patch = 0 }
  vim.notify(
    ('acp_lsp requires Neovim >= %s (this is %d.%d.%d)'):format(M.MIN_VERSION, v.major, v.minor, v.patch),
    vim.log.levels.ERROR
  )
  return false
end

--- Configure the plugin and (unless autostart=false) enable the acp_lsp client for file
--- buffers. Calling it again applies new settings to a running server.
---@param opts? acp_lsp.Options
function M.setup(opts)
  if not M.supported() then
    return
  end
  local config = require('acp_lsp.config')
  local options, problems = config.validate(opts)
  for _, problem in ipairs(problems) do
    vim.notify('acp_lsp.setup: ' .. problem, vim.log.levels.ERROR)
  end
  config.options = options
  require('acp_lsp.attention').setup()
  require('acp_lsp.hunks').setup()
  vim.lsp.config('acp_lsp', {
    cmd = (config.server_cmd()),
    cmd_env = options.cmd_env,
    init_options = vim.deepcopy(options.settings),
  })
  local client = require('acp_lsp.client').get()
  if client then
    client:notify('workspace/didChangeConfiguration', {
      settings = { acp = config.json_settings(options.settings) },
    })
  end
  -- The default statusline (when the user has none) gets the component.
  if options.statusline and vim.o.statusline == '' then
    vim.o.statusline = require('acp_lsp.manage').DEFAULT_STATUSLINE
  end
  if options.autostart then
    vim.lsp.enable('acp_lsp')
  end
end

-- The public API, for mappings and other plugins.

--- Start a session with an agent (the default agent when nil).
---@param agent string?
---@param opts? {focus?: boolean, cwd?: string}
---@param cb? fun(session: acp_lsp.Session)
function M.new_session(agent, opts, cb)
  require('acp_lsp.actions').new_session(agent, opts, cb)
end

--- Send a prompt to the current session (one is started if there is none).
---@param text string
function M.prompt(text)
  require('acp_lsp.actions').prompt(text)
end

--- Cancel the running turn of the current session.
function M.cancel()
  require('acp_lsp.actions').cancel()
end

--- The current session (its chat buffer's, else the last used), or nil.
---@return acp_lsp.Session?
function M.current_session()
  return require('acp_lsp.sessions').current()
end

--- Statusline component: background sessions and open permission prompts ("ACP ● 2 running
--- ⚠ 1"); empty without sessions. E.g. vim.o.statusline = "%f %= %{v:lua.require'acp_lsp'.statusline()}".
---@return string
function M.statusline()
  return require('acp_lsp.manage').statusline()
end

--- The running language client, or nil.
---@return vim.lsp.Client?
function M.client()
  return require('acp_lsp.client').get()
end

return M
