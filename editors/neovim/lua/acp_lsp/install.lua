--- The server at the plugin's own version, installed from the plugin's checkout (the
--- repository root is the Python package; without one, PyPI's acp-lsp of that version) into
--- a private venv, stdpath('data')/acp-lsp/venv: made by uv when it is on PATH, else by
--- Python 3.11+'s venv + pip. The lazy.nvim `build`
--- step, `:Acp install` and the first start without a server run it; with no `cmd` in
--- setup() the plugin uses this server before any acp-lsp on PATH. Where Python, uv and the
--- venv's programs are on each platform is acp_lsp.locate.
local locate = require('acp_lsp.locate')
local log = require('acp_lsp.log')
local version = require('acp_lsp.version')

local M = {}

M.MIN_PYTHON = '3.11'

--- The platform the installer decides for (tests set another).
M.sysname = vim.uv.os_uname().sysname

--- The real file system's check for acp_lsp.locate.
---@param file string
---@return boolean
local function runnable(file)
  return vim.fn.executable(file) == 1
end

--- The repository root: this file is <root>/editors/neovim/lua/acp_lsp/install.lua.
---@return string
function M.root()
  return vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h:h:h')
end

---@return string
function M.dir()
  return vim.fs.joinpath(vim.fn.stdpath('data'), 'acp-lsp')
end

---@return string
function M.venv()
  return vim.fs.joinpath(M.dir(), 'venv')
end

local function bin(name)
  return locate.venv_bin(M.venv(), name, M.sysname)
end

--- The installed server's executable (it may not exist).
---@return string
function M.exe()
  return bin('acp-lsp')
end

local function stamp_file()
  return vim.fs.joinpath(M.dir(), 'install.json')
end

--- What the last install recorded ({version, method, source}), or nil without an installed server.
---@return {version?: string, method?: string, source?: string}?
function M.installed()
  if vim.fn.executable(M.exe()) == 0 then
    return nil
  end
  local ok, data = pcall(function()
    return vim.json.decode(table.concat(vim.fn.readfile(stamp_file()), '\n'))
  end)
  return ok and type(data) == 'table' and data or {}
end

--- Whether a server must be installed before one can start: no `cmd` in setup(), and the
--- plugin's own install is from another plugin version, or there is none and the configured
--- command (acp-lsp on PATH) is not there either.
---@return boolean
function M.needed()
  if require('acp_lsp.config').options.cmd then
    return false
  end
  local stamp = M.installed()
  if stamp then
    return stamp.version ~= version
  end
  local cmd = vim.tbl_get(vim.lsp.config, 'acp_lsp', 'cmd')
  return type(cmd) == 'table' and vim.fn.executable(cmd[1]) == 0
end

local function python_version(python)
  local ok, proc = pcall(
    vim.system,
    vim.list_extend(vim.deepcopy(python), { '-c', 'import sys; print("%d.%d" % sys.version_info[:2])' }),
    { text = true }
  )
  if not ok then
    return nil
  end
  local res = proc:wait(10000)
  return res.code == 0 and vim.trim(res.stdout or '') or nil
end

--- The first Python 3.11+ (locate.python_search: PATH, and on Windows `py -3` and python.org's
--- folders, on macOS Homebrew's and python.org's); else nil and what was found instead.
---@return string[]? python the command line (`{ 'C:/Windows/py.exe', '-3' }`), string[] seen
function M.find_python()
  local seen = {}
  local search = locate.python_search(M.sysname, vim.env)
  for _, python in ipairs(locate.pythons(search, M.sysname, vim.env, runnable)) do
    local found = python_version(python.cmd)
    if found and vim.version.ge(found, M.MIN_PYTHON) then
      return python.cmd, seen
    end
    table.insert(seen, ('%s is %s'):format(python.label, found or 'not runnable'))
  end
  return nil, seen
end

--- What pip installs: the checkout the plugin is part of; a plugin installed without it
--- (a rock) takes the server of its version from the package index.
---@return string
function M.source()
  local root = M.root()
  local pyproject = vim.fs.joinpath(root, 'pyproject.toml')
  if
    vim.fn.filereadable(pyproject) == 1
    and table.concat(vim.fn.readfile(pyproject, '', 20), '\n'):find('name = "acp-lsp"', 1, true)
  then
    return root
  end
  return 'acp-lsp==' .. version
end

--- How to install: uv when it is on PATH, else python -m venv + pip; nil and why it cannot.
---@return {method: string, steps: string[][]}? plan, string? err
function M.plan()
  local source, venv = M.source(), M.venv()
  local uv = locate.find_tool('uv', M.sysname, vim.env, runnable)
  if uv then
    -- --reinstall-package: a checkout updated at the same version is installed again.
    return {
      method = 'uv',
      steps = {
        { uv, 'venv', '--quiet', '--allow-existing', '--python', '>=' .. M.MIN_PYTHON, venv },
        {
          uv,
          'pip',
          'install',
          '--quiet',
          '--python',
          bin('python'),
          '--reinstall-package',
          'acp-lsp',
          source,
        },
      },
    }
  end
  local python, seen = M.find_python()
  if not python then
    local advice = locate.python_advice(M.sysname)
    return nil,
      ('it needs uv or Python %s+ on PATH, and there is neither%s%s'):format(
        M.MIN_PYTHON,
        #seen > 0 and (' (' .. table.concat(seen, ', ') .. ')') or '',
        advice and ('; install ' .. advice) or ''
      )
  end
  -- pip installs a local directory again even at the same version.
  return {
    method = 'venv',
    steps = {
      vim.list_extend(vim.deepcopy(python), { '-m', 'venv', venv }),
      { bin('python'), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', source },
    },
  }
end

local waiting = nil ---@type fun(ok: boolean, message: string)[]?

local function finish(ok, message)
  local cbs = waiting or {}
  waiting = nil
  log.notify(message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
  for _, cb in ipairs(cbs) do
    cb(ok, message)
  end
end

--- The installed server's `--version` ("acp-lsp 0.1.0"), or nil and the error.
---@param cmd string[]
---@return string? version, string? err
function M.server_version(cmd)
  local ok, proc = pcall(vim.system, vim.list_extend(vim.deepcopy(cmd), { '--version' }), { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local res = proc:wait(10000)
  if res.code ~= 0 then
    return nil, vim.trim((res.stderr or '') .. (res.stdout or ''))
  end
  return vim.trim(res.stdout or '')
end

local function installed(plan)
  vim.fn.writefile(
    { vim.json.encode({ version = version, method = plan.method, source = M.source() }) },
    stamp_file()
  )
  -- Later starts without `cmd` in setup() use it.
  if not require('acp_lsp.config').options.cmd then
    vim.lsp.config('acp_lsp', { cmd = { M.exe() } })
  end
  local said, err = M.server_version({ M.exe() })
  if not said then
    return finish(false, 'the installed server does not run: ' .. tostring(err))
  end
  local running = require('acp_lsp.client').get() and '; the running server stays until Neovim restarts' or ''
  finish(true, ('server %s installed with %s in %s%s'):format(said, plan.method, M.venv(), running))
end

--- Install (or reinstall) the server at the plugin's version; cb(ok, message) on the main loop.
--- A call while an install runs waits for that one.
---@param cb? fun(ok: boolean, message: string)
function M.run(cb)
  cb = cb or function() end
  if waiting then
    table.insert(waiting, cb)
    return
  end
  waiting = { cb }
  local plan, err = M.plan()
  if not plan then
    return finish(false, 'cannot install the server: ' .. err)
  end
  vim.fn.mkdir(M.dir(), 'p')
  log.notify(
    ('installing the server (acp-lsp %s) with %s into %s ...'):format(version, plan.method, M.venv())
  )
  local i = 0
  local function step(res)
    if res and res.code ~= 0 then
      local out = vim.trim((res.stderr or '') .. '\n' .. (res.stdout or ''))
      return finish(
        false,
        ('installing the server failed: %s:\n%s'):format(table.concat(plan.steps[i], ' '), out)
      )
    end
    i = i + 1
    if not plan.steps[i] then
      return installed(plan)
    end
    log.add('info', '$ ' .. table.concat(plan.steps[i], ' '))
    local ok, spawn_err = pcall(vim.system, plan.steps[i], { text = true }, vim.schedule_wrap(step))
    if not ok then
      finish(false, ('installing the server failed: %s: %s'):format(plan.steps[i][1], tostring(spawn_err)))
    end
  end
  step(nil)
end

--- The lazy.nvim `build` step: installs and returns when done, raising an error on failure.
--- Nothing to do when setup() sets `cmd` (the user's own server).
function M.build()
  local cmd = require('acp_lsp.config').options.cmd
  if cmd then
    log.add('info', 'no server install: setup() sets cmd = ' .. table.concat(cmd, ' '))
    return
  end
  local result ---@type {ok: boolean, message: string}?
  M.run(function(ok, message)
    result = { ok = ok, message = message }
  end)
  -- Inside lazy.nvim's task, yield to it; elsewhere wait with events flowing.
  local has_lazy, async = pcall(require, 'lazy.async')
  local task = has_lazy and async.running()
  while not result do
    if task then
      async.sleep(100)
    else
      vim.wait(100)
    end
  end
  if not result.ok then
    error('acp_lsp: ' .. result.message, 0)
  end
end

--- How version `a` compares with `b`: 'older', 'newer' or nil (the same, or not versions).
local function compare(a, b)
  local ok, c = pcall(vim.version.cmp, a, b)
  if ok and c ~= 0 then
    return c < 0 and 'older' or 'newer'
  end
end

--- What is wrong between the plugin and the server that answered `initialize`: another acp
--- protocol version, another server version, or no version said. Empty when they agree.
---@param result table? the InitializeResult
---@return string[]
function M.mismatches(result)
  local problems = {}
  local needs = require('acp_lsp.protocol').VERSION
  local speaks = vim.tbl_get(result or {}, 'capabilities', 'experimental', 'acp', 'version')
  if type(speaks) ~= 'number' then
    table.insert(problems, 'the server does not say its acp protocol version: run :Acp install')
  elseif speaks ~= needs then
    local side = speaks < needs and 'older' or 'newer'
    table.insert(
      problems,
      ('the server speaks acp protocol %d, %s than the %d this plugin needs: %s'):format(
        speaks,
        side,
        needs,
        side == 'newer' and 'update the plugin' or 'run :Acp install'
      )
    )
  end
  local server = vim.tbl_get(result or {}, 'serverInfo', 'version')
  if type(server) ~= 'string' then
    table.insert(problems, 'the server did not say its version (serverInfo.version)')
  elseif server ~= version then
    local side = compare(server, version)
    table.insert(
      problems,
      ('the server is acp-lsp %s, %s this plugin (%s): %s'):format(
        server,
        side and side .. ' than' or 'not the version of',
        version,
        side == 'newer' and 'update the plugin' or 'run :Acp install'
      )
    )
  end
  return problems
end

--- Warn (once per start) about mismatches(result).
---@param result table?
function M.check_server(result)
  for _, problem in ipairs(M.mismatches(result)) do
    log.notify(problem, vim.log.levels.WARN)
  end
end

--- Install first when needed (M.needed()), then cb(true); cb(false, message) if that failed.
---@param cb fun(ok: boolean, message: string?)
function M.ensure(cb)
  if not M.needed() then
    return cb(true)
  end
  M.run(cb)
end

return M
