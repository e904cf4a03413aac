--- :checkhealth acp_lsp — Neovim version, the server command and its version, the agents.
local install = require('acp_lsp.install')
local version = require('acp_lsp.version')

local M = {}

--- `acp-lsp doctor --no-agents`: config files and the data directory, as the server reads them.
local function doctor(cmd, health)
  local argv = vim.list_extend(vim.deepcopy(cmd), { 'doctor', '--no-agents', '--workspace', vim.fn.getcwd() })
  local ok, proc = pcall(vim.system, argv, { text = true })
  if not ok then
    return health.warn('acp-lsp doctor could not run: ' .. tostring(proc))
  end
  local res = proc:wait(20000)
  local rows = 0
  for line in (res.stdout or ''):gmatch('[^\n]+') do
    local check, state, detail = line:match('^  (%S.-)%s%s+(%S+)%s%s+(.*)$')
    if check then
      rows = rows + 1
      local text = ('doctor: %s: %s'):format(check, detail)
      if state == 'FAIL' then
        health.error(text)
      elseif state == 'warn' then
        health.warn(text)
      else
        health.ok(text)
      end
    end
  end
  if rows == 0 then
    health.info(
      'acp-lsp doctor (a newer server has it): ' .. vim.trim((res.stderr or '') .. (res.stdout or ''))
    )
  end
end

--- Where the server command comes from, in words.
local function server_source(cmd)
  local where = vim.fn.exepath(cmd[1])
  if require('acp_lsp.config').options.cmd then
    return where .. ', setup() cmd'
  elseif vim.fs.normalize(where) == vim.fs.normalize(install.exe()) then
    local stamp = install.installed() or {}
    return ('installed by the plugin with %s for version %s'):format(
      stamp.method or '?',
      stamp.version or '?'
    )
  elseif vim.deep_equal(cmd, { 'acp-lsp' }) then
    return where .. ', found on PATH'
  end
  return where .. ', vim.lsp.config()'
end

function M.check()
  local health = vim.health
  health.start('acp_lsp')
  health.ok('plugin version ' .. version)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim >= 0.11 is required (this is ' .. tostring(vim.version()) .. ')')
    return
  end

  local config = require('acp_lsp.config')
  local opts = config.options
  health.info(
    opts.permission_ui == 'select' and 'permission questions: vim.ui.select (permission_ui = "select")'
      or 'permission questions: inline in the chat, keys 1-9 (permission_ui = "inline")'
  )
  local tools = table.concat(require('acp_lsp.editor_tools').TOOLS, ', ')
  if vim.tbl_get(opts.settings or {}, 'editorTools', 'enabled') ~= false then -- on by default
    health.ok('editor tools for agents on; Neovim answers ' .. tools)
  else
    health.info(
      'editor tools for agents off (settings.editorTools.enabled = false); Neovim would answer ' .. tools
    )
  end
  if vim.o.statusline:find("acp_lsp'.statusline()", 1, true) then
    health.ok('statusline shows acp_lsp.statusline()')
  else
    health.info("statusline: add %{v:lua.require'acp_lsp'.statusline()} to see background sessions")
  end
  local cfg = vim.lsp.config.acp_lsp
  if not cfg then
    health.error('no vim.lsp config "acp_lsp": editors/neovim is not on runtimepath')
    return
  end
  local cmd = cfg.cmd
  if type(cmd) ~= 'table' then
    health.info('server cmd is a function; cannot check it')
  elseif vim.fn.executable(cmd[1]) == 0 then
    health.error(('server not found: %q is not executable'):format(cmd[1]), {
      (':Acp install (or the lazy.nvim build step) installs it at the plugin version %s with uv or Python %s+'):format(
        version,
        install.MIN_PYTHON
      ),
      'or set `cmd` in require("acp_lsp").setup()',
    })
  else
    health.ok(('server: %s (%s)'):format(table.concat(cmd, ' '), server_source(cmd)))
    local said, err = install.server_version(cmd)
    if not said then
      health.warn('`' .. table.concat(cmd, ' ') .. ' --version` failed: ' .. tostring(err))
    elseif said:match('%S+$') ~= version then
      health.warn(
        ('server version: %s, not the plugin version %s'):format(said, version),
        { ':Acp install installs the server at the plugin version (when setup() sets no `cmd`)' }
      )
      doctor(cmd, health)
    else
      health.ok('server version: ' .. said)
      doctor(cmd, health)
    end
  end
  health.info('root markers: ' .. table.concat(config.options.root_markers, ', '))

  local client = require('acp_lsp.client').get()
  if not client then
    health.info('server not running (it starts with the first file buffer or :Acp command)')
    return
  end
  local acp = vim.tbl_get(client.server_capabilities or {}, 'experimental', 'acp')
  if acp then
    health.ok(
      ('server running (client %d), acp protocol version %s'):format(client.id, tostring(acp.version))
    )
    for _, problem in
      ipairs(
        install.mismatches({ capabilities = client.server_capabilities, serverInfo = client.server_info })
      )
    do
      health.warn(problem)
    end
  else
    health.error('the running server does not advertise capabilities.experimental.acp')
    return
  end
  local res = client:request_sync('acp/listAgents', vim.empty_dict(), 5000, 0)
  if not res or res.err then
    health.warn('acp/listAgents failed: ' .. (res and vim.inspect(res.err) or 'timeout'))
    return
  end
  local agents = res.result and res.result.agents or {}
  if #agents == 0 then
    health.warn('no agents configured')
  end
  for _, a in ipairs(agents) do
    local flags = {}
    if a.default then
      table.insert(flags, 'default')
    end
    table.insert(flags, a.running and 'running' or 'not started')
    health.ok(
      ('agent %s (%s, %s): %s'):format(
        a.name,
        a.title or a.name,
        a.protocol or '?',
        table.concat(flags, ', ')
      )
    )
  end
end

return M
