--- The one acp_lsp language client: find it, start it on demand, send acp/* requests.
local config = require('acp_lsp.config')

local M = {}

M.NAME = 'acp_lsp'
local INIT_TIMEOUT_MS = 30000

---@return vim.lsp.Client?
function M.get()
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    if not client:is_stopped() then
      return client
    end
  end
end

--- Buffers the server should see (didOpen/didChange): real files, loaded.
---@param buf integer
---@return boolean
local function is_file_buffer(buf)
  return vim.api.nvim_buf_is_loaded(buf)
    and vim.bo[buf].buftype == ''
    and vim.api.nvim_buf_get_name(buf) ~= ''
end

--- Attach a buffer to the running client (idempotent); returns whether it is attached.
---@param buf integer
---@param client vim.lsp.Client?
---@return boolean
function M.attach(buf, client)
  client = client or M.get()
  if not client or not is_file_buffer(buf) then
    return false
  end
  return vim.lsp.buf_attach_client(buf, client.id)
end

--- Attach every file buffer, now and later, to the client (also the ones without a
--- filetype, which vim.lsp.enable() skips: the server reads open buffers).
---@param client vim.lsp.Client
function M.attach_all(client)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(buf, client)
  end
  -- Files without a filetype get no FileType event, so vim.lsp.enable() would skip them.
  local group = vim.api.nvim_create_augroup('acp_lsp.attach', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
end

---@return vim.lsp.ClientConfig? cfg, string? err
local function resolved_config()
  local cfg = vim.lsp.config[M.NAME]
  if not cfg then
    return nil, 'no vim.lsp config named acp_lsp (is editors/neovim on runtimepath?)'
  end
  cfg = vim.deepcopy(cfg)
  cfg.name = M.NAME
  if type(cfg.root_dir) == 'function' or cfg.root_dir == nil then
    cfg.root_dir = config.root_for(0)
  end
  local cmd = cfg.cmd
  if type(cmd) == 'table' and vim.fn.executable(cmd[1]) == 0 then
    return nil,
      ('acp-lsp server not found: %q is not executable. Run :Acp install or set `cmd` in '):format(cmd[1])
        .. "require('acp_lsp').setup()."
  end
  return cfg
end

local waiting = {} ---@type fun(client: vim.lsp.Client?, err: string?)[]
local timer = nil ---@type uv.uv_timer_t?

local function flush(client, err)
  local cbs = waiting
  waiting = {}
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
  for _, cb in ipairs(cbs) do
    cb(client, err)
  end
end

--- Call cb(client) once a client is running and initialized, starting one if needed;
--- cb(nil, message) if it cannot start.
---@param cb fun(client: vim.lsp.Client?, err: string?)
function M.with_client(cb)
  local client = M.get()
  if client and client.initialized then
    cb(client)
    return
  end
  if not client and require('acp_lsp.install').needed() then
    -- The first start without a server (or after a plugin update): install it, then start.
    require('acp_lsp.install').run(function(ok, message)
      if ok then
        M.with_client(cb)
      else
        cb(nil, message)
      end
    end)
    return
  end
  if not client then
    local cfg, err = resolved_config()
    if not cfg then
      cb(nil, err)
      return
    end
    local id = vim.lsp.start(cfg, { attach = false })
    client = id and vim.lsp.get_client_by_id(id)
    if not client then
      cb(nil, 'acp-lsp failed to start (see :LspLog)')
      return
    end
  end
  M.attach_all(client)
  table.insert(waiting, cb)
  if timer then
    return
  end
  local started = vim.uv.now()
  timer = assert(vim.uv.new_timer())
  timer:start(
    10,
    20,
    vim.schedule_wrap(function()
      if not timer then
        return
      end
      if client.initialized then
        flush(client)
      elseif client:is_stopped() then
        flush(nil, 'acp-lsp exited during startup (see :Acp log and :LspLog)')
      elseif vim.uv.now() - started > INIT_TIMEOUT_MS then
        flush(nil, 'acp-lsp did not finish initialize in time')
      end
    end)
  )
end

--- One-line description of an LSP error response.
---@param err table
---@return string
function M.format_error(err)
  local msg = err.message or vim.inspect(err)
  local data = err.data
  if type(data) == 'table' then
    if data.agents then
      msg = msg .. ' (agents: ' .. table.concat(data.agents, ', ') .. ')'
    elseif data.message then
      msg = msg .. ': ' .. tostring(data.message)
    end
  end
  return msg
end

--- A response handler that reports a failed request: fail('new session')(err).
---@param what string
---@return fun(err: table)
function M.fail(what)
  return function(err)
    require('acp_lsp.log').notify(what .. ': ' .. M.format_error(err), vim.log.levels.ERROR)
  end
end

--- Send an acp/* request. cb(err, result) runs on the main loop after every notification
--- that arrived before the response (the server sends a turn's updates before its result).
---@param method string
---@param params table
---@param cb? fun(err: table?, result: any)
function M.request(method, params, cb)
  if not cb then
    cb = function(err)
      if err then
        vim.notify('acp: ' .. method .. ': ' .. M.format_error(err), vim.log.levels.ERROR)
      end
    end
  end
  if next(params) == nil then
    params = vim.empty_dict() -- `{}` on the wire, not `[]`
  end
  M.with_client(function(client, start_err)
    if not client then
      cb({ code = -32099, message = start_err })
      return
    end
    local ok = client:request(method, params, function(err, result)
      vim.schedule(function()
        cb(err, result)
      end)
    end, 0)
    if not ok then
      cb({ code = -32099, message = 'acp-lsp is not running' })
    end
  end)
end

---@param method string
---@param params table
function M.notify(method, params)
  local client = M.get()
  if client then
    client:notify(method, params)
  end
end

return M
