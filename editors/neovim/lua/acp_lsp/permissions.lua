--- Permission prompts (acp/requestPermission). Several can be pending at once; they are
--- asked one after another through vim.ui.select, each gets exactly one answer, and the
--- ones of a session that is cancelled or ends are answered `cancelled`.
local sessions = require('acp_lsp.sessions')

local M = {}

---@type acp_lsp.PendingPermission[]
local queue = {}
local asking = nil ---@type acp_lsp.PendingPermission?

local CANCELLED = { outcome = { outcome = 'cancelled' } }

local function describe(entry)
  local tc = entry.tool_call or {}
  local what = tc.title or tc.toolCallId or 'tool call'
  local kind = tc.kind and ('[' .. tc.kind .. '] ') or ''
  local where = {}
  for _, loc in ipairs(tc.locations or {}) do
    if loc.path then
      table.insert(where, vim.fn.fnamemodify(loc.path, ':~:.') .. (loc.line and (':' .. loc.line) or ''))
    end
  end
  local suffix = #where > 0 and (' (' .. table.concat(where, ', ') .. ')') or ''
  return ('Agent asks: %s%s%s'):format(kind, what, suffix)
end

local pump

--- Answer a pending request once; later calls are ignored.
---@param entry acp_lsp.PendingPermission
---@param result table
local function answer(entry, result)
  if entry.done then
    return
  end
  entry.done = true
  for i, e in ipairs(queue) do
    if e == entry then
      table.remove(queue, i)
      break
    end
  end
  local session = sessions.by_id[entry.session_id]
  if session then
    session.permissions[entry.tool_call_id or ''] = nil
    if entry.tool_call_id then
      sessions.touch_tool_call(session, entry.tool_call_id)
    end
    sessions.emit(session, { type = 'header' })
  end
  -- Resume on the next tick: a synchronous vim.ui.select may answer before we yielded.
  vim.schedule(function()
    coroutine.resume(entry.co, result)
  end)
end

---@param entry acp_lsp.PendingPermission
---@param option_id string?
function M.answer(entry, option_id)
  if option_id then
    answer(entry, { outcome = { outcome = 'selected', optionId = option_id } })
  else
    answer(entry, CANCELLED)
  end
end

pump = function()
  if asking and not asking.done then
    return
  end
  asking = nil
  local entry = queue[1]
  if not entry then
    return
  end
  asking = entry
  vim.cmd('redraw') -- show the tool call's "awaiting permission" before a modal picker
  vim.ui.select(entry.options, {
    prompt = describe(entry),
    kind = 'acp_permission',
    format_item = function(option)
      return option.name or option.optionId
    end,
  }, function(choice)
    M.answer(entry, choice and choice.optionId or nil)
    if asking == entry then
      asking = nil
    end
    vim.schedule(pump)
  end)
end

--- Handler body; must run inside the server-request coroutine.
---@param params table {sessionId, toolCall, options}
---@return table result
function M.request(params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return CANCELLED
  end
  local tool_call = params.toolCall or {}
  ---@type acp_lsp.PendingPermission
  local entry = {
    session_id = params.sessionId,
    tool_call = tool_call,
    tool_call_id = tool_call.toolCallId,
    options = params.options or {},
    co = co,
    done = false,
  }
  table.insert(queue, entry)
  local session = sessions.by_id[params.sessionId]
  if session then
    session.permissions[entry.tool_call_id or ''] = entry
    if entry.tool_call_id then
      sessions.touch_tool_call(session, entry.tool_call_id)
    end
    sessions.emit(session, { type = 'header' })
  end
  vim.schedule(pump)
  return coroutine.yield()
end

--- Pending requests of a session (or all), oldest first.
---@param session_id string?
---@return acp_lsp.PendingPermission[]
function M.pending(session_id)
  return vim.tbl_filter(function(e)
    return session_id == nil or e.session_id == session_id
  end, queue)
end

--- The server is gone: nobody waits for the answers any more.
function M.drop_all()
  for _, entry in ipairs(queue) do
    entry.done = true
    local session = sessions.by_id[entry.session_id]
    if session then
      session.permissions[entry.tool_call_id or ''] = nil
    end
  end
  queue = {}
  asking = nil
end

--- A session stopped waiting: its open prompts are answered `cancelled`.
---@param params table acp/sessionStatus params
function M.on_status(params)
  if params.status == 'running' or params.status == 'awaiting_permission' then
    return
  end
  for _, entry in ipairs(M.pending(params.sessionId)) do
    answer(entry, CANCELLED)
  end
  if asking and asking.done then
    asking = nil
    vim.schedule(pump)
  end
end

return M
