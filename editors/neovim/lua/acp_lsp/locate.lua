--- Where the server installer's tools are on each platform (issue 36): a program on PATH
--- (`.exe` on Windows), the Pythons that can make the private venv (the `py -3` launcher on
--- Windows; Homebrew's and python.org's on macOS), the folders installers put uv in, and a
--- venv's programs (`Scripts/*.exe` on Windows, `bin/*` elsewhere). Pure: the platform
--- (`vim.uv.os_uname().sysname`), the environment (`vim.env` or a table) and a "does this file
--- exist and run" check come in, so each platform is unit-tested on any machine with a fake
--- file system. Paths are built with vim.fs.joinpath, which on Windows writes `/` (Windows takes
--- it), so Windows values from the environment are read with `/` too. Linux searches PATH only,
--- in the same order as before.
local M = {}

local VERSIONS = { '3.14', '3.13', '3.12', '3.11' }

--- Tried on Linux, by name on PATH, in this order (as before issue 36).
M.LINUX_PYTHONS = { 'python3', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python' }

local HOMEBREW_PREFIXES = { '/opt/homebrew', '/usr/local' } -- Apple silicon, Intel (and python.org's links)
local FRAMEWORKS = '/Library/Frameworks/Python.framework'
--- Apple's /usr/bin/python3 is Python 3.9 at best and, without the developer tools, opens a
--- dialog asking to install them: a name on PATH never resolves to it.
local MAC_STUBS = { ['/usr/bin/python3'] = true, ['/usr/bin/python'] = true }

---@param sysname string
---@return boolean
function M.is_windows(sysname)
  return sysname == 'Windows_NT'
end

--- An environment variable; on Windows with `/` for `\` (as vim.fs.joinpath writes paths there).
---@param env table<string, string?>
---@param name string
---@param sysname string
---@return string?
local function getenv(env, name, sysname)
  local value = env[name]
  if value == nil or value == '' then
    return nil
  end
  return M.is_windows(sysname) and (value:gsub('\\', '/')) or value
end

---@param path string
---@param sysname string
---@return boolean
function M.is_absolute(path, sysname)
  if M.is_windows(sysname) then
    return path:match('^%a:[/\\]') ~= nil or path:match('^[/\\][/\\]') ~= nil
  end
  return path:sub(1, 1) == '/'
end

---@param sysname string
---@param env table<string, string?>
---@return string[]
local function path_dirs(sysname, env)
  local win = M.is_windows(sysname)
  local dirs = {}
  for _, dir in ipairs(vim.split(getenv(env, 'PATH', sysname) or '', win and ';' or ':', { plain = true })) do
    dir = win and dir:gsub('^"(.*)"$', '%1') or dir -- Windows allows quoted entries
    if dir ~= '' then
      table.insert(dirs, dir)
    end
  end
  return dirs
end

--- The file names `name` may have: on Windows `.exe` or `.com` (what starts without a shell).
local function file_names(name, sysname)
  if not M.is_windows(sysname) or name:lower():match('%.exe$') or name:lower():match('%.com$') then
    return { name }
  end
  return { name .. '.com', name .. '.exe' }
end

--- The first `name` in `dirs` that exists, or nil.
---@param dirs string[]
---@param name string
---@param sysname string
---@param exists fun(file: string): boolean
---@return string?
function M.look_in(dirs, name, sysname, exists)
  for _, dir in ipairs(dirs) do
    for _, file in ipairs(file_names(name, sysname)) do
      local candidate = vim.fs.joinpath(dir, file)
      if exists(candidate) then
        return candidate
      end
    end
  end
end

--- The program `name` on the PATH of `env`, or nil.
---@param name string
---@param sysname string
---@param env table<string, string?>
---@param exists fun(file: string): boolean
---@return string?
function M.which(name, sysname, env, exists)
  return M.look_in(path_dirs(sysname, env), name, sysname, exists)
end

--- Folders searched after PATH on macOS and Windows: where Homebrew and uv's installer put
--- programs (a Neovim started from a GUI may lack the shell's PATH). None on Linux.
---@param sysname string
---@param env table<string, string?>
---@return string[]
function M.usual_bin_dirs(sysname, env)
  local home = getenv(env, M.is_windows(sysname) and 'USERPROFILE' or 'HOME', sysname)
  local dirs = {}
  if sysname == 'Darwin' then
    for _, prefix in ipairs(HOMEBREW_PREFIXES) do
      table.insert(dirs, vim.fs.joinpath(prefix, 'bin'))
    end
  elseif not M.is_windows(sysname) then
    return dirs
  end
  if home then
    table.insert(dirs, vim.fs.joinpath(home, '.local', 'bin'))
    table.insert(dirs, vim.fs.joinpath(home, '.cargo', 'bin'))
  end
  return dirs
end

--- A tool (uv): on PATH, else (macOS, Windows) in the usual folders.
---@return string?
function M.find_tool(name, sysname, env, exists)
  return M.which(name, sysname, env, exists)
    or M.look_in(M.usual_bin_dirs(sysname, env), name, sysname, exists)
end

--- What to try for a Python, in order: command lines whose first word is a name on PATH or an
--- absolute file.
--- - Linux: M.LINUX_PYTHONS on PATH.
--- - macOS: the versioned names on PATH, Homebrew's (/opt/homebrew/bin, /usr/local/bin), the
---   python.org framework builds, then python3 and python on PATH (never Apple's stub).
--- - Windows: `py -3` (on PATH, or where a per-user install puts the launcher), python3 and
---   python on PATH, then python.org's per-user and all-users folders, newest first.
---@param sysname string
---@param env table<string, string?>
---@return string[][]
function M.python_search(sysname, env)
  local search = {}
  local function add(...)
    table.insert(search, { ... })
  end
  if M.is_windows(sysname) then
    local localappdata, programs = getenv(env, 'LOCALAPPDATA', sysname), getenv(env, 'ProgramFiles', sysname)
    add('py', '-3')
    if localappdata then
      add(vim.fs.joinpath(localappdata, 'Programs', 'Python', 'Launcher', 'py.exe'), '-3')
    end
    add('python3')
    add('python')
    for _, v in ipairs(VERSIONS) do
      local dir = 'Python' .. v:gsub('%.', '')
      if localappdata then
        add(vim.fs.joinpath(localappdata, 'Programs', 'Python', dir, 'python.exe'))
      end
      if programs then
        add(vim.fs.joinpath(programs, dir, 'python.exe'))
      end
    end
  elseif sysname == 'Darwin' then
    for _, v in ipairs(VERSIONS) do
      add('python' .. v)
    end
    for _, prefix in ipairs(HOMEBREW_PREFIXES) do
      for _, v in ipairs(VERSIONS) do
        add(vim.fs.joinpath(prefix, 'bin', 'python' .. v))
      end
      add(vim.fs.joinpath(prefix, 'bin', 'python3'))
    end
    for _, v in ipairs(VERSIONS) do
      add(vim.fs.joinpath(FRAMEWORKS, 'Versions', v, 'bin', 'python3'))
    end
    add('python3')
    add('python')
  else
    for _, name in ipairs(M.LINUX_PYTHONS) do
      add(name)
    end
  end
  return search
end

--- The Pythons of `search` that are there, in order, each once: `cmd` with the name resolved on
--- PATH (on macOS never to Apple's stub) or the absolute file that exists, and `label`, the
--- command line as searched (for messages).
---@param search string[][]
---@param sysname string
---@param env table<string, string?>
---@param exists fun(file: string): boolean
---@return {cmd: string[], label: string}[]
function M.pythons(search, sysname, env, exists)
  local found, seen = {}, {}
  for _, spec in ipairs(search) do
    local first = spec[1]
    local absolute = M.is_absolute(first, sysname)
    local file ---@type string?
    if absolute then
      file = exists(first) and first or nil
    else
      file = M.which(first, sysname, env, exists)
    end
    if file and not (sysname == 'Darwin' and not absolute and MAC_STUBS[file]) then
      local cmd = vim.list_extend({ file }, spec, 2)
      local key = table.concat(cmd, '\0')
      key = sysname == 'Linux' and key or key:lower()
      if not seen[key] then
        seen[key] = true
        table.insert(found, { cmd = cmd, label = table.concat(spec, ' ') })
      end
    end
  end
  return found
end

--- How to get a Python 3.11+ (or uv) there; nil on Linux (the message stays as it was).
---@param sysname string
---@return string?
function M.python_advice(sysname)
  if M.is_windows(sysname) then
    return "python.org's installer (with the py launcher), or winget install Python.Python.3.13"
  elseif sysname == 'Darwin' then
    return "brew install python@3.13 or uv, or python.org's installer"
  end
end

--- A program of a venv: `Scripts/name.exe` on Windows, `bin/name` elsewhere.
---@param venv string
---@param name string
---@param sysname string
---@return string
function M.venv_bin(venv, name, sysname)
  if M.is_windows(sysname) then
    return vim.fs.joinpath(venv, 'Scripts', name .. '.exe')
  end
  return vim.fs.joinpath(venv, 'bin', name)
end

return M
