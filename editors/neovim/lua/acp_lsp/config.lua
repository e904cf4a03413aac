--- Options of require('acp_lsp').setup(), their validation, and the vim.lsp.Config built from them.
local protocol = require('acp_lsp.protocol')

local M = {}

---@type acp_lsp.Options
M.defaults = {
  cmd = nil, -- the server the plugin installed (install.lua), else acp-lsp on PATH
  cmd_env = nil,
  settings = {},
  root_markers = { 'acp-lsp.toml', '.git' },
  autostart = true,
  permission_ui = 'inline',
  statusline = true,
  notify_when_away = true, -- a turn's end or a question waiting, told when Neovim lost focus
  chat = {
    position = 'right',
    size = 0.4,
    prompt_height = 6,
    terminal_lines = 12,
  },
}

---@type acp_lsp.Options
M.options = vim.deepcopy(M.defaults)

--- Types of the server settings DESIGN §2 documents; other keys go to the server unchecked
--- (it reports bad ones by name itself).
local setting_types = {
  agents = 'table',
  defaultAgent = 'string',
  followAlong = 'boolean',
  followDebounceMs = 'number',
  permissions = 'table',
  fs = 'table',
  reviewWrites = 'boolean',
}

local option_types = {
  cmd = 'table',
  cmd_env = 'table',
  settings = 'table',
  root_markers = 'table',
  autostart = 'boolean',
  chat = 'table',
  permission_ui = 'string',
  statusline = 'boolean',
  notify_when_away = 'boolean',
}

local chat_types = {
  position = 'string',
  size = 'number',
  prompt_height = 'number',
  terminal_lines = 'number',
}

local function check_types(prefix, tbl, types, problems)
  for key, value in pairs(tbl) do
    local want = types[key]
    if want and type(value) ~= want then
      table.insert(problems, ('%s%s: expected %s, got %s'):format(prefix, key, want, type(value)))
      tbl[key] = nil
    end
  end
end

--- Validate user options; a bad key is reported by name and replaced by its default.
---@param user table?
---@return acp_lsp.Options options, string[] problems
function M.validate(user)
  local problems = {}
  if user == nil then
    return vim.deepcopy(M.defaults), problems
  end
  if type(user) ~= 'table' then
    return vim.deepcopy(M.defaults), { ('setup() expects a table, got %s'):format(type(user)) }
  end
  user = vim.deepcopy(user)
  for key in pairs(user) do
    if option_types[key] == nil then
      table.insert(problems, ('unknown option %q'):format(tostring(key)))
      user[key] = nil
    end
  end
  check_types('', user, option_types, problems)
  if user.cmd then
    if #user.cmd == 0 or not vim.iter(user.cmd):all(function(v)
      return type(v) == 'string'
    end) then
      table.insert(problems, 'cmd: expected a non-empty list of strings')
      user.cmd = nil
    end
  end
  if user.settings then
    check_types('settings.', user.settings, setting_types, problems)
  end
  if user.chat then
    check_types('chat.', user.chat, chat_types, problems)
    local pos = user.chat.position
    if pos and not vim.tbl_contains({ 'right', 'left', 'above', 'below', 'tab' }, pos) then
      table.insert(problems, ('chat.position: expected right|left|above|below|tab, got %q'):format(pos))
      user.chat.position = nil
    end
  end
  if user.permission_ui and user.permission_ui ~= 'inline' and user.permission_ui ~= 'select' then
    table.insert(problems, ('permission_ui: expected inline|select, got %q'):format(user.permission_ui))
    user.permission_ui = nil
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), user)
  -- Lists are values, not merged by index.
  merged.cmd = user.cmd
  merged.root_markers = user.root_markers or vim.deepcopy(M.defaults.root_markers)
  return merged, problems
end

--- Root of the workspace a buffer belongs to: nearest root marker, else Neovim's cwd.
---@param bufnr integer
---@return string
function M.root_for(bufnr)
  return vim.fs.root(bufnr, M.options.root_markers) or vim.fn.getcwd()
end

local LIST_KEYS = { args = true, mcpServers = true, rules = true, trustedTools = true }

--- Settings ready for JSON: an empty Lua table would encode as `[]`, so empty tables that
--- stand for objects become vim.empty_dict().
---@param value any
---@param key string?
---@return any
function M.json_settings(value, key)
  if type(value) ~= 'table' then
    return value
  end
  if next(value) == nil then
    return LIST_KEYS[key] and {} or vim.empty_dict()
  end
  local out = {}
  for k, v in pairs(value) do
    out[k] = M.json_settings(v, type(k) == 'string' and k or nil)
  end
  return out
end

local function handler(name)
  return function(...)
    return require('acp_lsp.handlers')[name](...)
  end
end

--- The server command and where it comes from: setup()'s `cmd`, else the server the plugin
--- installed (at its own version), else acp-lsp on PATH.
---@return string[] cmd, string source
function M.server_cmd()
  if M.options.cmd then
    return vim.deepcopy(M.options.cmd), 'setup() cmd'
  end
  local exe = require('acp_lsp.install').exe()
  if vim.fn.executable(exe) == 1 then
    return { exe }, 'installed by the plugin'
  end
  return { 'acp-lsp' }, 'PATH'
end

--- The base vim.lsp.Config (lsp/acp_lsp.lua returns it; setup() layers the user's options).
---@return vim.lsp.Config
function M.lsp_config()
  local n, r = protocol.notifications, protocol.server_requests
  return {
    cmd = (M.server_cmd()),
    cmd_env = M.options.cmd_env,
    root_dir = function(bufnr, on_dir)
      on_dir(M.root_for(bufnr))
    end,
    -- One bridge per Neovim: every buffer and every session share the same server.
    reuse_client = function(client, config)
      return client.name == config.name and not client:is_stopped()
    end,
    capabilities = {
      experimental = {
        acp = vim.tbl_extend('force', vim.deepcopy(protocol.client_capability), {
          editorTools = vim.deepcopy(require('acp_lsp.editor_tools').TOOLS),
        }),
      },
      window = { showDocument = { support = true } },
      -- Neovim's core applies documentChanges (versioned text edits, create / rename / delete
      -- files) but does not say so: without it the server sends unversioned `changes`, which
      -- a buffer Neovim reloaded meanwhile would take twice, and cannot delete an open file.
      workspace = { workspaceEdit = { documentChanges = true } },
    },
    init_options = vim.deepcopy(M.options.settings),
    on_init = function(client, result)
      require('acp_lsp.install').check_server(result)
      require('acp_lsp.client').attach_all(client)
    end,
    on_exit = function(code)
      vim.schedule(function()
        require('acp_lsp.permissions').drop_all()
        require('acp_lsp.sessions').server_exited(code)
      end)
    end,
    before_init = function(params)
      local settings = params.initializationOptions
      if type(settings) == 'table' and next(settings) == nil then
        -- No settings: none are sent (the server warns that an empty object is not one).
        params.initializationOptions = nil
      else
        params.initializationOptions = M.json_settings(settings or {})
      end
    end,
    handlers = {
      [n.session_update] = handler('session_update'),
      [n.session_status] = handler('session_status'),
      [n.terminal_output] = handler('terminal_output'),
      [r.request_permission] = handler('request_permission'),
      [r.save_document] = handler('save_document'),
      [r.elicitation] = handler('elicitation'),
      [n.elicitation_complete] = handler('elicitation_complete'),
      [n.documents_synced] = handler('documents_synced'),
      ['window/showDocument'] = handler('show_document'),
      ['workspace/applyEdit'] = handler('apply_edit'),
      ['window/logMessage'] = handler('log_message'),
      ['window/showMessage'] = handler('show_message'),
      ['workspace/configuration'] = handler('configuration'),
      ['acp/editorTool'] = handler('editor_tool'),
    },
  }
end

return M
